"""SQLite files: WAL mode switched on safely, and files that are only a cache (losing
one costs a rebuild, never data)."""

from __future__ import annotations

import contextlib
import sqlite3
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


@contextlib.contextmanager
def cache_db(path: Path, create: str) -> Iterator[sqlite3.Connection]:
    """A connection to the cache file ``path``, its folder and its table made first
    (``create``, a ``CREATE TABLE IF NOT EXISTS``), closed when the block ends.

    WAL mode, autocommit, and no fsync: a cache lost to a crash is rebuilt from the files
    it was computed from, so syncing it would only cost time.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path, timeout=10.0, isolation_level=None)
    try:
        write_ahead(connection)
        connection.execute("PRAGMA synchronous = OFF")
        connection.execute(create)
        yield connection
    finally:
        connection.close()


def write_ahead(connection: sqlite3.Connection, seconds: float = 60.0) -> None:
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
