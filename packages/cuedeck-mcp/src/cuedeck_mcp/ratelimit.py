"""Per-tool token buckets, one set per client (see :func:`cuedeck_mcp.middleware.client_key`).

A bucket holds up to ``burst`` calls and refills at ``per_minute`` calls a minute; a
call that finds it empty is refused with :class:`~cuedeck.errors.RateLimited` (429),
whose data says when to retry. ``per_minute = 0`` means no limit.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from typing import TYPE_CHECKING

from cuedeck_mcp.errors import RateLimited

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from cuedeck.config import RateLimit

WINDOW_SECONDS = 60
_PRUNE_AT = 1024


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
        self, limits: Mapping[str, RateLimit], *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limits = {tool: limit for tool, limit in limits.items() if limit.per_minute > 0}
        self.clock = clock
        self._buckets: dict[tuple[str, str], TokenBucket] = {}
        self._lock = threading.Lock()

    def check(self, client: str, tool: str) -> None:
        """Count one call of ``tool`` by ``client``; RateLimited when over the limit."""
        limit = self.limits.get(tool)
        if limit is None:
            return
        with self._lock:
            bucket = self._buckets.get((client, tool))
            if bucket is None:
                bucket = self._buckets[(client, tool)] = TokenBucket(limit, self.clock)
            bucket.take(tool)

            if len(self._buckets) > _PRUNE_AT:
                self._prune()

    def _prune(self) -> None:
        # A bucket idle long enough to have refilled is the same as a new one, so
        # dropping it loses nothing; this bounds memory across many HTTP sessions.
        now = self.clock()
        for key, bucket in list(self._buckets.items()):
            if now - bucket.updated >= bucket.capacity / bucket.rate:
                del self._buckets[key]
