"""What runs in the background for a workspace: every plugin's processes, in one list.

``cue status``, ``cue doctor`` and the board show the same list: each process with its
pid, its age and how it ends (plugins describe their own through ``register_processes``).
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from cuedeck.plugins.host import get_processes
from cuedeck.text import duration

if TYPE_CHECKING:
    from cuedeck.models import BackgroundProcess
    from cuedeck.workspace import Workspace

log = logging.getLogger("cuedeck")


def background_processes(workspace: Workspace) -> list[BackgroundProcess]:
    """Every process the installed plugins run in the background for ``workspace``, by
    kind and pid; a lister that fails is logged and skipped (a listing must not fail)."""
    found: list[BackgroundProcess] = []
    for name, lister in get_processes(workspace.plugins).items():
        try:
            found.extend(lister(workspace))
        except Exception as exc:  # a plugin's bug must not hide the other processes
            log.warning("listing %s processes failed: %s: %s", name, type(exc).__name__, exc)
    return sorted(found, key=lambda process: (process.kind, process.pid))


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


def watcher_processes(workspace: Workspace) -> list[BackgroundProcess]:
    """The workspace's watcher, when one runs (for ``cue status``)."""
    from cuedeck.models import BackgroundProcess
    from cuedeck.watch.watcher import LOG, status, supported

    found = status(workspace.root) if supported() else None
    if found is None:
        return []
    idle, quiet = float(found["idle"]), float(found["quiet"])
    ends = f"after {duration(idle)} without a question (quiet for {duration(quiet)})"
    detail = "tells commands which files changed, so that they need not walk the tree"
    return [BackgroundProcess("watcher", int(found["pid"]), found["started"], ends, detail, LOG)]
