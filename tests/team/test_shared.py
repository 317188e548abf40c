"""Shared repositories on real git: registered from a path or a file:// URL, indexed once,
refreshed from their source, removed."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from cuedeck.errors import InvalidInput
from cuedeck_git.errors import GitFailed
from cuedeck_mcp.errors import UnknownRepository
from cuedeck_team import shared
from cuedeck_team.errors import AliasTaken, CloneFailed
from tests.team.conftest import BACKEND, push_from

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from cuedeck_team.home import Team


def test_register_by_path_and_by_url_indexes_once(
    team: Team, upstream: Callable[..., Path]
) -> None:
    bare = upstream("backend", BACKEND, {"feature": {"docs/new.md": "# New\n"}})
    by_path = shared.register(team, str(bare), "backend", by="admin", embed=False)
    by_url = shared.register(team, bare.as_uri(), "mirror-global", by="admin", embed=False)
    assert by_path["alias"] == "backend-global" and by_url["alias"] == "mirror-global"
    assert by_path["files"] == by_path["parsed"] >= 2  # each file parsed once (code too,
    folder = team.shared_path("backend-global")  # where a code parser is installed)
    with team.open(folder) as workspace:
        assert {"README.md", "docs/auth.md"} <= set(workspace.fresh_index().paths)
    # The clone is a CueDeck workspace without a changed or untracked file for git.
    assert (folder / ".cuedeck" / ".cache" / "index.sqlite3").is_file()
    status = shared.gitops.git(folder, "status", "--porcelain", "--untracked-files=all")
    assert status.stdout == ""
    listed = {r.alias: shared.describe(team, r) for r in team.registry.shared()}
    assert set(listed) == {"backend-global", "mirror-global"}
    assert listed["mirror-global"]["source"] == bare.as_uri()
    status_reply = shared.describe(team, team.registry.shared()[0], detail=True)
    assert status_reply["files"] == by_path["files"]
    assert status_reply["branches"] == ["feature", "main"]


def test_a_registered_repository_is_embedded_for_semantic_search(
    team: Team, upstream: Callable[..., Path]
) -> None:
    bare = upstream("backend", BACKEND)
    reply = shared.register(team, str(bare), "backend", by="admin", embed=True)
    assert reply["embedded"] is not None and reply["embedded"] > 0
    with team.open(team.shared_path("backend-global")) as workspace:
        results = workspace.search("how is the password checked", mode="semantic", limit=3)
    assert results[0].path == "docs/auth.md"
    assert results[0].semantic_coverage == 1.0  # every section has its vector already


def test_registration_errors(team: Team, upstream: Callable[..., Path], tmp_path: Path) -> None:
    bare = upstream("backend", BACKEND)
    shared.register(team, str(bare), "backend", by="admin", embed=False)
    with pytest.raises(AliasTaken):
        shared.register(team, str(bare), "backend-global", by="admin", embed=False)
    with pytest.raises(CloneFailed) as no_branch:
        shared.register(team, str(bare), "other", branch="nope", by="admin", embed=False)
    assert no_branch.value.data["reason"] == "no_such_branch"
    assert team.registry.find_shared("other-global") is None  # nothing left behind
    assert not team.shared_path("other-global").exists()
    with pytest.raises(InvalidInput) as missing:
        shared.register(team, str(tmp_path / "nowhere"), "x", by="admin", embed=False)
    assert missing.value.data["field"] == "repo_url"
    with pytest.raises(InvalidInput):
        shared.register(team, "ext::sh -c touch% /tmp/pwned", "x", by="admin", embed=False)
    with pytest.raises(InvalidInput):
        shared.register(team, "--upload-pack=touch /tmp/pwned", "x", by="admin", embed=False)
    with pytest.raises(InvalidInput) as bad_alias:
        shared.register(team, str(bare), "../escape", by="admin", embed=False)
    assert bad_alias.value.data["field"] == "alias"
    with pytest.raises(UnknownRepository) as unknown:
        shared.find(team, "backnd-global")
    assert unknown.value.data["suggestion"] == "Did you mean 'backend-global'?"


def test_credentials_in_a_url_are_never_shown(team: Team) -> None:
    url = "https://alice:s3cr3t-t0ken@127.0.0.1:9/repo.git"  # nothing listens on port 9
    with pytest.raises(CloneFailed) as failed:
        shared.register(team, url, "private", by="admin", embed=False)
    assert "s3cr3t" not in str(failed.value.to_dict())
    assert failed.value.data["repo_url"] == "https://127.0.0.1:9/repo.git"


def test_refresh_moves_to_the_new_head_and_parses_only_what_changed(
    team: Team, upstream: Callable[..., Path], tmp_path: Path
) -> None:
    bare = upstream("backend", BACKEND)
    shared.register(team, str(bare), "backend", by="admin", embed=False)
    pushed = push_from(bare, tmp_path, {"docs/auth.md": "# Auth\n\nNow with passkeys.\n"}, "edit")
    reply = shared.refresh(team, "backend-global", embed=False)
    assert reply["changed"] is True and reply["head"] == pushed
    assert (reply["parsed"], reply["reused"]) == (1, reply["files"] - 1)
    text = (team.shared_path("backend-global") / "docs" / "auth.md").read_text()
    assert "passkeys" in text


def test_remove_deletes_the_clone_and_its_indexes(
    team: Team, upstream: Callable[..., Path]
) -> None:
    bare = upstream("backend", BACKEND)
    shared.register(team, str(bare), "backend", by="admin", embed=False)
    folder = team.shared_path("backend-global")
    reply = shared.remove(team, "backend-global")
    assert reply["space_freed_bytes"] > 0
    assert not folder.exists() and team.registry.shared() == []
    assert bare.is_dir()  # the source is never touched
    with pytest.raises((UnknownRepository, GitFailed)):
        shared.refresh(team, "backend-global", embed=False)
