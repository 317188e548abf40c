"""Destructive git tools act only with a token bound to their exact call and state."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cuedeck.errors import ConfirmationRequired
from cuedeck.layout import CONFIRMATIONS_PATH
from tests.git.conftest import Call, git


@dataclass
class Case:
    """A destructive call, a call with other arguments, and how to tell if it acted."""

    tool: str
    setup: Callable[[Path], None]
    arguments: dict[str, Any]
    other_arguments: dict[str, Any]
    change_state: Callable[[Path], None]
    acted: Callable[[Path], bool]


def _edit(path: str, text: str) -> Callable[[Path], None]:
    return lambda root: (root / path).write_text(text, encoding="utf-8")


def _two_commits(root: Path) -> None:
    (root / "README.md").write_text("# Second\n", encoding="utf-8")
    git(root, "commit", "--quiet", "-am", "second")
    (root / "README.md").write_text("# Uncommitted\n", encoding="utf-8")


def _junk(root: Path) -> None:
    (root / "junk.txt").write_text("scratch\n", encoding="utf-8")
    (root / "trace.log").write_text("ignored\n", encoding="utf-8")


def _spikes(root: Path) -> None:
    for name in ("spike", "spike2"):
        git(root, "switch", "--quiet", "-C", name, "main")
        git(root, "commit", "--quiet", "--allow-empty", "-m", f"only on {name}")
    git(root, "switch", "--quiet", "main")


def _new_commit_on_spike(root: Path) -> None:
    git(root, "switch", "--quiet", "spike")
    git(root, "commit", "--quiet", "--allow-empty", "-m", "more")
    git(root, "switch", "--quiet", "main")


def _local_edits(root: Path) -> None:
    (root / "README.md").write_text("# Local work\n", encoding="utf-8")
    (root / "src" / "app.py").write_text("def main():\n    return 9\n", encoding="utf-8")


def _text(root: Path, path: str) -> str:
    return (root / path).read_text(encoding="utf-8")


CASES = [
    Case(
        "git_reset",
        _two_commits,
        {"mode": "hard", "target": "origin/main"},
        {"mode": "hard", "target": "HEAD"},
        _edit("README.md", "# Edited again\n"),
        lambda root: _text(root, "README.md") == "# Demo\n",
    ),
    Case(
        "git_clean",
        _junk,
        {},
        {"include_ignored": True},
        _edit("junk.txt", "more scratch\n"),
        lambda root: not (root / "junk.txt").exists(),
    ),
    Case(
        "git_branch_delete",
        _spikes,
        {"branch_name": "spike"},
        {"branch_name": "spike2"},
        _new_commit_on_spike,
        lambda root: "spike\n" not in git(root, "branch", "--format=%(refname:short)"),
    ),
    Case(
        "git_checkout_file",
        _local_edits,
        {"file_path": "README.md"},
        {"file_path": "src/app.py"},
        _edit("README.md", "# Even more local work\n"),
        lambda root: _text(root, "README.md") == "# Demo\n",
    ),
]


def _asked(reply: dict[str, Any]) -> str:
    assert set(reply) == {"requires_confirmation", "confirmation_token", "warning_message"}
    assert reply["requires_confirmation"] is True
    return str(reply["confirmation_token"])


def _refused(call: Call, case: Case, token: str, arguments: dict[str, Any] | None = None) -> str:
    with pytest.raises(ConfirmationRequired) as refused:
        call(case.tool, **(arguments or case.arguments), confirmation_token=token)
    fresh = refused.value.data["confirmation_token"]
    assert fresh != token and refused.value.data["warning_message"]
    return str(fresh)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.tool)
def test_every_wrong_token_is_refused_and_the_right_one_acts(
    repo: Path, call: Call, case: Case
) -> None:
    case.setup(repo)
    first = call(case.tool, **case.arguments)
    token = _asked(first)
    assert not case.acted(repo)

    _refused(call, case, "AAAA-BBBB-CCCC")  # never issued
    for_other = _asked(call(case.tool, **case.other_arguments))
    _refused(call, case, for_other)  # issued for other arguments
    assert not case.acted(repo)

    # The right token, but the state it would destroy changed since: refused.
    case.change_state(repo)
    token = _refused(call, case, token)
    assert not case.acted(repo)

    # Expired: age every pending token past its five minutes.
    store = repo / CONFIRMATIONS_PATH
    pending = json.loads(store.read_text(encoding="utf-8"))
    for entry in pending.values():
        entry["expires"] = time.time() - 1
    store.write_text(json.dumps(pending), encoding="utf-8")
    token = _refused(call, case, token)
    assert not case.acted(repo)

    done = call(case.tool, **case.arguments, confirmation_token=token)
    assert done["success"] is True and "requires_confirmation" not in done
    assert case.acted(repo)
    case.setup(repo)  # something to destroy again, for the spent token
    with pytest.raises(ConfirmationRequired) as reused:
        call(case.tool, **case.arguments, confirmation_token=token)
    assert reused.value.data["reason"] == "unknown or already used"


def test_warnings_name_what_would_be_lost(repo: Path, call: Call) -> None:
    _two_commits(repo)
    git(repo, "commit", "--quiet", "--allow-empty", "-m", "unpushed work")
    reset = call("git_reset", mode="hard", target="origin/main")["warning_message"]
    assert "README.md (+1 -1)" in reset
    assert "2 commit(s) from the branch" in reset and "unpushed work" in reset
    _junk(repo)
    clean = call("git_clean", include_ignored=True)["warning_message"]
    assert "junk.txt" in clean and "trace.log" in clean and ".cache" not in clean
    _spikes(repo)
    assert "only on spike" in call("git_branch_delete", branch_name="spike")["warning_message"]


def test_nothing_to_lose_needs_no_token(repo: Path, call: Call) -> None:
    assert call("git_clean") == {"success": True, "removed_files": []}
    git(repo, "branch", "merged")
    assert call("git_branch_delete", branch_name="merged")["deleted_branch"] == "merged"
    (repo / "README.md").unlink()
    restored = call("git_checkout_file", file_path="README.md")
    assert restored == {"success": True, "restored_files": ["README.md"]}
    assert _text(repo, "README.md") == "# Demo\n"
    soft = call("git_reset", mode="soft", target="HEAD")
    assert soft["success"] and soft["mode"] == "soft"


def test_clean_keeps_cuedecks_cache(repo: Path, call: Call) -> None:
    cache = repo / ".cuedeck" / ".cache"
    cache.mkdir(exist_ok=True)
    (cache / "index.db").write_bytes(b"cache")
    _junk(repo)
    token = call("git_clean", include_ignored=True)["confirmation_token"]
    done = call("git_clean", include_ignored=True, confirmation_token=token)
    assert sorted(done["removed_files"]) == ["junk.txt", "trace.log"]
    assert (cache / "index.db").exists()


def test_the_current_branch_cannot_be_deleted(repo: Path, call: Call) -> None:
    from cuedeck.errors import InvalidInput

    with pytest.raises(InvalidInput):
        call("git_branch_delete", branch_name="main")
