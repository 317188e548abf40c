"""git_status, git_diff, git_log and git_branch_list on a real repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuedeck.errors import InvalidInput
from cuedeck_git.errors import GitFailed
from tests.git.conftest import Call, git


def test_status_lists_every_kind_of_change(repo: Path, call: Call) -> None:
    (repo / "src" / "app.py").write_text("def main():\n    return 2\n", encoding="utf-8")
    (repo / "notes.txt").write_text("new\n", encoding="utf-8")
    git(repo, "mv", "README.md", "READ.md")
    (repo / "debug.log").write_text("ignored\n", encoding="utf-8")
    status = call("git_status")
    assert status["branch"] == "main" and status["upstream"] == "origin/main"
    assert status["staged"] == [{"path": "READ.md", "status": "renamed", "old_path": "README.md"}]
    assert status["unstaged"] == [{"path": "src/app.py", "status": "modified", "old_path": None}]
    assert status["untracked"] == ["notes.txt"]  # the ignored log is not listed
    assert status["clean"] is False and status["ahead"] == 0


def test_status_counts_ahead_and_a_clean_tree(repo: Path, call: Call) -> None:
    assert call("git_status")["clean"] is True
    git(repo, "commit", "--quiet", "--allow-empty", "-m", "local only")
    assert call("git_status")["ahead"] == 1


def test_status_of_a_workspace_inside_a_bigger_repository(tmp_path: Path) -> None:
    from cuedeck.workspace import open_workspace

    top = tmp_path / "mono"
    ws = top / "services" / "api"
    (ws / ".cuedeck" / "cards").mkdir(parents=True)
    (top / "other.txt").parent.mkdir(parents=True, exist_ok=True)
    (top / "other.txt").write_text("outside\n", encoding="utf-8")
    (ws / "main.py").write_text("x = 1\n", encoding="utf-8")
    git(top, "init", "--quiet")
    git(top, "add", "--all")
    git(top, "commit", "--quiet", "-m", "init")
    (top / "other.txt").write_text("changed outside\n", encoding="utf-8")
    (ws / "main.py").write_text("x = 2\n", encoding="utf-8")
    workspace = open_workspace(ws)
    status = workspace.plugins.tools()["git_status"].call(workspace, {})
    assert status["unstaged"] == [{"path": "main.py", "status": "modified", "old_path": None}]


def test_status_outside_a_repository_names_the_cause(tmp_path: Path) -> None:
    from cuedeck.workspace import open_workspace

    (tmp_path / "plain" / ".cuedeck" / "cards").mkdir(parents=True)
    (tmp_path / ".git").mkdir()  # not a repository: git must not find a parent one
    workspace = open_workspace(tmp_path / "plain")
    with pytest.raises(GitFailed) as failed:
        workspace.plugins.tools()["git_status"].call(workspace, {})
    assert failed.value.data["reason"] == "not_a_repository"
    assert "git init" in failed.value.data["help"]


def test_a_big_diff_is_paged_and_the_pages_rebuild_it(repo: Path, call: Call) -> None:
    big = "".join(f"line {n} of a long generated change\n" for n in range(5000))
    (repo / "src" / "big.py").write_text(big, encoding="utf-8")
    git(repo, "add", "src/big.py")
    first = call("git_diff", staged=True)
    assert first["has_more"] and first["requires_pagination"]
    assert first["estimated_tokens"] <= first["max_tokens_per_request"]
    assert first["files"] == [
        {"path": "src/big.py", "old_path": None, "additions": 5000, "deletions": 0}
    ]
    pages = [first["diff"]]
    page = first
    while page["has_more"]:
        offset = page["offset"] + page["returned_lines"]
        assert f"offset={offset}" in page["pagination_hint"]
        page = call("git_diff", staged=True, offset=offset)
        pages.append(page["diff"])
    whole = git(repo, "diff", "--cached", "--no-ext-diff")
    assert "".join(pages) == whole
    assert len(pages) > 2


def test_diff_between_commits_and_for_one_path(repo: Path, call: Call) -> None:
    (repo / "src" / "app.py").write_text("def main():\n    return 3\n", encoding="utf-8")
    (repo / "README.md").write_text("# Demo, changed\n", encoding="utf-8")
    git(repo, "commit", "--quiet", "-am", "two files")
    both = call("git_diff", from_ref="HEAD~1", to_ref="HEAD")
    assert {f["path"] for f in both["files"]} == {"src/app.py", "README.md"}
    one = call("git_diff", from_ref="HEAD~1", file_paths=["README.md"])
    assert [f["path"] for f in one["files"]] == ["README.md"] and "return 3" not in one["diff"]


def test_diff_never_shows_a_denied_file(repo: Path, call: Call) -> None:
    (repo / ".env").write_text("TOKEN=one\n", encoding="utf-8")
    git(repo, "add", "-f", ".env")
    git(repo, "commit", "--quiet", "-m", "env")
    (repo / ".env").write_text("TOKEN=two\n", encoding="utf-8")
    (repo / "README.md").write_text("# Changed\n", encoding="utf-8")
    diff = call("git_diff")
    assert [f["path"] for f in diff["files"]] == ["README.md"]
    assert "TOKEN" not in diff["diff"]
    with pytest.raises(InvalidInput):
        call("git_diff", file_paths=[".env"])


def test_revisions_that_look_like_options_are_refused(repo: Path, call: Call) -> None:
    with pytest.raises(InvalidInput) as option:
        call("git_diff", from_ref="--output=/tmp/x")
    assert option.value.data["field"] == "from_ref"
    with pytest.raises(GitFailed) as unknown:
        call("git_log", ref="no-such-branch")
    assert unknown.value.data["reason"] == "unknown_revision"
    with pytest.raises(InvalidInput):
        call("git_diff", file_paths=["../outside"])


def test_log_pages_by_commit(repo: Path, call: Call) -> None:
    for n in range(5):
        (repo / "README.md").write_text(f"# Demo {n}\n", encoding="utf-8")
        git(repo, "commit", "--quiet", "-am", f"edit {n}", "-m", f"body of {n}")
    first = call("git_log", limit=2)
    assert [c["subject"] for c in first["commits"]] == ["edit 4", "edit 3"]
    assert first["commits"][0]["body"] == "body of 4"
    assert first["has_more"] and first["next_offset"] == 2
    rest = call("git_log", limit=10, offset=first["next_offset"])
    assert [c["subject"] for c in rest["commits"]] == ["edit 2", "edit 1", "edit 0", "first commit"]
    assert rest["has_more"] is False and rest["next_offset"] is None
    only_app = call("git_log", file_paths=["src/app.py"])
    assert [c["subject"] for c in only_app["commits"]] == ["first commit"]


def test_log_stops_at_the_token_budget(repo: Path, call: Call, tmp_path: Path) -> None:
    (repo / ".cuedeck" / "config.toml").write_text("[files]\nmax_tokens = 300\n", encoding="utf-8")
    for n in range(4):
        git(repo, "commit", "--quiet", "--allow-empty", "-m", f"commit {n}", "-m", "x " * 40)
    from cuedeck.serving.reply import reply_size
    from cuedeck.workspace import open_workspace

    workspace = open_workspace(repo)
    page = workspace.plugins.tools()["git_log"].call(workspace, {"limit": 10})
    assert 1 <= page["returned"] < 4 and page["truncated"]
    assert page["next_offset"] == page["returned"]
    assert reply_size(page, workspace.count_tokens) <= 300  # the whole reply


def test_branch_list(repo: Path, call: Call) -> None:
    git(repo, "branch", "feature")
    git(repo, "commit", "--quiet", "--allow-empty", "-m", "ahead")
    listed = call("git_branch_list")
    assert listed["current_branch"] == "main"
    by_name = {b["name"]: b for b in listed["branches"]}
    assert by_name["main"]["is_current"] and by_name["main"]["ahead"] == 1
    assert by_name["feature"]["upstream"] is None and not by_name["feature"]["is_current"]
