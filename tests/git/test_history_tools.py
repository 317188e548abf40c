"""The history tools on a real repository: blame of a line range, a file's history across
a rename, commits by message, author and date, and the pickaxe (-S and -G)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuedeck.errors import CueError, InvalidInput
from tests.git.conftest import Call, git


@pytest.fixture
def history(repo: Path) -> Path:
    """src/app.py grown over three commits by two authors, then renamed to src/main.py."""
    app = repo / "src" / "app.py"
    app.write_text("def main():\n    return 1\n\n\ndef retry_budget():\n    return 3\n")
    git(repo, "commit", "-qam", "Add retry budget")
    app.write_text(
        "def main():\n    return 2\n\n\ndef retry_budget():\n    return 3\n", encoding="utf-8"
    )
    git(repo, "-c", "user.name=Bo Builder", "-c", "user.email=bo@example.org",
        "commit", "-qam", "Fix main's answer")  # fmt: skip
    git(repo, "mv", "src/app.py", "src/main.py")
    git(repo, "commit", "-qm", "Rename app to main")
    return repo


def test_blame_names_the_commit_of_each_line(history: Path, call: Call) -> None:
    reply = call("git_blame", file_path="src/main.py", start_line=1, end_line=6)
    assert [(line["line"], line["summary"]) for line in reply["lines"]] == [
        (1, "first commit"),
        (2, "Fix main's answer"),
        (3, "Add retry budget"),
        (4, "Add retry budget"),
        (5, "Add retry budget"),
        (6, "Add retry budget"),
    ]
    assert reply["lines"][1]["author"] == "Bo Builder"
    assert reply["lines"][0]["original_path"] == "src/app.py"  # blame follows the rename
    assert reply["commits"] == 3
    with pytest.raises(InvalidInput, match="past the end"):
        call("git_blame", file_path="src/main.py", start_line=50)
    with pytest.raises(CueError, match="not in the repository") as caught:
        call("git_blame", file_path="src/nothing.py")
    assert caught.value.code == 1035
    with pytest.raises(CueError) as bad_ref:
        call("git_blame", file_path="src/main.py", ref="--output=/tmp/x")
    assert bad_ref.value.code == 1004


def test_file_history_follows_renames(history: Path, call: Call) -> None:
    reply = call("git_file_history", file_path="src/main.py")
    found = [(c["subject"], c["path"], c["old_path"], c["status"]) for c in reply["commits"]]
    assert found == [
        ("Rename app to main", "src/main.py", "src/app.py", "renamed"),
        ("Fix main's answer", "src/app.py", None, "modified"),
        ("Add retry budget", "src/app.py", None, "modified"),
        ("first commit", "src/app.py", None, "added"),
    ]
    first = call("git_file_history", file_path="src/main.py", limit=2)
    assert (first["returned"], first["has_more"], first["next_offset"]) == (2, True, 2)
    rest = call("git_file_history", file_path="src/main.py", offset=2)
    assert [c["subject"] for c in rest["commits"]] == ["Add retry budget", "first commit"]
    with pytest.raises(CueError, match="no history") as caught:
        call("git_file_history", file_path="nothing.py")
    assert caught.value.code == 1035


def test_search_commits_by_message_author_and_date(history: Path, call: Call) -> None:
    by_message = call("git_search_commits", message="retry")
    assert [c["subject"] for c in by_message["commits"]] == ["Add retry budget"]
    assert by_message["commits"][0]["files"] == ["src/app.py"]
    by_author = call("git_search_commits", author="bo@example")
    assert [c["subject"] for c in by_author["commits"]] == ["Fix main's answer"]
    assert call("git_search_commits", until="2001-01-01")["commits"] == []
    assert len(call("git_search_commits", since="2001-01-01")["commits"]) == 4
    with pytest.raises(InvalidInput, match="say what to look for"):
        call("git_search_commits")


def test_search_diffs_finds_when_text_came_and_went(history: Path, call: Call) -> None:
    added = call("git_search_diffs", text="retry_budget")
    assert [c["subject"] for c in added["commits"]] == ["Add retry budget"]
    changed = call("git_search_diffs", text=r"return [12]", match="regex")
    assert [c["subject"] for c in changed["commits"]] == ["Fix main's answer", "first commit"]
    one = call("git_search_diffs", text=r"return [12]", match="regex", limit=1)
    assert (one["has_more"], one["next_offset"]) == (True, 1)
    with pytest.raises(InvalidInput, match="one line"):
        call("git_search_diffs", text="a\nb")
