"""Activations on real git: a personal working copy seeded from the shared index, two
users' copies independent, deactivation freeing what it says, sync against a real bare
remote."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from cuedeck.errors import InvalidInput
from cuedeck_mcp.errors import UnknownRepository
from cuedeck_team import activations, shared
from cuedeck_team.disk import footprint
from cuedeck_team.errors import AliasTaken, NoRemote, RepositoryBusy, WrongRepositoryKind
from tests.team.conftest import BACKEND, git, push_from, write

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from cuedeck_team.home import Team

FEATURE = {
    "docs/auth.md": "# Auth\n\n## Login\n\nLogin uses passkeys now.\n",
    "docs/new.md": "# New\n",
}


@pytest.fixture
def backend(team: Team, upstream: Callable[..., Path]) -> Path:
    """backend-global registered from a bare upstream with a feature branch; the bare."""
    bare = upstream("backend", BACKEND, {"feature": FEATURE})
    shared.register(team, str(bare), "backend", by="admin", embed=False)
    return bare


def _tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` but git's and CueDeck's own, with its bytes."""
    found = {}
    for current, folders, files in os.walk(root):
        folders[:] = [f for f in folders if f not in (".git", ".cuedeck")]
        for name in files:
            path = os.path.join(current, name)
            with open(path, "rb") as handle:
                found[os.path.relpath(path, root)] = handle.read()
    return found


def test_an_activation_reuses_the_shared_index(team: Team, backend: Path) -> None:
    reply = activations.activate(team, "alice", "backend-global", None, None)
    assert reply["repository_alias"] == "backend" and reply["branch"] == "main"
    assert reply["seeded_from_shared"] is True
    assert reply["parsed"] == 0 and reply["reused"] == reply["files"]  # nothing parsed again
    on_feature = activations.activate(team, "alice", "backend-global", "feat", "feature")
    # On another branch only the files that differ are parsed: auth.md changed, new.md new.
    assert on_feature["parsed"] == 2 and on_feature["reused"] == on_feature["files"] - 2
    folder = team.user_path(team.registry.find_activation("alice", "feat"))  # type: ignore[arg-type]
    assert git(folder, "branch", "--show-current").strip() == "feature"
    assert git(folder, "rev-parse", "--abbrev-ref", "@{upstream}").strip() == "origin/feature"
    assert git(folder, "remote", "get-url", "origin").strip() == str(backend)  # the real source
    assert git(folder, "status", "--porcelain", "--untracked-files=all") == ""


def test_two_users_activations_are_independent(team: Team, backend: Path) -> None:
    activations.activate(team, "alice", "backend-global", "work", None)
    activations.activate(team, "bob", "backend-global", "work", None)  # same alias, own copy
    alice = team.user_path(team.registry.find_activation("alice", "work"))  # type: ignore[arg-type]
    bob = team.user_path(team.registry.find_activation("bob", "work"))  # type: ignore[arg-type]
    golden = team.shared_path("backend-global")
    golden_before, golden_refs = _tree(golden), git(golden, "show-ref")
    write(alice, {"docs/auth.md": "# Auth\n\nAlice's rewrite.\n", "notes.md": "# Notes\n"})
    git(alice, "add", "--all")
    git(alice, "commit", "--quiet", "-m", "alice's work")
    git(alice, "branch", "alice-only")
    git(alice, "branch", "-D", "alice-only")
    assert _tree(bob) == golden_before and git(bob, "status", "--porcelain") == ""
    assert "alice" not in git(bob, "log", "--all", "--format=%s")
    assert _tree(golden) == golden_before and git(golden, "show-ref") == golden_refs
    assert "alice" not in git(golden, "log", "--all", "--format=%s")
    with pytest.raises(AliasTaken):
        activations.activate(team, "alice", "backend-global", "work", None)
    assert [a.owner for a in team.registry.activations()] == ["alice", "bob"]


def test_deactivation_frees_what_it_says(team: Team, backend: Path) -> None:
    activations.activate(team, "alice", "backend-global", "work", None)
    record = team.registry.find_activation("alice", "work")
    assert record is not None
    folder = team.user_path(record)
    expected = footprint(folder)  # measured before, independently of the reply
    caches = sorted(
        p.relative_to(folder).as_posix() for p in (folder / ".cuedeck" / ".cache").iterdir()
    )
    golden = team.shared_path("backend-global")
    golden_before = footprint(golden)
    reply = activations.deactivate(team, "alice", "work")
    assert not folder.exists() and team.registry.find_activation("alice", "work") is None
    assert reply["space_freed_bytes"] == expected.own > 0
    assert reply["shared_bytes_kept"] == expected.shared > 0  # object files linked to golden
    assert ".cuedeck/.cache/index.sqlite3" in reply["indexes_deleted"]
    assert set(reply["indexes_deleted"]) <= set(caches)
    # The shared repository lost nothing: its object files are its own again.
    assert footprint(golden).total == golden_before.total
    assert git(golden, "fsck", "--no-progress", "--no-dangling") == ""
    with pytest.raises(UnknownRepository):
        activations.deactivate(team, "alice", "work")
    with pytest.raises(WrongRepositoryKind):
        activations.deactivate(team, "alice", "backend-global")


def test_unsaved_work_is_named_before_deactivation(team: Team, backend: Path) -> None:
    activations.activate(team, "alice", "backend-global", "work", None)
    record = team.registry.find_activation("alice", "work")
    assert record is not None and activations.unsaved_work(team, record) == []
    folder = team.user_path(record)
    write(folder, {"draft.md": "# Draft\n"})
    write(folder, {"README.md": "# Changed\n"})
    git(folder, "add", "README.md")
    git(folder, "commit", "--quiet", "-m", "local only")
    lost = activations.unsaved_work(team, record)
    assert lost[0] == "changed: draft.md" and lost[1].startswith("unpushed commit: ")
    assert lost[1].endswith("local only")


def test_sync_reports_ahead_behind_and_refs_against_a_real_remote(
    team: Team, backend: Path, tmp_path: Path
) -> None:
    activations.activate(team, "alice", "backend-global", "work", None)
    folder = team.user_path(team.registry.find_activation("alice", "work"))  # type: ignore[arg-type]
    quiet = activations.sync(team, "alice", "work")
    assert (quiet["ahead"], quiet["behind"], quiet["updated_refs"]) == (0, 0, [])
    pushed = push_from(backend, tmp_path, {"CHANGELOG.md": "# Changes\n"}, "upstream change")
    write(folder, {"mine.md": "# Mine\n"})
    git(folder, "add", "mine.md")
    git(folder, "commit", "--quiet", "-m", "mine")
    git(tmp_path, "--git-dir", str(backend), "branch", "-D", "feature")
    kept = activations.sync(team, "alice", "work")  # no prune: the gone branch stays
    assert kept == {
        "success": True,
        "repository_alias": "work",
        "current_branch": "main",
        "has_upstream": True,
        "ahead": 1,
        "behind": 1,
        "updated_refs": ["refs/remotes/origin/main"],
        "pruned_refs": [],
        "needs_pull": True,
        "needs_push": True,
    }
    assert git(folder, "rev-parse", "origin/main").strip() == pushed
    assert not (folder / "CHANGELOG.md").exists()  # the working tree is not touched
    pruned = activations.sync(team, "alice", "work", prune=True)
    assert pruned["pruned_refs"] == ["refs/remotes/origin/feature"]
    assert pruned["updated_refs"] == []
    with pytest.raises(WrongRepositoryKind) as global_sync:
        activations.sync(team, "alice", "backend-global")
    assert global_sync.value.message == "Repository 'backend-global' is a global repository"


def test_sync_without_a_remote_is_1405(team: Team, backend: Path) -> None:
    activations.activate(team, "alice", "backend-global", "work", None)
    folder = team.user_path(team.registry.find_activation("alice", "work"))  # type: ignore[arg-type]
    git(folder, "remote", "remove", "origin")
    with pytest.raises(NoRemote):
        activations.sync(team, "alice", "work")


def test_activation_errors_leave_nothing_behind(team: Team, backend: Path) -> None:
    with pytest.raises(InvalidInput) as no_branch:
        activations.activate(team, "alice", "backend-global", "work", "nope")
    assert no_branch.value.data["candidates"] == ["feature", "main"]
    assert team.registry.find_activation("alice", "work") is None
    assert not (team.folder / "users" / "alice" / "work").exists()
    with pytest.raises(InvalidInput) as global_name:
        activations.activate(team, "alice", "backend-global", "mine-global", None)
    assert global_name.value.data["field"] == "user_alias"
    with pytest.raises(UnknownRepository):
        activations.activate(team, "alice", "frontend-global", None, None)


def test_a_half_made_activation_of_a_dead_process_is_cleaned_up(team: Team, backend: Path) -> None:
    team.registry.begin_activation("alice", "work", "activation", "backend-global", "main", "work")
    left = team.folder / "users" / "alice" / "work"
    left.mkdir(parents=True)
    (left / "half.txt").write_text("half", encoding="utf-8")
    with pytest.raises(RepositoryBusy):  # as long as it may still be being made
        team.registry.begin_activation(
            "alice", "work", "activation", "backend-global", "main", "work"
        )
    reply = activations.activate(
        team, "alice", "backend-global", "work", None
    )  # nobody holds its lock
    assert reply["success"] is True and not (left / "half.txt").exists()
