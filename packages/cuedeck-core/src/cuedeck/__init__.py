"""CueDeck: working context for AI coding agents.

``open_workspace()`` is the entry point of the Python API; plugins implement the hooks
of :mod:`cuedeck.hookspecs` with :data:`hookimpl`. The workspace machinery is imported
on first use, so that ``cue --help`` stays fast.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

from cuedeck.errors import CueError
from cuedeck.hookspecs import hookimpl

if TYPE_CHECKING:
    from cuedeck.workspace import Workspace, open_workspace

try:
    __version__ = version("cuedeck-core")
except PackageNotFoundError:  # running from a source tree without installing
    __version__ = "0.0.0"

__all__ = ["CueError", "Workspace", "__version__", "hookimpl", "open_workspace"]


def __getattr__(name: str) -> Any:
    if name in ("Workspace", "open_workspace"):
        from cuedeck import workspace

        return getattr(workspace, name)
    raise AttributeError(f"module 'cuedeck' has no attribute {name!r}")
