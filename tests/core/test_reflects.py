"""What a reply reflects: the index's tree digest, git's HEAD read from its files, the line."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cuedeck import open_workspace
from cuedeck.watch.reflects import Reflects, head_commit, reflects, reflects_line, reply_line
from tests.conftest import MakeWorkspace


def git(root: Path, *args: str) -> str:
    """Run git in ``root`` with a fixed identity and no user or system config; its output."""
    done = subprocess.run(
        ["git", "-c", "user.name=T", "-c", "user.email=t@example.org", *args],
        cwd=root, capture_output=True, text=True, check=True,
        env={"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    return done.stdout.strip()


@pytest.fixture
def repo(make_workspace: MakeWorkspace) -> Path:
    root = make_workspace({"docs/a.md": "# A\n"})
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "one")
    return root


def test_head_is_git_own_answer_through_branches_packs_detached_and_worktrees(
    repo: Path, tmp_path: Path
) -> None:
    assert head_commit(repo) == git(repo, "rev-parse", "HEAD")[:12]
    (repo / "docs/b.md").write_text("# B\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "two")
    git(repo, "pack-refs", "--all")  # the branch now lives in packed-refs only
    assert not (repo / ".git/refs/heads/main").exists()
    assert head_commit(repo) == git(repo, "rev-parse", "HEAD")[:12]
    git(repo, "checkout", "-q", "--detach", "HEAD~1")
    assert head_commit(repo) == git(repo, "rev-parse", "HEAD")[:12]
    git(repo, "checkout", "-q", "main")
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "side", str(linked), "HEAD~1")
    assert (linked / ".git").is_file()  # a linked worktree: HEAD here, refs shared
    assert head_commit(linked) == git(linked, "rev-parse", "HEAD")[:12]
    assert head_commit(linked / "docs") == head_commit(linked)  # found upwards
    assert head_commit(repo) != head_commit(linked)


def test_no_head_outside_git_or_before_the_first_commit(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"docs/a.md": "# A\n"})
    assert head_commit(root) is None  # tmp_path lies in no repository
    git(root, "init", "-q", "-b", "main")
    assert head_commit(root) is None  # HEAD names a branch that has no commit yet


def test_the_tree_digest_follows_the_indexed_files(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"docs/a.md": "# A\n", "docs/b.md": "# B\n"})
    workspace = open_workspace(root)
    workspace.refresh()
    first = reflects(workspace)
    assert first["tree"] == reflects(workspace)["tree"]
    (root / "docs/a.md").write_text("# A, edited\n")
    workspace.refresh()
    edited = reflects(workspace)["tree"]
    assert edited != first["tree"]
    (root / "docs/a.md").write_text("# A\n")
    workspace.refresh()
    assert reflects(workspace)["tree"] == first["tree"]  # the same files, the same digest
    other = open_workspace(root)
    other.refresh()
    assert reflects(other)["tree"] == first["tree"]  # whichever process computes it


def test_unwatched_replies_say_edits_after_the_check_are_not_seen(repo: Path) -> None:
    workspace = open_workspace(repo)
    workspace.refresh()
    block = reflects(workspace)
    assert block["watch"] == "none" and block["pending"] is None
    assert block["head"] == head_commit(repo)
    assert block["checked"].endswith("Z")
    line = reflects_line(block)
    assert line == (
        f"reflects index {block['tree']} at HEAD {block['head']}; files as of "
        f"{block['checked']}, not watched: later edits are not seen"
    )
    assert reply_line({"results": [], "reflects": block}) == line
    assert reply_line({"results": []}) is None


def watched(pending: list[str] | None) -> Reflects:
    return Reflects(
        tree="0" * 12, head=None, checked="2026-01-01T00:00:00Z", watch="watcher", pending=pending
    )


def test_the_line_names_what_a_watcher_reported_and_not_read_yet() -> None:
    assert reflects_line(watched([])).endswith("(no git HEAD); watched, nothing pending")
    line = reflects_line(watched(["a.py", "b.py", "c.md", "d.rs"]))
    assert line.endswith("watched, 4 changed files not read yet: a.py, b.py, c.md and 1 more")
    line = reflects_line(watched(None))
    assert line.endswith("watched, many files changed: the next call reads them all")
