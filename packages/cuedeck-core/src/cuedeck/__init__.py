"""CueDeck: working context for AI coding agents.

``open_workspace()`` is the entry point of the Python API; plugins implement the hooks
of :mod:`cuedeck.hookspecs` with :data:`hookimpl`. The workspace machinery is imported
on first use, so that ``cue --help`` stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cuedeck.errors import CueError
from cuedeck.hookspecs import hookimpl

if TYPE_CHECKING:
    from cuedeck.workspace import Workspace, open_workspace

#: The installed cuedeck-core's version, read from its metadata when first asked for.
__version__: str

__all__ = ["CueError", "Workspace", "__version__", "hookimpl", "open_workspace"]


def __getattr__(name: str) -> Any:
    if name in ("Workspace", "open_workspace"):
        from cuedeck import workspace

        return getattr(workspace, name)
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            found = version("cuedeck-core")
        except PackageNotFoundError:  # running from a source tree without installing
            found = "0.0.0"
        globals()["__version__"] = found
        return found
    raise AttributeError(f"module 'cuedeck' has no attribute {name!r}")
