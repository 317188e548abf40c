"""Staging, committing, branches and merges through the git tools, on a real repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuedeck.errors import InvalidInput
from cuedeck_git.errors import GitFailed
from tests.git.conftest import Call, git


def test_stage_commit_unstage(repo: Path, call: Call) -> None:
    (repo / "src" / "app.py").write_text("def main():\n    return 2\n", encoding="utf-8")
    (repo / "src" / "new.py").write_text("NEW = 1\n", encoding="utf-8")
    (repo / "README.md").unlink()
    staged = call("git_stage")
    assert sorted(staged["staged_files"]) == ["README.md", "src/app.py", "src/new.py"]
    unstaged = call("git_unstage", file_paths=["README.md"])
    assert unstaged["unstaged_files"] == ["README.md"]
    commit = call("git_commit", message="Change app\n\nAnd add new.py.")
    assert sorted(commit["files_committed"]) == ["src/app.py", "src/new.py"]
    assert commit["message"] == "Change app\n\nAnd add new.py."
    assert commit["author"] == "Ada Agent <ada@example.org>"
    assert git(repo, "rev-parse", "HEAD").strip() == commit["commit_hash"]
    assert commit["commit_hash"].startswith(commit["short_hash"])
    assert not (repo / "README.md").exists()
    assert "README.md" in git(repo, "ls-files")  # still tracked: its deletion was unstaged


def test_stage_never_takes_a_denied_file(repo: Path, call: Call) -> None:
    (repo / "server.pem").write_text("-----BEGIN PRIVATE KEY-----\n", encoding="utf-8")
    (repo / "ok.txt").write_text("fine\n", encoding="utf-8")
    assert call("git_stage")["staged_files"] == ["ok.txt"]
    with pytest.raises(InvalidInput):
        call("git_stage", file_paths=["server.pem"])
    assert "server.pem" not in git(repo, "diff", "--cached", "--name-only")


def test_a_pathspec_is_literal(repo: Path, call: Call) -> None:
    (repo / "a.py").write_text("a\n", encoding="utf-8")
    (repo / "*.py").write_text("star\n", encoding="utf-8")
    assert call("git_stage", file_paths=["*.py"])["staged_files"] == ["*.py"]


def test_commit_refusals_are_named(repo: Path, call: Call) -> None:
    with pytest.raises(GitFailed) as nothing:
        call("git_commit", message="empty")
    assert nothing.value.data["reason"] == "nothing_to_commit"
    # The message quotes git's line naming the cause, not its first line ("On branch").
    assert str(nothing.value).startswith("git commit failed: nothing to commit")
    with pytest.raises(InvalidInput):
        call("git_commit", message="   ")
    with pytest.raises(InvalidInput):
        call("git_commit", message="x", author="no email")


def test_commit_message_starting_with_a_dash_is_just_a_message(repo: Path, call: Call) -> None:
    (repo / "README.md").write_text("# New\n", encoding="utf-8")
    call("git_stage", file_paths=["README.md"])
    done = call("git_commit", message="--amend is not an option here")
    assert done["message"] == "--amend is not an option here"
    assert git(repo, "rev-list", "--count", "HEAD").strip() == "2"


def test_first_commit_of_an_empty_repository(tmp_path: Path) -> None:
    from cuedeck.workspace import open_workspace

    root = tmp_path / "fresh"
    (root / ".cuedeck" / "cards").mkdir(parents=True)
    (root / "a.txt").write_text("a\n", encoding="utf-8")
    git(root, "init", "--quiet")
    workspace = open_workspace(root)
    tools = workspace.plugins.tools()
    assert tools["git_status"].call(workspace, {})["commit"] is None
    assert tools["git_log"].call(workspace, {})["commits"] == []
    tools["git_stage"].call(workspace, {"file_paths": ["a.txt"]})
    assert tools["git_unstage"].call(workspace, {})["unstaged_files"] == ["a.txt"]
    tools["git_stage"].call(workspace, {"file_paths": ["a.txt"]})
    commit = tools["git_commit"].call(workspace, {"message": "root"})
    assert commit["files_committed"] == ["a.txt"]


def test_branch_create_switch_and_names(repo: Path, call: Call) -> None:
    assert call("git_branch_create", branch_name="feature/x")["created_branch"] == "feature/x"
    switched = call("git_branch_switch", branch_name="feature/x")
    assert switched == {"success": True, "from_branch": "main", "to_branch": "feature/x"}
    assert git(repo, "branch", "--show-current").strip() == "feature/x"
    for bad in ("-D", "has space", "a..b", "x.lock"):
        with pytest.raises(InvalidInput):
            call("git_branch_create", branch_name=bad)
    with pytest.raises(InvalidInput) as missing:
        call("git_branch_switch", branch_name="feature/y")
    assert missing.value.data["suggestion"] == "Did you mean 'feature/x'?"


def test_switch_refuses_to_overwrite_local_changes(repo: Path, call: Call) -> None:
    call("git_branch_create", branch_name="other")
    call("git_branch_switch", branch_name="other")
    (repo / "README.md").write_text("# On other\n", encoding="utf-8")
    git(repo, "commit", "--quiet", "-am", "other readme")
    call("git_branch_switch", branch_name="main")
    (repo / "README.md").write_text("# Local edit\n", encoding="utf-8")
    with pytest.raises(GitFailed) as refused:
        call("git_branch_switch", branch_name="other")
    assert refused.value.data["reason"] == "local_changes"
    assert (repo / "README.md").read_text(encoding="utf-8") == "# Local edit\n"


def test_merge_abort_after_a_real_conflict(repo: Path, call: Call) -> None:
    git(repo, "switch", "--quiet", "-c", "theirs")
    (repo / "README.md").write_text("# Theirs\n", encoding="utf-8")
    git(repo, "commit", "--quiet", "-am", "theirs")
    git(repo, "switch", "--quiet", "main")
    (repo / "README.md").write_text("# Ours\n", encoding="utf-8")
    git(repo, "commit", "--quiet", "-am", "ours")
    git(repo, "merge", "theirs", check=False)
    status = call("git_status")
    assert status["conflicted"] == ["README.md"] and status["merge_in_progress"]
    with pytest.raises(GitFailed) as conflict:
        call("git_commit", message="try")
    assert conflict.value.data["reason"] == "conflict"
    aborted = call("git_merge_abort")
    assert aborted["success"] and "HEAD is at" in aborted["message"]
    assert (repo / "README.md").read_text(encoding="utf-8") == "# Ours\n"
    with pytest.raises(GitFailed) as none:
        call("git_merge_abort")
    assert none.value.data["reason"] == "no_merge"
