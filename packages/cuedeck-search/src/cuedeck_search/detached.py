"""The detached embedder: one background process per workspace that embeds what is missing.

A ``cue search`` that finds sections without vectors embeds them in the foreground, with
progress, when that takes under :data:`FOREGROUND_SECONDS` (estimated from how fast this
model last embedded on this machine); otherwise it starts this process and answers at
once from the vectors there are. The process (``python -m cuedeck_search.detached
ROOT``) runs in its own session, outlives the command, and:

- holds ``.cuedeck/.cache/embedder.lock`` while it runs, so a workspace has one at most
  (a second one exits at once);
- embeds in chunks committed to the shared cache, so a killed run loses one chunk and
  the next run carries on (resumable);
- writes its state to ``.cuedeck/.cache/embedder.json`` (pid, done, total, rate) about
  every second, and its log to ``embedder.log`` beside it; ``cue doctor`` and the board
  show them (:func:`status`).
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import TYPE_CHECKING

import attrs

from cuedeck.layout import CACHE_DIR
from cuedeck.system.jobs import JobState, run_once, start_job

if TYPE_CHECKING:
    from pathlib import Path

    from cuedeck.models import BackgroundProcess, Problem
    from cuedeck.workspace import Workspace
    from cuedeck_search.results import Answer

#: A search embeds in the foreground when that should take at most this long.
FOREGROUND_SECONDS = 10.0
LOCK = f"{CACHE_DIR}/embedder.lock"
STATE = f"{CACHE_DIR}/embedder.json"
LOG = f"{CACHE_DIR}/embedder.log"
#: Problem code of the embedder's line in ``cue doctor`` (docs/errors.md).
EMBEDDER_CODE = 1201


@attrs.frozen
class Estimate:
    """How long embedding ``sections`` should take with ``model_id`` on this machine."""

    model_id: str
    sections: int
    per_second: float

    @property
    def seconds(self) -> float:
        """The estimated wall time."""
        return self.sections / self.per_second if self.per_second > 0 else float("inf")


@attrs.frozen
class EmbedderStatus:
    """What the detached embedder of a workspace is doing (or did last)."""

    running: bool
    state: str  # never, running, finished, stopped, failed
    pid: int | None = None
    started: float | None = None
    done: int = 0
    total: int = 0
    per_second: float | None = None
    updated: float | None = None
    error: str | None = None

    @property
    def seconds_left(self) -> float | None:
        """About how long the rest takes (None when not known)."""
        if not self.running or not self.per_second:
            return None
        return max(self.total - self.done, 0) / self.per_second


def running(root: Path) -> bool:
    """Whether a detached embedder holds the workspace's lock now."""
    from cuedeck.writes import is_locked

    return is_locked(root / LOCK)


def status(root: Path) -> EmbedderStatus:
    """The detached embedder's state, from its lock and its state file."""
    alive = running(root)
    try:
        data = json.loads((root / STATE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    state = str(data.get("state", "never"))
    if alive:
        state = "running"
    elif state == "running":  # the process went away without saying so: killed
        state = "stopped"
    return EmbedderStatus(
        running=alive,
        state=state,
        pid=data.get("pid"),
        started=data.get("started"),
        done=int(data.get("done", 0)),
        total=int(data.get("total", 0)),
        per_second=data.get("per_second"),
        updated=data.get("updated"),
        error=data.get("error"),
    )


def start(root: Path) -> int | None:
    """Start the detached embedder of the workspace at ``root`` unless one runs; its pid."""
    if running(root):
        return None
    return start_job("cuedeck_search.detached", root, root / LOG)


def embedding_note(answer: Answer, estimate: Estimate, *, where: str) -> str:
    """One sentence on what answered and what is still being embedded."""
    share = answer.semantic_coverage or 0.0
    side = {
        "keyword": "ranked by keyword alone",
        "semantic": "ranked by meaning among the embedded files",
    }.get(answer.answered_by, f"ranked by {answer.answered_by}")
    return (
        f"semantic coverage {share:.0%}: {side}; {estimate.sections} sections are being "
        f"embedded {where} (about {_duration(estimate.seconds)})"
    )


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(round(seconds), 1)} s"
    return f"{seconds / 60:.0f} min"


def doctor_check(workspace: Workspace) -> list[Problem]:
    """``cue doctor``'s line about the detached embedder, when one ran or runs."""
    from cuedeck.models import Problem

    found = status(workspace.root)
    if found.state == "never":
        return []
    if found.state == "running":
        left = found.seconds_left
        eta = f", about {_duration(left)} left" if left is not None else ""
        message = f"embedding in the background: {found.done}/{found.total} sections{eta}"
        return [Problem("warning", EMBEDDER_CODE, LOG, None, f"{message} (pid {found.pid})")]
    if found.state in ("stopped", "failed"):
        why = f": {found.error}" if found.error else ""
        return [
            Problem(
                "warning",
                EMBEDDER_CODE,
                LOG,
                None,
                f"the background embedder {found.state} at {found.done}/{found.total} "
                f"sections{why}",
                "the next semantic or hybrid `cue search` carries on, or run "
                "`cue index --semantic`",
            )
        ]
    return []


def listed(workspace: Workspace) -> list[BackgroundProcess]:
    """The detached embedder, while it runs (for ``cue status``)."""
    from cuedeck.models import BackgroundProcess

    found = status(workspace.root)
    if not found.running or found.pid is None:
        return []
    left = found.seconds_left
    eta = f", about {_duration(left)} left" if left is not None else ""
    progress = f"{found.done}/{found.total} done{eta}" if found.total else "starting"
    ends = f"when every section has a vector ({progress})"
    detail = "embeds sections for semantic and hybrid search"
    return [BackgroundProcess("embedder", found.pid, found.started, ends, detail, LOG)]


# -- the process ---------------------------------------------------------------------------


class _State(JobState):
    """Writes the state file, at most about once a second (and at the end)."""

    def __init__(self, root: Path) -> None:
        super().__init__(root / STATE, done=0)
        self.started = time.monotonic()

    def __call__(self, done: float, total: float | None, message: str) -> None:
        if message != "Embedding sections":
            return
        self.data.update(done=int(done), total=int(total or 0))
        elapsed = time.monotonic() - self.started
        if done and elapsed > 0:
            self.data["per_second"] = round(done / elapsed, 2)
        if done:  # a line per chunk in the log
            print(f"{message}: {int(done)}/{int(total or 0)}", flush=True)
        if self.due() or (total and done >= total):
            self.write()


def run(root: Path) -> int:
    """Embed every missing section of the workspace at ``root``; the exit status."""
    return run_once(root / LOCK, lambda: _embed(root), f"another embedder runs for {root}")


def _embed(root: Path) -> int:
    from cuedeck import open_workspace
    from cuedeck.progress import reporting_to

    state = _State(root)
    try:
        state.write()
        workspace = open_workspace(root)
        engine = workspace.service("search")
        engine.background = False
        print(f"embedding {root} (pid {os.getpid()})", flush=True)
        with reporting_to(state):
            done = engine.embed_all()
        state.write(state="finished")
        print(f"embedded {done} sections", flush=True)
        return 0
    except Exception as exc:  # recorded for `cue doctor`; the next run tries again
        state.write(state="failed", error=str(exc)[:500])
        print(f"failed: {exc}", flush=True)
        return 1


if __name__ == "__main__":  # pragma: no cover (run as a process by the tests)
    from pathlib import Path

    sys.exit(run(Path(sys.argv[1])))
