"""SQLite files that are only a cache: losing one costs a rebuild, never data."""

from __future__ import annotations

import contextlib
import sqlite3
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
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA synchronous = OFF")
        connection.execute(create)
        yield connection
    finally:
        connection.close()
