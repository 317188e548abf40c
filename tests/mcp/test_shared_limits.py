"""Rate limits kept in SQLite for every client: what two server workers see."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from cuedeck.settings import RateLimit
from cuedeck_mcp.errors import RateLimited
from cuedeck_mcp.ratelimit import RateLimiter

if TYPE_CHECKING:
    from pathlib import Path


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def shared(folder: Path, limits: dict[str, RateLimit], clock: Clock) -> RateLimiter:
    """A worker's limiter: every client's buckets in the one file of ``folder``."""
    return RateLimiter(limits, store=folder / "limits.sqlite3", every_client=True, wall_clock=clock)


def test_two_limiters_on_one_file_spend_one_bucket(tmp_path: Path) -> None:
    clock = Clock()
    limits = {"read_doc": RateLimit(per_minute=60, burst=3)}
    first = shared(tmp_path, limits, clock)
    second = shared(tmp_path, limits, clock)  # a 2nd worker
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
    shared(tmp_path, limits, clock).check("c", "read_doc")
    restarted = shared(tmp_path, limits, clock)
    with pytest.raises(RateLimited):
        restarted.check("c", "read_doc")


def test_an_older_store_of_the_local_client_only_is_replaced(tmp_path: Path) -> None:
    import sqlite3

    store = tmp_path / "limits.sqlite3"
    db = sqlite3.connect(store)
    db.execute(
        "CREATE TABLE buckets (tool TEXT PRIMARY KEY, tokens REAL, updated REAL, calls TEXT)"
    )
    db.execute("INSERT INTO buckets VALUES ('read_doc', 0.0, 1000000.0, '[]')")
    db.commit()
    db.close()
    limits = {"read_doc": RateLimit(per_minute=1, burst=1)}
    shared(tmp_path, limits, Clock()).check("local", "read_doc")  # a full bucket again
    with pytest.raises(RateLimited):
        shared(tmp_path, limits, Clock()).check("local", "read_doc")
