"""Rate limits shared through SQLite: what two server workers see."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from cuedeck.settings import RateLimit
from cuedeck_mcp.errors import RateLimited
from cuedeck_mcp.shared_limits import SharedRateLimiter

if TYPE_CHECKING:
    from pathlib import Path


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def test_two_limiters_on_one_file_spend_one_bucket(tmp_path: Path) -> None:
    clock = Clock()
    limits = {"read_doc": RateLimit(per_minute=60, burst=3)}
    first = SharedRateLimiter(tmp_path / "limits.sqlite3", limits, clock=clock)
    second = SharedRateLimiter(tmp_path / "limits.sqlite3", limits, clock=clock)  # a 2nd worker
    first.check("token:a", "read_doc")
    second.check("token:a", "read_doc")
    first.check("token:a", "read_doc")
    with pytest.raises(RateLimited) as refused:
        second.check("token:a", "read_doc")
    assert refused.value.data["retry_after_seconds"] == 1
    assert refused.value.data["current_count"] == 3
    second.check("token:b", "read_doc")  # another client has a bucket of its own
    second.check("token:a", "list_tasks")  # a tool without a limit is never counted
    clock.now += 1.0  # one token refilled (60 a minute), whichever worker looks
    first.check("token:a", "read_doc")
    with pytest.raises(RateLimited):
        second.check("token:a", "read_doc")


def test_a_restart_keeps_the_buckets(tmp_path: Path) -> None:
    clock = Clock()
    limits = {"read_doc": RateLimit(per_minute=1, burst=1)}
    SharedRateLimiter(tmp_path / "limits.sqlite3", limits, clock=clock).check("c", "read_doc")
    restarted = SharedRateLimiter(tmp_path / "limits.sqlite3", limits, clock=clock)
    with pytest.raises(RateLimited):
        restarted.check("c", "read_doc")
