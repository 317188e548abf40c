"""The code graph's build lock, and the detached builder that takes a cold build off
``cue index``'s path.

Every sync of the graph (:meth:`.service.CodeIntel.sync`, in any process: ``cue index``,
an MCP server, the board, ``cue graph``) holds ``.cuedeck/.cache/graph.lock``, so two
processes never write the graph at once. One that finds it held waits (:func:`build_lock`),
telling its caller's progress listener how far the holder got, then syncs what is left
(little or nothing).

When a refresh leaves more than ``[code] graph_background_files`` files for the graph to
read, ``cue index`` starts the builder instead of building (``python -m
cuedeck_code.intel.detached ROOT``, in a session of its own, like the detached embedder):
it takes the lock without waiting (a second one exits at once), syncs, writes its state
to ``.cuedeck/.cache/graph.json`` (pid, phase, done, total) about every second and its
log to ``graph.log``, and exits. ``cue status``, ``cue doctor`` and the board list it
(:func:`listed`).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import TYPE_CHECKING, Any, Protocol

from cuedeck.layout import CACHE_DIR
from cuedeck.system.jobs import JobState, run_once, start_job

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from cuedeck.models import BackgroundProcess, Problem
    from cuedeck.workspace import Workspace

LOCK = f"{CACHE_DIR}/graph.lock"
STATE = f"{CACHE_DIR}/graph.json"
LOG = f"{CACHE_DIR}/graph.log"
#: Problem code of the builder's line in ``cue doctor`` (docs/errors.md).
BUILDER_CODE = 1102
#: How long a sync waits for another process's build before it fails (1007, naming the
#: holder): a cold build of a large project takes about a minute of wall time.
WAIT_SECONDS = 1800.0
#: How often a waiting sync looks at the builder's state, to tell its progress.
LOOK_SECONDS = 0.5
#: The message of the progress a waiting sync reports.
WAITING = "Waiting for the code graph build"
#: The builder's phases, by the progress message of the work under way.
PHASES = {"Reading the code graph": "reading", "Resolving the code graph": "resolving"}


def running(root: Path) -> bool:
    """Whether a process holds the workspace's graph lock now (a build is under way)."""
    from cuedeck.writes import is_locked

    return is_locked(root / LOCK)


def state(root: Path) -> dict[str, Any]:
    """What the builder last wrote (empty when it never ran); ``state`` is ``stopped``
    when it said ``running`` and no process holds the lock (it was killed)."""
    try:
        data = json.loads((root / STATE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    if data.get("state") == "running" and not running(root):
        data["state"] = "stopped"
    return data


@contextlib.contextmanager
def build_lock(root: Path) -> Iterator[None]:
    """Hold the graph lock for a sync, waiting for another process's build first and
    reporting its progress meanwhile (:func:`cuedeck.progress.report`, message
    :data:`WAITING`)."""
    from cuedeck.errors import LockError
    from cuedeck.progress import report
    from cuedeck.writes import locked

    path = root / LOCK
    waited = 0.0
    with contextlib.ExitStack() as held:
        while True:
            try:
                held.enter_context(locked(path, timeout=LOOK_SECONDS))
                break
            except LockError:
                waited += LOOK_SECONDS
                if waited >= WAIT_SECONDS:
                    raise
                found = state(root)
                total = int(found.get("total") or 0)
                report(int(found.get("done") or 0) if total else 0, total or None, WAITING)
        if waited:
            report(1, 1, WAITING)
        yield


def start(root: Path) -> int:
    """Start the detached builder of the workspace at ``root``; its pid."""
    return start_job("cuedeck_code.intel.detached", root, root / LOG)


class Weighed(Protocol):
    """What :func:`detach` asks of the graph (:class:`.service.CodeIntel`)."""

    @property
    def workspace(self) -> Workspace: ...

    def pending(self) -> int: ...

    def code_files(self) -> int: ...


def detach(intel: Weighed) -> dict[str, int] | None:
    """Start the detached builder when a sync of ``intel`` would read more files than
    ``[code] graph_background_files``: its ``pid``, the ``pending`` files and the code
    ``files``; None when the sync is small enough to run in the caller."""
    from cuedeck_code.settings import CodeSettings

    workspace = intel.workspace
    limit = workspace.config.section("code", CodeSettings).graph_background_files
    waiting = intel.pending()
    if waiting <= limit:
        return None
    found = state(workspace.root)  # one runs already (a second would exit at once): it
    if found.get("state") == "running" and isinstance(found.get("pid"), int):
        return {"pid": found["pid"], "pending": waiting, "files": intel.code_files()}
    return {"pid": start(workspace.root), "pending": waiting, "files": intel.code_files()}


def doctor_check(workspace: Workspace) -> list[Problem]:
    """``cue doctor``'s line about the detached builder: while it runs, and when it
    stopped or failed and the graph is still behind the index (any later sync that
    finished the build clears it)."""
    from cuedeck.models import Problem

    found = state(workspace.root)
    total = int(found.get("total") or 0)
    where = f"{found.get('phase', 'starting')} {found.get('done', 0)}/{total}" if total else ""
    if found.get("state") == "running":
        message = f"building the code graph in the background: {where or 'starting'}"
        return [Problem("warning", BUILDER_CODE, LOG, None, f"{message} (pid {found['pid']})")]
    if found.get("state") not in ("stopped", "failed"):
        return []
    left = workspace.service("code_intel").pending()
    if not left:
        return []
    why = f": {found['error']}" if found.get("error") else ""
    at = f" at {where}" if where else ""
    return [
        Problem(
            "warning",
            BUILDER_CODE,
            LOG,
            None,
            f"the background code graph builder {found['state']}{at}{why}; "
            f"{left} files are not in the graph yet",
            "the next question to the graph (`cue graph`, a scip_* tool, a scene) builds "
            "the rest, or run `cue index --graph-wait`",
        )
    ]


def listed(workspace: Workspace) -> list[BackgroundProcess]:
    """The detached builder, while it runs (for ``cue status``, ``cue doctor``, the board)."""
    from cuedeck.models import BackgroundProcess

    found = state(workspace.root)
    if found.get("state") != "running" or not isinstance(found.get("pid"), int):
        return []
    total = int(found.get("total") or 0)
    phase = str(found.get("phase") or "starting")
    progress = f"{phase} {found.get('done', 0)}/{total}" if total else phase
    ends = f"when the code graph is built ({progress})"
    detail = "builds the code graph (callers, references, impact) off `cue index`'s path"
    return [BackgroundProcess("code graph", found["pid"], found.get("started"), ends, detail, LOG)]


# -- the process ---------------------------------------------------------------------------


class _State(JobState):
    """Writes the state file at each new phase and about once a second within one."""

    def __init__(self, root: Path) -> None:
        super().__init__(root / STATE, phase="starting", done=0, total=0)

    def __call__(self, done: float, total: float | None, message: str) -> None:
        phase = PHASES.get(message)
        if phase is None:
            return
        new = phase != self.data["phase"]
        self.data.update(phase=phase, done=int(done), total=int(total or 0))
        if new or self.due():
            print(f"{message}: {int(done)}/{int(total or 0)}", flush=True)
            self.write()


def run(root: Path) -> int:
    """Build the code graph of the workspace at ``root``; the exit status."""
    busy = f"another process builds the code graph of {root}"
    return run_once(root / LOCK, lambda: _build(root), busy)


def _build(root: Path) -> int:
    from cuedeck import open_workspace
    from cuedeck.progress import reporting_to

    written = _State(root)
    try:
        written.write()
        print(f"building the code graph of {root} (pid {os.getpid()})", flush=True)
        intel = open_workspace(root).service("code_intel")
        with reporting_to(written):
            stats = intel.sync(locked=True)
        written.write(state="finished", phase="done", files=stats.files, read=stats.read)
        print(f"built: {stats.read} files read in {stats.seconds:.1f}s", flush=True)
        return 0
    except Exception as exc:  # recorded; the next sync (any process) does the rest
        written.write(state="failed", error=str(exc)[:500])
        print(f"failed: {exc}", flush=True)
        return 1


if __name__ == "__main__":  # pragma: no cover (run as a process by the tests)
    from pathlib import Path

    sys.exit(run(Path(sys.argv[1])))
