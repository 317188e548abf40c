"""What a plugin's detached job shares: its start, its once-per-workspace lock and its
state file.

A job (the detached embedder, the code graph's builder) is a ``python -m`` process that
outlives the command that starts it, logs to a file beside its state, runs at most once
per workspace (a second one finds the lock held and exits at once) and writes what it
is doing to a JSON state file, whole (an atomic rename), for ``cue status``, ``cue
doctor`` and the board to read.
"""

from __future__ import annotations

import json
import os
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path


def start_job(module: str, root: Path, log: Path) -> int:
    """Start ``python -m module ROOT`` in a session of its own, its output appended to
    ``log``; its pid."""
    from cuedeck.system.spawn import start_detached

    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:  # in a session of its own: not stopped by Ctrl-C or hang-up
        return start_detached(module, str(root), stdout=out, stderr=out)


def run_once(lock: Path, job: Callable[[], int], busy: str) -> int:
    """``job()``'s exit status while holding ``lock``; 0, printing ``busy``, when another
    process holds it."""
    from cuedeck.writes import holding

    with holding(lock) as mine:
        if not mine:
            print(busy, flush=True)
            return 0
        return job()


class JobState:
    """A job's state file: ``pid``, ``started``, ``state`` (``running`` until told) and
    the job's own ``fields``, written whole with ``updated``."""

    def __init__(self, path: Path, **fields: Any) -> None:
        self.path = path
        self.data: dict[str, Any] = {
            "pid": os.getpid(), "started": time.time(), "state": "running", **fields
        }  # fmt: skip
        self._written = 0.0

    def due(self) -> bool:
        """Whether a second has passed since the last write (progress is written so often)."""
        return time.monotonic() - self._written >= 1.0

    def write(self, **changes: Any) -> None:
        """Write the state with ``changes`` (atomically: a reader never sees half)."""
        from cuedeck.writes import atomic_write

        self.data.update(changes, updated=time.time())
        atomic_write(self.path, json.dumps(self.data).encode())
        self._written = time.monotonic()
