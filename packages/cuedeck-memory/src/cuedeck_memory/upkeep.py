"""Upkeep of the store after writes: merging the text index, emptying the log.

FTS5 keeps the text index as segments and merges them as it writes (``automerge``):
most of the cost of committing a captured batch, about 140 of its 800 million
instructions at 100,000 segments. The store turns that off (:func:`defer_merges`) and
merges here instead, by the same rule (a level of four segments or more is merged), in
a thread after each commit; then, once the write-ahead log holds
:data:`CHECKPOINT_BYTES`, it empties the log into the store. Both are calls into SQLite,
which let go of the GIL, so they run beside the next call instead of inside one: the
next capture has its request to read, check, mask and count before it needs the write
lock. Each merge step is a transaction of its own, and the process's own writes go
first: a step starts only while none waits (:meth:`Upkeep.writing`), so a write waits
for at most the one step under way. A process that stops mid-step loses nothing (the
step rolls back; the next process merges). Should merging fall behind, FTS5 still
merges a level of 16 segments as it writes (``crisismerge``): the index never grows
unmerged.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

#: Log size from which it is emptied into the store (SQLite's own default is 1,000
#: pages, about 4 MB).
CHECKPOINT_BYTES = 4 * 1024 * 1024
#: Pages of merged index a merge step writes: a step holds the write lock for a few ms.
MERGE_PAGES = 100
#: The rule FTS5 merges by as it writes; the store's index is merged here instead.
AUTOMERGE = "automerge"


def defer_merges(db: sqlite3.Connection, index: str) -> None:
    """Have FTS5 table ``index`` stop merging as it writes (inside the caller's write
    transaction; a no-op once set): :class:`Upkeep` merges it after commits."""
    row = db.execute(f"SELECT v FROM {index}_config WHERE k = ?", (AUTOMERGE,)).fetchone()
    if row is None or row[0] != 0:
        db.execute(f"INSERT INTO {index} ({index}, rank) VALUES (?, 0)", (AUTOMERGE,))


class Upkeep:
    """The thread that merges the text index and empties the log after commits."""

    def __init__(self, path: Path, index: str) -> None:
        self.path = path
        self.index = index
        self._turn = threading.Condition()
        self._thread: threading.Thread | None = None
        self._again = False  # a commit since the thread last looked
        self._writers = 0  # the process's writes waiting or under way
        self._stepping = False
        self._stopped = False

    def after_commit(self) -> None:
        """Start the upkeep thread, or have the running one look again when done."""
        with self._turn:
            self._again = True
            if self._thread is not None:
                return
            # A daemon: a process that ends mid-step leaves the work to the next one.
            self._thread = threading.Thread(
                target=self._run, name="cuedeck-memory-upkeep", daemon=True
            )
            self._thread.start()

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """Hold off merge steps while the process writes (after the one under way)."""
        with self._turn:
            self._writers += 1
            while self._stepping:
                self._turn.wait()
        try:
            yield
        finally:
            with self._turn:
                self._writers -= 1
                self._turn.notify_all()

    def settle(self) -> None:
        """Wait until the upkeep has nothing left to do (it may start again on the next
        commit)."""
        while (thread := self._thread) is not None:
            thread.join()

    def stop(self) -> None:
        """Stop after the step under way and wait for it (the store is closing; the next
        commit starts the upkeep again)."""
        with self._turn:
            self._stopped = True
            thread = self._thread
        if thread is not None:
            thread.join()
        with self._turn:
            self._stopped = False

    def _run(self) -> None:
        while True:
            with self._turn:
                if not self._again or self._stopped:
                    self._thread = None
                    return
                self._again = False
            # Work that fails (a store removed meanwhile) is the next commit's to retry.
            with contextlib.suppress(sqlite3.Error, OSError):
                self._tidy()

    def _step(self) -> bool:
        """Wait until no write of the process is pending; False once stopped."""
        with self._turn:
            while self._writers and not self._stopped:
                self._turn.wait()
            self._stepping = not self._stopped
            return self._stepping

    def _stepped(self) -> None:
        with self._turn:
            self._stepping = False
            self._turn.notify_all()

    def _tidy(self) -> None:
        # Its own connection: the store's may be in a transaction meanwhile.
        from cuedeck.system.databases import open_db

        connection = open_db(self.path)  # synchronous NORMAL, as the store's own
        try:
            connection.execute("PRAGMA wal_autocheckpoint = 0")
            merge = f"INSERT INTO {self.index} ({self.index}, rank) VALUES ('merge', ?)"
            merging = True
            while merging and self._step():
                try:
                    # A step that changed fewer than two rows found nothing to merge.
                    before = connection.total_changes
                    connection.execute(merge, (MERGE_PAGES,))
                    merging = connection.total_changes - before >= 2
                finally:
                    self._stepped()
            if os.stat(f"{self.path}-wal").st_size >= CHECKPOINT_BYTES:
                connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
        finally:
            connection.close()
