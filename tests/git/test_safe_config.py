"""Read-only git tools run no program the repository's config names, through any link.

A repository's ``.git/config`` can name programs git runs on its own: fsmonitor on every
status, hooks, clean filters on files whose stat changed, a gpg program to check
signatures. The read-only tools (git_status, git_diff, git_log, git_branch_list) switch
them all off; and no tool can write ``.git`` in the first place, even through a link.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from cuedeck.errors import Protected
from tests.git.conftest import Call, git

READERS = [
    ("git_status", {}),
    ("git_diff", {}),
    ("git_diff", {"staged": True}),
    ("git_log", {"limit": 5}),
    ("git_branch_list", {}),
]


def _trap(root: Path, name: str) -> tuple[Path, str]:
    """A marker file and a shell command that creates it: proof a program ran."""
    marker = root.parent / f"PWNED-{name}"
    return marker, f"touch {marker}; false"


def test_fsmonitor_hooks_filters_and_gpg_of_the_repository_never_run(
    repo: Path, call: Call
) -> None:
    markers = {}
    for name in ("fsmonitor", "filter", "process", "gpg", "hook"):
        markers[name], command = _trap(repo, name)
        if name == "fsmonitor":
            git(repo, "config", "core.fsmonitor", command)
        elif name == "filter":
            git(repo, "config", "filter.Evil.clean", command)
            git(repo, "config", "filter.Evil.required", "true")
        elif name == "process":
            git(repo, "config", "filter.other.process", command)
        elif name == "gpg":
            git(repo, "config", "log.showSignature", "true")
            git(repo, "config", "gpg.program", command.replace("; false", "; exit 1"))
        else:
            hooks = repo / ".git" / "hooks"
            for hook in ("post-index-change", "reference-transaction", "pre-auto-gc"):
                script = hooks / hook
                script.write_text(f"#!/bin/sh\n{command}\n")
                script.chmod(script.stat().st_mode | stat.S_IXUSR)
    (repo / ".gitattributes").write_text("*.py filter=Evil\n*.md filter=other\n")
    (repo / "src" / "app.py").write_text("def main():\n    return 2\n")
    (repo / "README.md").write_text("# Changed\n")
    os.utime(repo / "src" / "app.py", (1, 1))  # a stat change: status re-reads the file
    for name, arguments in READERS:
        call(name, **arguments)
    assert not [name for name, marker in markers.items() if marker.exists()]
    # The same repository, as a person's shell runs it, does run them: the traps work.
    git(repo, "status", check=False)
    assert markers["fsmonitor"].exists()


def test_a_global_filter_is_the_persons_own_and_keeps_working(
    repo: Path, call: Call, tmp_path: Path
) -> None:
    ran = tmp_path / "global-filter-ran"
    global_config = Path(os.environ["GIT_CONFIG_GLOBAL"])
    global_config.write_text(
        global_config.read_text() + f'[filter "mine"]\n\tclean = touch {ran}; cat\n'
    )
    (repo / ".gitattributes").write_text("*.py filter=mine\n")
    (repo / "src" / "app.py").write_text("def main():\n    return 3\n")
    assert call("git_status")["unstaged"]
    assert ran.exists()


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("edit_file", {"file_path": "docs/gitdir/config", "old_string": "[core]",
                       "new_string": '[core]\n\tfsmonitor = "touch /tmp/PWNED; false"',
                       "content_hash": "0" * 64}),
        ("create_file", {"file_path": "docs/gitdir/hooks/pre-commit", "content": "#!/bin/sh\n"}),
        ("get_file_content", {"file_path": "docs/gitdir/config"}),
        ("git_stage", {"file_paths": ["docs/gitdir/config"]}),
        ("git_diff", {"file_paths": ["docs/gitdir/config"]}),
        ("git_checkout_file", {"file_path": "docs/gitdir/config"}),
    ],
)  # fmt: skip
def test_a_link_to_git_reaches_nothing(
    repo: Path, call: Call, tool: str, arguments: dict[str, object]
) -> None:
    (repo / "docs").mkdir(exist_ok=True)
    (repo / "docs" / "gitdir").symlink_to("../.git", target_is_directory=True)
    before = (repo / ".git" / "config").read_bytes()
    with pytest.raises(Protected) as refused:
        call(tool, **arguments)
    assert refused.value.data["reason"] == "git"
    assert (repo / ".git" / "config").read_bytes() == before
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()


def test_history_tools_run_no_textconv_driver_of_the_repository(repo: Path, call: Call) -> None:
    """`git log -G`, `git blame` and diffs run a file's textconv driver by default."""
    marker, command = _trap(repo, "textconv")
    git(repo, "config", "diff.evil.textconv", command.replace("; false", "; cat"))
    (repo / ".gitattributes").write_text("*.py diff=evil\n")
    (repo / "src" / "app.py").write_text("def main():\n    return 2\n")
    git(repo, "add", "--all")
    git(repo, "commit", "--quiet", "-m", "second")
    call("git_blame", file_path="src/app.py")
    call("git_search_diffs", text="return", match="regex")
    call("git_search_diffs", text="return 2")
    call("git_file_history", file_path="src/app.py")
    call("git_diff", from_ref="HEAD~1", to_ref="HEAD")
    assert not marker.exists()
    git(repo, "log", "-p", "-1")  # the trap works
    assert marker.exists()
