"""Each node's own clones of the shared repositories (``[team] node_cache``), on real git:
two nodes of one team (one home, two caches) register, refresh, catch up and remove."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuedeck_team import activations, gitops, nodecache, shared
from cuedeck_team.home import Team
from tests.team.conftest import BACKEND, push_from

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path


def nodes(home: Path, tmp_path: Path) -> tuple[Team, Team]:
    """Two nodes of the team at ``home``, each with its own cache."""
    return (
        Team(home, database="", node_cache=tmp_path / "cache1"),
        Team(home, database="", node_cache=tmp_path / "cache2"),
    )


def test_a_node_catches_up_with_the_head_another_registered_and_refreshed(
    home: Path, tmp_path: Path, upstream: Callable[..., Path]
) -> None:
    one, two = nodes(home, tmp_path)
    bare = upstream("backend", BACKEND)
    first = shared.register(one, str(bare), "backend", by="root", embed=False)["head"]
    record = two.registry.find_shared("backend-global")
    assert record is not None and record.head == first
    assert not two.shared_path(record).exists()  # node 2 has cloned nothing yet
    assert one.shared_path(record).is_relative_to(tmp_path / "cache1")

    folder = nodecache.ensure(two, record)  # node 2's first use: clone, check out, index
    assert folder.is_relative_to(tmp_path / "cache2")
    assert gitops.head(folder) == first
    with two.open(folder) as workspace:
        assert "docs/auth.md" in workspace.fresh_index().paths

    second = push_from(bare, tmp_path, {"docs/rotation.md": "# Rotation\n"}, "rotation")
    refreshed = shared.refresh(one, "backend-global", embed=False)
    assert (refreshed["previous_head"], refreshed["head"]) == (first, second)
    assert gitops.head(folder) == first  # node 2 moves when it next uses it
    record = two.registry.find_shared("backend-global")
    assert record is not None and record.head == second
    assert nodecache.ensure(two, record) == folder
    assert gitops.head(folder) == second
    with two.open(folder) as workspace:
        assert "docs/rotation.md" in workspace.fresh_index().paths

    # The source moved on past the registered head: a node serves the registered head.
    push_from(bare, tmp_path, {"docs/later.md": "# Later\n"}, "later")
    three = Team(home, database="", node_cache=tmp_path / "cache3")
    assert gitops.head(nodecache.ensure(three, record)) == second


def test_an_activation_on_the_home_is_made_from_the_nodes_clone(
    home: Path, tmp_path: Path, upstream: Callable[..., Path]
) -> None:
    one, two = nodes(home, tmp_path)
    shared.register(one, str(upstream("backend", BACKEND)), "backend", by="root", embed=False)
    made = activations.activate(two, "alice", "backend-global", "work", None)  # via node 2
    record = one.registry.find_activation("alice", "work")
    assert record is not None
    folder = one.user_path(record)
    assert folder.is_relative_to(home) and gitops.head(folder) == made["head"]
    assert gitops.remote_url(folder) == gitops.remote_url(one.shared_path("backend-global"))


def test_a_repository_removed_through_one_node_is_pruned_by_the_other(
    home: Path, tmp_path: Path, upstream: Callable[..., Path]
) -> None:
    one, two = nodes(home, tmp_path)
    bare = upstream("backend", BACKEND)
    shared.register(one, str(bare), "backend", by="root", embed=False)
    record = two.registry.find_shared("backend-global")
    assert record is not None
    kept = nodecache.ensure(two, record)
    shared.remove(one, "backend-global")
    assert not one.shared_path(record).exists()
    assert kept.is_dir()  # node 2 still holds its old clone...
    assert nodecache.prune(two) == [record.generation]
    assert not kept.exists()  # ...until it sees the registry no longer lists it
    again = shared.register(one, str(bare), "backend", by="root", embed=False)
    fresh = two.registry.find_shared("backend-global")
    assert fresh is not None and fresh.generation != record.generation
    assert gitops.head(nodecache.ensure(two, fresh)) == again["head"]  # a new folder


def test_the_catch_up_at_start_brings_every_repository(
    home: Path, tmp_path: Path, upstream: Callable[..., Path]
) -> None:
    one, two = nodes(home, tmp_path)
    shared.register(one, str(upstream("backend", BACKEND)), "backend", by="root", embed=False)
    shared.register(one, str(upstream("other", BACKEND)), "other", by="root", embed=False)
    started = nodecache.CatchUp(two)
    assert started.finished.wait(120)
    assert started.problems() == [] and started.failed == []
    for record in two.registry.shared():
        assert nodecache.served_head(two.shared_path(record)) == record.head
