"""SQLite files that are only a cache: losing one costs a rebuild, never data."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from cuedeck.system.databases import open_db

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterator
    from pathlib import Path


@contextlib.contextmanager
def cache_db(path: Path, create: str) -> Iterator[sqlite3.Connection]:
    """A connection to the cache file ``path``, its table made first (``create``, a
    ``CREATE TABLE IF NOT EXISTS``), closed when the block ends.

    No fsync: a cache lost to a crash is rebuilt from the files it was computed from, so
    syncing it would only cost time.
    """
    connection = open_db(path, synchronous="OFF")
    try:
        connection.execute(create)
        yield connection
    finally:
        connection.close()
