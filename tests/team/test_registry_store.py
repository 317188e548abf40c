"""The registry and repositories' locks in the team's store, on both implementations:
claims that two nodes cannot both win, records that read back as written, and a lock that
serializes two nodes and frees when its holder is SIGKILLed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from typing import TYPE_CHECKING

import pytest

from cuedeck_team.errors import AliasTaken, RepositoryBusy
from cuedeck_team.store import open_store

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from cuedeck_team.store import TeamStore


@pytest.fixture
def store(home: Path, team_database: str) -> Iterator[TeamStore]:
    opened = open_store(home, team_database)
    try:
        yield opened
    finally:
        opened.close()


def test_a_shared_repository_is_claimed_once_then_made_ready(store: TeamStore) -> None:
    registry = store.registry()
    claimed = registry.begin_shared("backend-global", "file:///src/backend.git", "", "root")
    assert registry.shared() == []  # being made: served by no one yet
    with pytest.raises(RepositoryBusy):
        registry.begin_shared("backend-global", "elsewhere", "", "eve")
    registry.update_shared("backend-global", state="ready", branch="main", head="abc123")
    found = registry.find_shared("backend-global")
    assert found is not None
    assert (found.state, found.branch, found.head, found.created_by) == (
        "ready", "main", "abc123", "root",
    )  # fmt: skip
    assert registry.shared() == [found]
    with pytest.raises(AliasTaken):
        registry.begin_shared("backend-global", "elsewhere", "", "eve")
    assert registry.generations() == {claimed.generation}
    registry.drop_shared("backend-global")
    assert registry.find_shared("backend-global") is None


def test_activations_and_components_belong_to_their_owner(store: TeamStore) -> None:
    registry = store.registry()
    mine = registry.begin_activation("alice", "both", "composite", "", "", "both")
    registry.update_activation("alice", "both", state="ready")
    registry.add_component("alice", "both", "backend-global", "backend")
    registry.add_component("alice", "both", "frontend-global", "frontend")
    registry.begin_activation("bob", "both", "activation", "backend-global", "main", "both")
    assert [a.owner for a in registry.activations()] == ["alice"]  # bob's is not ready
    assert [a.owner for a in registry.activations(ready_only=False)] == ["alice", "bob"]
    assert [c.folder for c in registry.components("alice", "both")] == ["backend", "frontend"]
    assert registry.components("bob", "both") == []
    registry.remove_component("alice", "both", "backend-global")
    assert [c.golden for c in registry.components("alice", "both")] == ["frontend-global"]
    with pytest.raises(AliasTaken):
        registry.begin_activation("alice", "both", "activation", "x-global", "main", "both")
    assert registry.generations() == {mine.generation}
    registry.drop_activation("alice", "both")
    assert registry.components("alice", "both") == []
    assert registry.find_activation("alice", "both") is None


def test_two_nodes_changing_one_repository_take_turns(home: Path, team_database: str) -> None:
    first, second = open_store(home, team_database), open_store(home, team_database)
    try:
        order: list[str] = []
        held = threading.Event()
        release = threading.Event()

        def hold() -> None:
            with first.lock("shared-backend-global", 5.0):
                order.append("first in")
                held.set()
                release.wait(10)
                order.append("first out")

        holder = threading.Thread(target=hold)
        holder.start()
        assert held.wait(10)
        # Held elsewhere for longer than it waits:
        with pytest.raises(TimeoutError), second.lock("shared-backend-global", 0.2):
            pass
        with second.lock("shared-frontend-global", 0.2):  # another repository: free
            order.append("other repository")
        waiter = threading.Thread(target=lambda: _take(second, order))
        waiter.start()
        release.set()
        holder.join(10)
        waiter.join(10)
        assert order == ["first in", "other repository", "first out", "second in"]
    finally:
        first.close()
        second.close()


def _take(store: TeamStore, order: list[str]) -> None:
    with store.lock("shared-backend-global", 10.0):
        order.append("second in")


HOLDER = """
import sys
from pathlib import Path
from cuedeck_team.store import open_store
store = open_store(Path(sys.argv[1]), sys.argv[2])
with store.lock("shared-backend-global", 5.0):
    print("held", flush=True)
    sys.stdin.read()
"""


def test_a_killed_holders_lock_frees(home: Path, team_database: str) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(home), team_database],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    store = open_store(home, team_database)
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(TimeoutError), store.lock("shared-backend-global", 0.2):
            pass
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(10)
        with store.lock("shared-backend-global", 5.0):  # freed by its death, not by a sweep
            pass
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait(10)
        for pipe in (holder.stdin, holder.stdout):
            if pipe is not None:
                pipe.close()
        store.close()
