"""Composites on real git: several shared repositories searched as one corpus."""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

import pytest

from cuedeck.workspace import Workspace
from cuedeck_mcp.errors import UnknownRepository
from cuedeck_team import activations, composites, shared
from cuedeck_team.errors import AliasTaken, WrongRepositoryKind
from tests.team.conftest import BACKEND, FRONTEND

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from cuedeck_team.home import Team

#: "token" is everywhere in backend and in one frontend file: its weight (IDF) depends on
#: which documents count as the corpus.
TOKENS = {
    **BACKEND,
    "docs/tokens.md": "# Tokens\n\nAccess token, refresh token, token rotation, token expiry.\n",
    "docs/jwt.md": "# JWT\n\nA signed token with claims; the token expires.\n",
}
WEB = {**FRONTEND, "docs/storage.md": "# Storage\n\nThe token is kept in memory, never stored.\n"}


@pytest.fixture
def both(team: Team, upstream: Callable[..., Path]) -> dict[str, object]:
    """backend-global and frontend-global, and alice's composite of the two."""
    for name, files in (("backend", TOKENS), ("frontend", WEB)):
        shared.register(team, str(upstream(name, files)), name, by="admin", embed=False)
    return composites.create(team, "alice", "stack", ["backend-global", "frontend-global"])


def test_a_composite_holds_every_component_in_its_own_folder(
    team: Team, both: dict[str, object]
) -> None:
    assert both["components"] == [
        {"alias": "backend-global", "path": "backend", "indexed": True},
        {"alias": "frontend-global", "path": "frontend", "indexed": True},
    ]
    record = team.registry.find_activation("alice", "stack")
    assert record is not None and record.kind == "composite"
    with team.open(team.user_path(record)) as workspace:
        paths = set(workspace.fresh_index().paths)
    assert {"backend/docs/auth.md", "frontend/docs/login-page.md"} <= paths


def test_a_composite_search_ranks_one_corpus(
    team: Team, both: dict[str, object], tmp_path: Path
) -> None:
    record = team.registry.find_activation("alice", "stack")
    assert record is not None
    folder = team.user_path(record)
    # The same files as one plain workspace: what "one corpus" must rank exactly alike.
    plain = tmp_path / "plain"
    (plain / ".cuedeck").mkdir(parents=True)
    for component in ("backend", "frontend"):
        shutil.copytree(
            folder / component, plain / component, ignore=shutil.ignore_patterns(".git")
        )
    with team.open(folder) as composite, Workspace(plain) as single:
        found = composite.search("token", mode="keyword", limit=10)
        expected = single.search("token", mode="keyword", limit=10)
    assert [(r.path, r.score) for r in found] == [(r.path, r.score) for r in expected]
    paths = [r.path for r in found]
    assert any(p.startswith("backend/") for p in paths)
    assert "frontend/docs/storage.md" in paths
    # Searched alone, frontend's corpus makes "token" rare, so its document scores higher
    # than inside the composite, where backend's many token pages make the word common:
    # the composite did not concatenate per-component rankings.
    with team.open(team.shared_path("frontend-global")) as frontend:
        alone = frontend.search("token", mode="keyword", limit=10)
    alone_score = next(r.score for r in alone if r.path == "docs/storage.md")
    merged_score = next(r.score for r in found if r.path == "frontend/docs/storage.md")
    assert alone_score != merged_score


@pytest.mark.slow
def test_a_hybrid_composite_search_fuses_one_ranking(
    team: Team, both: dict[str, object], tmp_path: Path
) -> None:
    record = team.registry.find_activation("alice", "stack")
    assert record is not None
    folder = team.user_path(record)
    plain = tmp_path / "plain"
    (plain / ".cuedeck").mkdir(parents=True)
    for component in ("backend", "frontend"):
        shutil.copytree(
            folder / component, plain / component, ignore=shutil.ignore_patterns(".git")
        )
    for root in (folder, plain):
        with Workspace(root) as workspace:
            workspace.refresh()
            workspace.service("search").embed_all()
    with team.open(folder) as composite, Workspace(plain) as single:
        found = composite.search("where is the password checked", mode="hybrid", limit=5)
        expected = single.search("where is the password checked", mode="hybrid", limit=5)
    assert [(r.path, r.score) for r in found] == [(r.path, r.score) for r in expected]
    assert {r.path.split("/")[0] for r in found} == {"backend", "frontend"}


def test_components_are_added_removed_and_listed(
    team: Team, both: dict[str, object], upstream: Callable[..., Path]
) -> None:
    shared.register(
        team, str(upstream("docs", {"guide.md": "# Guide\n"})), "docs", by="a", embed=False
    )
    added = composites.manage(team, "alice", "stack", "add", "docs-global")
    assert added["total_components"] == 3
    assert added["components"][1] == {"alias": "docs-global", "path": "docs", "indexed": True}
    removed = composites.manage(team, "alice", "stack", "remove", "backend-global")
    assert [c["alias"] for c in removed["components"]] == ["docs-global", "frontend-global"]
    record = team.registry.find_activation("alice", "stack")
    assert record is not None
    folder = team.user_path(record)
    assert not (folder / "backend").exists()
    with team.open(folder) as workspace:
        assert not any(p.startswith("backend/") for p in workspace.fresh_index().paths)
    listed = composites.manage(team, "alice", "stack", "list", None)
    assert listed["operation"] == "list" and listed["total_components"] == 2
    with pytest.raises(AliasTaken):
        composites.manage(team, "alice", "stack", "add", "docs-global")
    with pytest.raises(WrongRepositoryKind) as not_global:
        composites.manage(team, "alice", "stack", "add", "mine")
    assert not_global.value.message == "Component 'mine' must be a global repository"
    with pytest.raises(UnknownRepository) as missing:
        composites.manage(team, "alice", "stack", "add", "nonexistent-global")
    assert missing.value.message == "Component repository 'nonexistent-global' not found"
    with pytest.raises(UnknownRepository):
        composites.manage(team, "alice", "stack", "remove", "backend-global")
    activations.activate(team, "alice", "docs-global", "plain", None)
    with pytest.raises(WrongRepositoryKind):
        composites.manage(team, "alice", "plain", "list", None)
    with pytest.raises(UnknownRepository):  # bob has no composite of that name
        composites.manage(team, "bob", "stack", "list", None)


def test_deactivating_a_composite_frees_every_component(
    team: Team, both: dict[str, object]
) -> None:
    record = team.registry.find_activation("alice", "stack")
    assert record is not None
    reply = activations.deactivate(team, "alice", "stack")
    assert not team.user_path(record).exists()
    assert reply["space_freed_bytes"] > 0
    assert team.registry.components("alice", "stack") == []


def test_syncing_a_composite_follows_its_shared_repositories(
    team: Team, both: dict[str, object], tmp_path: Path
) -> None:
    from tests.team.conftest import push_from

    bare = tmp_path / "upstreams" / "frontend.git"
    pushed = push_from(bare, tmp_path, {"docs/new-page.md": "# New page\n"}, "new page")
    shared.refresh(team, "frontend-global", embed=False)
    record = team.registry.find_activation("alice", "stack")
    assert record is not None
    with pytest.raises(WrongRepositoryKind):  # no remote of its own
        activations.sync(team, "alice", "stack")
    reply = composites.follow(team, record)
    assert reply["updated"] == ["frontend-global"]
    assert reply["components"][1]["head"] == pushed
    with team.open(team.user_path(record)) as workspace:
        assert "frontend/docs/new-page.md" in workspace.fresh_index().paths


def test_a_composites_own_cards_are_named_before_it_goes(
    team: Team, both: dict[str, object]
) -> None:
    record = team.registry.find_activation("alice", "stack")
    assert record is not None
    assert activations.unsaved_work(team, record) == []
    with team.open(team.user_path(record)) as workspace:
        from cuedeck_tasks.tools import create_task

        card = create_task(workspace, "Across the stack")
    assert activations.unsaved_work(team, record) == [f"card: {card['id']}.md"]
