"""CueDeck's one way to open an SQLite file: its folder made, autocommit, write-ahead
logging switched on safely, and one wait for a busy file, whoever opens it (the index,
caches, cards, memory, rate limits, a team's registry, the user's embedding cache)."""

from __future__ import annotations

import sqlite3
import time
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from pathlib import Path

#: How long any connection waits for another process's write before "database is locked".
WAIT_SECONDS = 60.0

Synchronous = Literal["OFF", "NORMAL", "FULL"]


def open_db(
    path: Path,
    *,
    synchronous: Synchronous = "NORMAL",
    threads: bool = False,
    read_only: bool = False,
) -> sqlite3.Connection:
    """A connection to the SQLite file ``path`` in autocommit mode, waiting up to
    :data:`WAIT_SECONDS` for a writer.

    The file is made (its folder first) and put in WAL mode, so readers go on while a
    process writes; ``synchronous`` is ``NORMAL`` (safe with WAL: a power cut may lose the
    last commits, never corrupt the file), ``OFF`` for a cache rebuilt from what it was
    computed from. ``threads`` lets threads share the connection (the caller serialises
    them). ``read_only`` opens an existing file as it is, changing nothing.
    """
    if read_only:
        connection = sqlite3.connect(
            f"{path.as_uri()}?mode=ro", uri=True, timeout=WAIT_SECONDS, isolation_level=None
        )
        connection.execute(f"PRAGMA busy_timeout = {int(WAIT_SECONDS * 1000)}")
        return connection
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(
        path, timeout=WAIT_SECONDS, isolation_level=None, check_same_thread=not threads
    )
    try:
        connection.execute(f"PRAGMA busy_timeout = {int(WAIT_SECONDS * 1000)}")
        write_ahead(connection)
        connection.execute(f"PRAGMA synchronous = {synchronous}")
    except BaseException:
        connection.close()
        raise
    return connection


def write_ahead(connection: sqlite3.Connection, seconds: float = WAIT_SECONDS) -> None:
    """Put ``connection``'s file in WAL mode (kept in the file: once per file). A new
    file's switch needs the only lock on it, and SQLite fails at once rather than wait
    for it ("database is locked"): two processes opening a new file together met that,
    so the switch is tried again, briefly, until the other one has made it."""
    if connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal":
        return
    deadline = time.monotonic() + seconds
    pause = 0.002
    while True:
        try:
            connection.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.1)
