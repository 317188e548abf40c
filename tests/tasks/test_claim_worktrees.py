"""Claims live where every git worktree of a repository sees them, and nowhere git looks."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from cuedeck.workspace import open_workspace
from cuedeck_tasks.claim_home import claim_home
from cuedeck_tasks.claims import ClaimStore
from cuedeck_tasks.errors import CardClaimed
from tests.tasks.conftest import card_text


def git(root: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t")  # fmt: skip
    done = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, env=env, check=True
    )
    return done.stdout


@pytest.fixture
def worktrees(tmp_path: Path) -> tuple[Path, Path]:
    """A repository with two cards, and a second worktree of it on another branch."""
    main = tmp_path / "main"
    for card in ("w1w1w1", "w2w2w2"):
        path = main / ".cuedeck" / "cards" / f"{card}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(card_text(card, f"Card {card}"))
    (main / ".cuedeck" / "docs").mkdir()
    git(main.parent, "init", "-q", "-b", "main", str(main))
    git(main, "add", "-A")
    git(main, "commit", "-qm", "cards")
    other = tmp_path / "other"
    git(main, "worktree", "add", "-q", "-b", "feature", str(other))
    return main, other


def test_a_claim_in_one_worktree_is_seen_in_the_other(worktrees: tuple[Path, Path]) -> None:
    main, other = (open_workspace(root) for root in worktrees)
    tools_main, tools_other = main.plugins.tools(), other.plugins.tools()
    tools_main["claim_task"].call(main, {"id": "w1w1w1", "agent": "ann", "paths": ["src/a.py"]})
    with pytest.raises(CardClaimed) as refused:
        tools_other["claim_task"].call(other, {"id": "w1w1w1", "agent": "bob"})
    assert refused.value.data["holder"] == "ann"
    listed = {t["id"]: t["claim"] for t in tools_other["list_tasks"].call(other, {})}
    assert listed["w1w1w1"]["agent"] == "ann" and listed["w2w2w2"] is None
    taken = tools_other["next_task"].call(other, {"agent": "bob"})
    assert taken["id"] == "w2w2w2" and taken["held"] == 1
    assert tools_main["next_task"].call(main, {"agent": "cid"})["id"] is None


def test_claims_are_kept_in_the_common_git_dir_outside_every_work_tree(
    worktrees: tuple[Path, Path],
) -> None:
    main, other = worktrees
    homes = [claim_home(root) for root in worktrees]
    assert homes[0].path == homes[1].path == (main / ".git" / "cuedeck" / "claims.sqlite3")
    assert homes[0].scope == homes[1].scope == ""
    ClaimStore(other).claim("w1w1w1", "ann", lease=60)
    assert (main / ".git" / "cuedeck" / "claims.sqlite3").is_file()
    for root in worktrees:
        assert git(root, "status", "--porcelain", "--ignored") == ""


def test_workspaces_in_subfolders_of_one_repository_keep_apart(tmp_path: Path) -> None:
    repo = tmp_path / "mono"
    for sub in ("api", "web"):
        (repo / sub / ".cuedeck" / "cards").mkdir(parents=True)
    git(tmp_path, "init", "-q", str(repo))
    api, web = ClaimStore(repo / "api"), ClaimStore(repo / "web")
    assert api.path == web.path and (api.scope, web.scope) == ("api", "web")
    api.claim("s1s1s1", "ann", lease=60)
    web.claim("s1s1s1", "bob", lease=60)  # another workspace's card of the same id
    assert api.live()["s1s1s1"].agent == "ann" and web.live()["s1s1s1"].agent == "bob"


def test_outside_git_claims_live_in_the_workspace_cache(tmp_path: Path) -> None:
    home = claim_home(tmp_path)
    assert home.path == tmp_path / ".cuedeck" / ".cache" / "claims.sqlite3"
    assert home.common_dir is None
