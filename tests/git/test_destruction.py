"""What a git tool would destroy is named before it acts, refs are names and never refspecs,
and no branch or commit brings CueDeck's control files in through a tool."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuedeck.errors import ConfirmationRequired, InvalidInput, Protected
from tests.git.conftest import Call, git


def _text(root: Path, path: str) -> str:
    return (root / path).read_text(encoding="utf-8")


def _added_then_removed(root: Path) -> str:
    """Commit A adds notes.txt, commit B removes it; returns A."""
    (root / "notes.txt").write_text("committed notes\n", encoding="utf-8")
    git(root, "add", "notes.txt")
    git(root, "commit", "--quiet", "-m", "A: add notes")
    commit_a = git(root, "rev-parse", "HEAD").strip()
    git(root, "rm", "--quiet", "notes.txt")
    git(root, "commit", "--quiet", "-m", "B: remove notes")
    return commit_a


def test_reset_hard_names_the_untracked_file_it_overwrites(repo: Path, call: Call) -> None:
    commit_a = _added_then_removed(repo)
    (repo / "notes.txt").write_text("NEW WORK, never committed\n", encoding="utf-8")
    first = call("git_reset", mode="hard", target=commit_a)
    assert first["requires_confirmation"]
    assert "untracked or ignored file(s) it overwrites: notes.txt" in first["warning_message"]
    token = first["confirmation_token"]
    # The token is bound to the file it would overwrite, as it is now.
    (repo / "notes.txt").write_text("EVEN NEWER WORK\n", encoding="utf-8")
    with pytest.raises(ConfirmationRequired) as moved:
        call("git_reset", mode="hard", target=commit_a, confirmation_token=token)
    assert "state has changed" in moved.value.data["reason"]
    assert _text(repo, "notes.txt") == "EVEN NEWER WORK\n"
    fresh = moved.value.data["confirmation_token"]
    done = call("git_reset", mode="hard", target=commit_a, confirmed_token=fresh)
    assert done["success"] and _text(repo, "notes.txt") == "committed notes\n"


def test_reset_hard_names_an_ignored_file_and_a_file_in_the_way_of_a_folder(
    repo: Path, call: Call
) -> None:
    (repo / "debug.log").write_text("committed log\n", encoding="utf-8")
    (repo / "cfg").mkdir()
    (repo / "cfg" / "app.ini").write_text("x = 1\n", encoding="utf-8")
    git(repo, "add", "--force", "debug.log", "cfg/app.ini")
    git(repo, "commit", "--quiet", "-m", "A")
    commit_a = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "rm", "-r", "--quiet", "debug.log", "cfg")
    git(repo, "commit", "--quiet", "-m", "B")
    (repo / "debug.log").write_text("ignored, local\n", encoding="utf-8")  # *.log is ignored
    (repo / "cfg").write_text("a file where A has a folder\n", encoding="utf-8")
    warning = call("git_reset", mode="hard", target=commit_a)["warning_message"]
    assert "it overwrites: cfg, debug.log" in warning


def test_reset_hard_names_every_file_of_a_folder_a_file_replaces(repo: Path, call: Call) -> None:
    (repo / "notes").write_text("a committed file\n", encoding="utf-8")
    git(repo, "add", "notes")
    git(repo, "commit", "--quiet", "-m", "A")
    commit_a = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "rm", "--quiet", "notes")
    git(repo, "commit", "--quiet", "-m", "B")
    names = ["a.md", "b.md", "c.md", "deep/d.md", "deep/e.md"]
    for name in names:
        (repo / "notes" / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / "notes" / name).write_text(f"{name}: never committed\n", encoding="utf-8")
    asked = call("git_reset", mode="hard", target=commit_a)
    listed = ", ".join(f"notes/{name}" for name in names)
    assert f"5 untracked or ignored file(s) it overwrites: {listed}" in asked["warning_message"]
    (repo / "notes" / "deep" / "e.md").write_text("changed since\n", encoding="utf-8")
    with pytest.raises(ConfirmationRequired):  # the token is bound to each file's bytes
        call(
            "git_reset",
            mode="hard",
            target=commit_a,
            confirmation_token=asked["confirmation_token"],
        )


def test_soft_reset_that_leaves_commits_on_no_branch_asks(repo: Path, call: Call) -> None:
    git(repo, "commit", "--quiet", "--allow-empty", "-m", "local only")
    asked = call("git_reset", mode="soft", target="HEAD~1")
    assert asked["requires_confirmation"] and "local only" in asked["warning_message"]
    assert "local only" in git(repo, "log", "-1", "--format=%s")
    done = call("git_reset", mode="soft", target="HEAD~1", **{
        "confirmation_token": asked["confirmation_token"]
    })  # fmt: skip
    assert done["success"]


def test_checkout_file_names_an_untracked_file_it_overwrites(repo: Path, call: Call) -> None:
    commit_a = _added_then_removed(repo)
    (repo / "notes.txt").write_text("NEW WORK\n", encoding="utf-8")
    asked = call("git_checkout_file", file_path="notes.txt", ref=commit_a)
    assert "notes.txt (untracked or ignored)" in asked["warning_message"]
    assert _text(repo, "notes.txt") == "NEW WORK\n"
    # Issued for one ref, it confirms no other (ref is bound, resolved to its commit).
    with pytest.raises(ConfirmationRequired):
        call("git_checkout_file", file_path="notes.txt", ref="HEAD~1",
             confirmation_token=asked["confirmation_token"])  # fmt: skip
    assert _text(repo, "notes.txt") == "NEW WORK\n"


def test_switch_names_the_ignored_file_it_overwrites(repo: Path, call: Call) -> None:
    git(repo, "switch", "--quiet", "-c", "logs")
    (repo / "build.log").write_text("the branch's log\n", encoding="utf-8")
    git(repo, "add", "--force", "build.log")
    git(repo, "commit", "--quiet", "-m", "track a log")
    git(repo, "switch", "--quiet", "main")
    (repo / "build.log").write_text("MY LOCAL LOG\n", encoding="utf-8")  # ignored: *.log
    asked = call("git_branch_switch", branch_name="logs")
    assert asked["requires_confirmation"] and "build.log" in asked["warning_message"]
    assert git(repo, "branch", "--show-current").strip() == "main"
    assert _text(repo, "build.log") == "MY LOCAL LOG\n"
    done = call(
        "git_branch_switch", branch_name="logs", confirmed_token=asked["confirmation_token"]
    )
    assert done["to_branch"] == "logs" and _text(repo, "build.log") == "the branch's log\n"


@pytest.mark.parametrize(
    "bad",
    ["+main:feature", "main:feature", "-f", "--force", "+main", "main..feature", "a b",
     "main^{tree}", "main@{1}", "HEAD:README.md", "refs/heads/.hidden", "x.lock", "a\\b",
     "a\x00b", "@", "main~1:x"],
)  # fmt: skip
def test_every_ref_argument_is_a_name_never_a_refspec_or_option(
    repo: Path, call: Call, bad: str
) -> None:
    git(repo, "branch", "feature")
    git(repo, "commit", "--quiet", "--allow-empty", "-m", "only on main")
    before = git(repo, "for-each-ref", "--format=%(refname) %(objectname)")
    attempts = [
        ("git_pull", {"branch": bad}, "branch"),
        ("git_pull", {"remote": bad}, "remote"),
        ("git_push", {"branch": bad}, "branch"),
        ("git_fetch", {"remote": bad}, "remote"),
        ("git_branch_create", {"branch_name": bad}, "branch_name"),
        ("git_branch_create", {"branch_name": "ok", "start_point": bad}, "start_point"),
        ("git_branch_switch", {"branch_name": bad}, "branch_name"),
        ("git_branch_delete", {"branch_name": bad}, "branch_name"),
        ("git_reset", {"target": bad}, "target"),
        ("git_checkout_file", {"file_path": "README.md", "ref": bad}, "ref"),
        ("git_diff", {"from_ref": bad}, "from_ref"),
        ("git_diff", {"from_ref": "HEAD", "to_ref": bad}, "to_ref"),
        ("git_log", {"ref": bad}, "ref"),
    ]
    for tool, arguments, field in attempts:
        with pytest.raises(InvalidInput) as refused:
            call(tool, **arguments)
        assert refused.value.data["field"] == field, (tool, refused.value.message)
    assert git(repo, "for-each-ref", "--format=%(refname) %(objectname)") == before


def test_revisions_with_steps_back_still_work(repo: Path, call: Call) -> None:
    git(repo, "commit", "--quiet", "--allow-empty", "-m", "second")
    assert call("git_log", ref="HEAD~1")["commits"][0]["subject"] == "first commit"
    assert call("git_diff", from_ref="HEAD^", to_ref="main")["success"]
    first = git(repo, "rev-parse", "HEAD~1").strip()
    assert call("git_log", ref=first[:10])["commits"][0]["commit_hash"] == first


def test_a_rebasing_pull_asks_before_rewriting_local_commits(
    repo: Path, remote: Path, tmp_path: Path, call: Call
) -> None:
    teammate = tmp_path / "teammate"
    git(tmp_path, "clone", "--quiet", str(remote), str(teammate))
    git(teammate, "commit", "--quiet", "--allow-empty", "-m", "theirs")
    git(teammate, "push", "--quiet")
    git(repo, "commit", "--quiet", "--allow-empty", "-m", "mine, unpushed")
    mine = git(repo, "rev-parse", "HEAD").strip()
    asked = call("git_pull", mode="rebase")
    assert asked["requires_confirmation"] and "mine, unpushed" in asked["warning_message"]
    assert git(repo, "rev-parse", "HEAD").strip() == mine
    done = call("git_pull", mode="rebase", confirmation_token=asked["confirmation_token"])
    assert done["success"] and done["commits_pulled"] == 2
    assert git(repo, "log", "-2", "--format=%s").splitlines() == ["mine, unpushed", "theirs"]


def _control_file_on_branch(repo: Path) -> None:
    """Branch ``evil`` where the tracked config turns masking off."""
    config = repo / ".cuedeck" / "config.toml"
    config.write_text("[masking]\nenabled = true\n", encoding="utf-8")
    git(repo, "add", ".cuedeck/config.toml")
    git(repo, "commit", "--quiet", "-m", "config")
    git(repo, "switch", "--quiet", "-c", "evil")
    config.write_text("[masking]\nenabled = false\n", encoding="utf-8")
    git(repo, "commit", "--quiet", "-am", "masking off")
    git(repo, "switch", "--quiet", "main")


def test_no_branch_or_commit_brings_a_control_file_in(repo: Path, call: Call) -> None:
    _control_file_on_branch(repo)
    config = repo / ".cuedeck" / "config.toml"
    for tool, arguments in (
        ("git_branch_switch", {"branch_name": "evil"}),
        ("git_reset", {"mode": "hard", "target": "evil"}),
        ("git_checkout_file", {"file_path": ".cuedeck/config.toml", "ref": "evil"}),
        ("git_checkout_file", {"file_path": ".cuedeck", "ref": "evil"}),
    ):
        with pytest.raises(Protected) as refused:
            call(tool, **arguments)
        assert refused.value.data["paths"] == [".cuedeck/config.toml"], tool
    assert config.read_text(encoding="utf-8") == "[masking]\nenabled = true\n"
    assert git(repo, "branch", "--show-current").strip() == "main"


def test_nul_in_log_filters_and_commit_author_is_named(repo: Path, call: Call) -> None:
    for tool, arguments, field in (
        ("git_log", {"author": "a\x00b"}, "author"),
        ("git_log", {"since": "2024\x00"}, "since"),
        ("git_commit", {"message": "m", "author": "A <a\x00@b>"}, "author"),
    ):
        with pytest.raises(InvalidInput) as refused:
            call(tool, **arguments)
        assert refused.value.data["field"] == field
