"""The rate limiter's promises, for any calls at any times (Hypothesis): never more than
``burst`` at once, a refill of ``per_minute`` a minute and never past ``burst``, and one
bucket whichever worker process a client's calls reach.

Calls are at whole seconds on a clock the test holds, so the sums are exact.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from cuedeck.settings import RateLimit
from cuedeck_mcp.errors import RateLimited
from cuedeck_mcp.ratelimit import RateLimiter


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


limits = st.builds(
    RateLimit, per_minute=st.integers(min_value=1, max_value=120), burst=st.integers(1, 20)
)
#: Seconds to wait before each call (0: at the same moment as the one before).
waits = st.lists(
    st.one_of(st.just(0), st.integers(min_value=0, max_value=7200)), min_size=1, max_size=80
)


def _accepted(limiters: list[RateLimiter], clock: Clock, wait_list: list[int]) -> list[float]:
    """When each accepted call was made; call ``n`` goes to worker ``n % len(limiters)``."""
    times = []
    for number, wait in enumerate(wait_list):
        clock.now += wait
        refused: RateLimited | None = None
        try:
            limiters[number % len(limiters)].check("client", "tool")
        except RateLimited as exc:
            refused = exc
        if refused is None:
            times.append(clock.now)
        else:
            assert refused.code == 429 and refused.data["retry_after_seconds"] >= 1
    return times


def _never_more_than_the_bucket_allows(times: list[float], limit: RateLimit) -> None:
    """Between any two accepted calls (both counted), at most ``burst`` plus what the
    refill brought in the time between them."""
    rate = limit.per_minute / 60.0
    for first in range(len(times)):
        for last in range(first, len(times)):
            allowed = limit.burst + rate * (times[last] - times[first])
            assert last - first + 1 <= allowed + 1e-9, (first, last, times)


@given(limit=limits, wait_list=waits)
def test_the_bucket_holds_at_most_burst_calls_and_refills_at_its_rate(
    limit: RateLimit, wait_list: list[int]
) -> None:
    clock = Clock()
    limiter = RateLimiter({"tool": limit}, clock=clock)
    _never_more_than_the_bucket_allows(_accepted([limiter], clock, wait_list), limit)


@given(limit=limits, idle=st.integers(min_value=0, max_value=100_000), extra=st.integers(1, 50))
def test_after_any_idle_time_exactly_burst_calls_go_through_at_once(
    limit: RateLimit, idle: int, extra: int
) -> None:
    """Emptied, then idle: the refill is what the time brought, capped at ``burst``."""
    clock = Clock()
    limiter = RateLimiter({"tool": limit}, clock=clock)
    assert len(_accepted([limiter], clock, [0] * (limit.burst + extra))) == limit.burst
    clock.now += idle
    refilled = min(limit.burst, int(idle * limit.per_minute / 60.0 + 1e-9))
    assert len(_accepted([limiter], clock, [0] * (limit.burst + extra))) == refilled


@given(limit=limits)
def test_calls_spaced_by_the_refill_always_go_through(limit: RateLimit) -> None:
    clock = Clock()
    limiter = RateLimiter({"tool": limit}, clock=clock)
    spacing = -(-60 // limit.per_minute)  # whole seconds, at least 60 / per_minute
    assert len(_accepted([limiter], clock, [0] + [spacing] * 30)) == 31


@given(limit=limits, wait_list=waits, workers=st.integers(min_value=2, max_value=3))
def test_workers_sharing_the_store_spend_from_one_bucket(
    limit: RateLimit, wait_list: list[int], workers: int
) -> None:
    """Behind ``uvicorn --workers N`` each worker has its own limiter on the same file:
    the calls a client spreads over them get exactly what one bucket gives."""
    with tempfile.TemporaryDirectory() as folder:
        clock = Clock()
        store = Path(folder) / "ratelimits.sqlite3"
        spread = [
            RateLimiter({"tool": limit}, store=store, every_client=True, wall_clock=clock)
            for _ in range(workers)
        ]
        shared = _accepted(spread, clock, wait_list)
        for limiter in spread:
            limiter.close()
        alone = Clock()
        one = RateLimiter({"tool": limit}, clock=alone)
        assert shared == _accepted([one], alone, wait_list)  # the same calls, the same times
        _never_more_than_the_bucket_allows(shared, limit)
