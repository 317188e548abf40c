"""Per-tool token buckets, one set per client (see :func:`cuedeck_mcp.middleware.client_key`).

A bucket holds up to ``burst`` calls and refills at ``per_minute`` calls a minute; a
call that finds it empty is refused with :class:`~cuedeck.errors.RateLimited` (429),
whose data says when to retry. ``per_minute = 0`` means no limit.

Given a ``store`` (a small SQLite file in the workspace cache), the local client's
buckets (stdio, where one client owns the process) are kept there, so restarting the
server refills nothing. With ``every_client`` as well, every client's bucket is kept
there: behind ``uvicorn --workers N`` each worker is a process of its own, and buckets in
memory would let a client make N times its limit. Each check spends from its row in one
write transaction, so every process draws from the same bucket, one call at a time, on
the wall clock they share. Without a store, buckets live in the server's memory.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections import deque
from typing import TYPE_CHECKING

from cuedeck.system.databases import open_db
from cuedeck_mcp.errors import RateLimited

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Mapping
    from pathlib import Path

    from cuedeck.settings import RateLimit
    from cuedeck_mcp.shared_state import SharedState

WINDOW_SECONDS = 60
_PRUNE_AT = 1024
#: The client of stdio and in-process sessions.
LOCAL = "local"
#: Kept buckets idle this long are full again and are dropped (one prune an hour at most).
_IDLE_SECONDS = 3600.0
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


class TokenBucket:
    """One tool's bucket for one client."""

    def __init__(self, limit: RateLimit, clock: Callable[[], float]) -> None:
        self.limit = limit
        self.clock = clock
        self.capacity = float(max(limit.burst, 1))
        self.rate = limit.per_minute / WINDOW_SECONDS  # tokens per second
        self.tokens = self.capacity
        self.updated = clock()
        self.calls: deque[float] = deque()  # accepted calls in the last window

    def take(self, tool: str) -> None:
        """Spend one token, or raise RateLimited."""
        now = self.clock()
        self.tokens = min(self.capacity, self.tokens + (now - self.updated) * self.rate)
        self.updated = now
        while self.calls and self.calls[0] <= now - WINDOW_SECONDS:
            self.calls.popleft()
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            self.calls.append(now)
            return
        wait = (1.0 - self.tokens) / self.rate
        raise RateLimited(
            f"{tool} is limited to {self.limit.per_minute} calls a minute "
            f"(burst {self.limit.burst}); retry in {math.ceil(wait)} s",
            tool=tool,
            retry_after_seconds=max(1, math.ceil(wait)),
            limit=self.limit.per_minute,
            burst=self.limit.burst,
            window_seconds=WINDOW_SECONDS,
            current_count=len(self.calls),
        )


class RateLimiter:
    """Buckets by (client, tool) for the tools that have a limit."""

    def __init__(
        self,
        limits: Mapping[str, RateLimit],
        *,
        clock: Callable[[], float] = time.monotonic,
        store: Path | None = None,
        every_client: bool = False,
        wall_clock: Callable[[], float] = time.time,
        shared: SharedState | None = None,
    ) -> None:
        self.limits = {tool: limit for tool, limit in limits.items() if limit.per_minute > 0}
        self.clock = clock
        #: Where the local client's buckets are kept (None: in memory, like the others).
        self.store = store
        #: Whether every client's buckets are kept in :attr:`store` (several workers).
        self.every_client = every_client and store is not None
        self.wall_clock = wall_clock
        #: A team's shared state: every client's buckets are kept there, for every node.
        self.shared = shared
        self._buckets: dict[tuple[str, str], TokenBucket] = {}
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._pruned = 0.0

    def check(self, client: str, tool: str) -> None:
        """Count one call of ``tool`` by ``client``; RateLimited when over the limit."""
        limit = self.limits.get(tool)
        if limit is None:
            return
        if self.shared is not None:
            self.shared.spend(client, tool, limit)
            return
        if self.every_client or (client == LOCAL and self.store is not None):
            with self._lock:
                self._check_kept(client, tool, limit)
            return
        with self._lock:
            bucket = self._buckets.get((client, tool))
            if bucket is None:
                bucket = self._buckets[(client, tool)] = TokenBucket(limit, self.clock)
            bucket.take(tool)

            if len(self._buckets) > _PRUNE_AT:
                self._prune()

    def spend(self, client: str, tool: str, limit: RateLimit) -> None:
        """Spend one call of ``tool`` by ``client`` from the bucket kept in :attr:`store`
        under ``limit`` (a team's embedded store); RateLimited when it is empty."""
        with self._lock:
            self._check_kept(client, tool, limit)

    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            assert self.store is not None
            # Autocommit, WAL: each check is one short transaction shared by processes.
            db = open_db(self.store, threads=True)
            columns = {row[1] for row in db.execute("PRAGMA table_info(buckets)")}
            if columns and "client" not in columns:
                # An older file kept the local client's buckets only: a cache, so dropping
                # it costs one refill.
                db.execute("DROP TABLE buckets")
            db.execute(_SCHEMA)
            self._db = db
        return self._db

    def _check_kept(self, client: str, tool: str, limit: RateLimit) -> None:
        """:meth:`check` on the bucket kept in :attr:`store`."""
        db = self._connect()
        db.execute("BEGIN IMMEDIATE")  # one spender at a time, across processes
        try:
            bucket = TokenBucket(limit, self.wall_clock)
            row = db.execute(
                "SELECT tokens, updated, calls FROM buckets WHERE client = ? AND tool = ?",
                (client, tool),
            ).fetchone()
            if row is not None:
                # A clock set back must not mint tokens: elapsed time counts from now then.
                bucket.tokens = min(bucket.capacity, float(row[0]))
                bucket.updated = min(float(row[1]), bucket.updated)
                bucket.calls = deque(float(t) for t in json.loads(row[2]))
            try:
                bucket.take(tool)
            finally:  # a refused call still moves the refill forward, as in memory
                db.execute(
                    "INSERT OR REPLACE INTO buckets VALUES (?, ?, ?, ?, ?)",
                    (client, tool, bucket.tokens, bucket.updated, json.dumps(list(bucket.calls))),
                )
                self._drop_idle(db)
                db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    def _drop_idle(self, db: sqlite3.Connection) -> None:
        # A bucket idle for an hour is full again: dropping its row loses nothing.
        now = self.wall_clock()
        if now - self._pruned < _IDLE_SECONDS:
            return
        self._pruned = now
        db.execute("DELETE FROM buckets WHERE updated < ?", (now - _IDLE_SECONDS,))

    def close(self) -> None:
        """Close the store of the local client's buckets."""
        if self._db is not None:
            self._db.close()
            self._db = None

    def _prune(self) -> None:
        # A bucket idle long enough to have refilled is the same as a new one, so
        # dropping it loses nothing; this bounds memory across many HTTP sessions.
        now = self.clock()
        for key, bucket in list(self._buckets.items()):
            if now - bucket.updated >= bucket.capacity / bucket.rate:
                del self._buckets[key]
