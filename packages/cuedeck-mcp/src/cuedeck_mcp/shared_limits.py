"""Rate limits that every worker of a server shares: the token buckets live in SQLite.

Behind ``uvicorn --workers N`` each worker is a process of its own, so buckets kept in
memory would let a client make N times its limit (one bucket per worker it lands on).
:class:`SharedRateLimiter` keeps each (client, tool) bucket as a row of one SQLite file
and spends from it in a write transaction, so the workers draw from the same bucket,
one call at a time. The refill arithmetic is :class:`~cuedeck_mcp.ratelimit.TokenBucket`'s;
the clock is the wall clock, which every process shares.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from typing import TYPE_CHECKING

from cuedeck_mcp.ratelimit import RateLimiter, TokenBucket

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping
    from pathlib import Path

    from cuedeck.config import RateLimit

_SCHEMA = """
CREATE TABLE IF NOT EXISTS buckets (
    client TEXT NOT NULL,
    tool TEXT NOT NULL,
    tokens REAL NOT NULL,
    updated REAL NOT NULL,
    calls TEXT NOT NULL,
    PRIMARY KEY (client, tool)
)
"""
#: Buckets idle this long are full again and are dropped (one prune an hour at most).
_IDLE_SECONDS = 3600.0


class SharedRateLimiter(RateLimiter):
    """:class:`RateLimiter` whose buckets are rows of the SQLite file at ``path``."""

    def __init__(
        self,
        path: Path,
        limits: Mapping[str, RateLimit],
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(limits, clock=clock)
        self.path = path
        self._pruned = 0.0

    def check(self, client: str, tool: str) -> None:
        """Count one call of ``tool`` by ``client`` in the shared bucket; RateLimited
        (429) when it is empty."""
        limit = self.limits.get(tool)
        if limit is None:
            return
        with self._transaction() as db:
            row = db.execute(
                "SELECT tokens, updated, calls FROM buckets WHERE client = ? AND tool = ?",
                (client, tool),
            ).fetchone()
            bucket = TokenBucket(limit, self.clock)
            if row is not None:
                bucket.tokens = min(row[0], bucket.capacity)
                # A clock set back must not mint tokens: elapsed time counts from now then.
                bucket.updated = min(row[1], bucket.updated)
                bucket.calls.extend(json.loads(row[2]))
            try:
                bucket.take(tool)
            finally:  # a refused call still moves the refill forward, as in memory
                db.execute(
                    "INSERT OR REPLACE INTO buckets VALUES (?, ?, ?, ?, ?)",
                    (client, tool, bucket.tokens, bucket.updated, json.dumps(list(bucket.calls))),
                )
                self._drop_idle(db)

    def _drop_idle(self, db: sqlite3.Connection) -> None:
        now = self.clock()
        if now - self._pruned < _IDLE_SECONDS:
            return
        self._pruned = now
        db.execute("DELETE FROM buckets WHERE updated < ?", (now - _IDLE_SECONDS,))

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
        try:
            db.execute("PRAGMA busy_timeout = 30000")
            db.execute("PRAGMA journal_mode = WAL")
            db.execute(_SCHEMA)
            db.execute("BEGIN IMMEDIATE")  # one spender at a time, across processes
            try:
                yield db
            except BaseException:
                db.execute("COMMIT")  # the bucket's state moved even when the call is refused
                raise
            db.execute("COMMIT")
        finally:
            db.close()
