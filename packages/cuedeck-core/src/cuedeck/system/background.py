"""What runs in the background for a workspace: every plugin's processes, in one list.

``cue status``, ``cue doctor`` and the board show the same list: each process with its
pid, its age and how it ends (plugins describe their own through ``register_processes``).
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cuedeck.models import BackgroundProcess
    from cuedeck.workspace import Workspace

log = logging.getLogger("cuedeck")


def background_processes(workspace: Workspace) -> list[BackgroundProcess]:
    """Every process the installed plugins run in the background for ``workspace``, by
    kind and pid; a lister that fails is logged and skipped (a listing must not fail)."""
    from cuedeck.plugins.host import get_processes

    found: list[BackgroundProcess] = []
    for name, lister in get_processes(workspace.plugins).items():
        try:
            found.extend(lister(workspace))
        except Exception as exc:  # a plugin's bug must not hide the other processes
            log.warning("listing %s processes failed: %s: %s", name, type(exc).__name__, exc)
    return sorted(found, key=lambda process: (process.kind, process.pid))


def duration(seconds: float) -> str:
    """``seconds`` as a person reads it: ``40 s``, ``12 min``, ``2 h 5 min``."""
    if seconds < 90:
        return f"{max(round(seconds), 0)} s"
    minutes = round(seconds / 60)
    if minutes < 120:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60} min"


def describe(process: BackgroundProcess, now: float | None = None) -> str:
    """One line: ``watcher (pid 4242, 3 min old): ends after 15 min without a question``."""
    age = ""
    if process.started is not None:
        age = f", {duration((now or time.time()) - process.started)} old"
    detail = f"; {process.detail}" if process.detail else ""
    return f"{process.kind} (pid {process.pid}{age}): ends {process.ends}{detail}"


def process_json(process: BackgroundProcess, now: float | None = None) -> dict[str, Any]:
    """``process`` as JSON, with its age in seconds."""
    age = None
    if process.started is not None:
        age = round((now or time.time()) - process.started, 1)
    return {
        "kind": process.kind,
        "pid": process.pid,
        "age_seconds": age,
        "ends": process.ends,
        "detail": process.detail,
        "log": process.log,
    }
