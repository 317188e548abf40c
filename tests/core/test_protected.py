"""Control files and .git: no tool reads or writes them, whatever path or link reaches them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from cuedeck.errors import CueError, FileNotFound, Protected
from cuedeck.layout import protection
from cuedeck.serving.read_doc import read_doc
from cuedeck.workspace import open_workspace
from cuedeck.writes import sha256_bytes
from tests.conftest import MakeWorkspace, needs

ACCESS = '[[token]]\nname = "bot"\nrole = "write"\nsha256 = "' + "a" * 64 + '"\n'
CONFIG = '[masking]\nenabled = true\n\n[files]\ndeny = [".env"]\n'


def call(root: Path, name: str, **arguments: Any) -> Any:
    workspace = open_workspace(root)
    return workspace.plugins.tools()[name].call(workspace, arguments)


@pytest.fixture
def protected_workspace(make_workspace: MakeWorkspace) -> Path:
    """A workspace in a git-like layout, with links into every protected place."""
    root = make_workspace(
        {
            ".cuedeck/access.toml": ACCESS,
            ".cuedeck/state.json": '{"active_card": "k3x9q2"}\n',
            ".cuedeck/.cache/index.sqlite3": b"SQLite format 3\x00",
            ".cuedeck/memory/default/project.json": "{}\n",
            ".cuedeck/team/registry.json": "{}\n",
            ".git/config": "[core]\n\tbare = false\n",
            ".git/HEAD": "ref: refs/heads/main\n",
            "sub/.git/config": "[core]\n",
            "docs/readme.md": "# Readme\n",
        },
        config=CONFIG,
    )
    docs = root / "docs"
    (docs / "gitdir").symlink_to("../.git", target_is_directory=True)
    (docs / "deck").symlink_to("../.cuedeck", target_is_directory=True)
    (docs / "cache").symlink_to("../.cuedeck/.cache", target_is_directory=True)
    (docs / "access.toml").symlink_to("../.cuedeck/access.toml")
    (docs / "settings.toml").symlink_to("../.cuedeck/config.toml")
    (docs / "gitconfig.md").symlink_to("../.git/config")
    return root


#: (path, reason) a writer is refused with; readers are refused the same except control.
def _of(plugin: str, path: str, reason: str) -> Any:
    """A protected path a plugin declares (its extra's tox environment has no other)."""
    return pytest.param(path, reason, marks=needs(plugin))


REFUSED = [
    (".git/config", "git"),
    ("sub/.git/config", "git"),
    ("docs/gitdir/config", "git"),
    ("docs/gitdir/hooks/pre-commit", "git"),
    ("docs/gitconfig.md", "git"),
    _of("cuedeck_mcp", ".cuedeck/access.toml", "private"),
    _of("cuedeck_mcp", "docs/access.toml", "private"),
    _of("cuedeck_mcp", "docs/deck/access.toml", "private"),
    (".cuedeck/state.json", "private"),
    (".cuedeck/.cache/index.sqlite3", "private"),
    ("docs/cache/index.sqlite3", "private"),
    ("docs/cache/new.txt", "private"),
    _of("cuedeck_team", ".cuedeck/team/registry.json", "private"),
    _of("cuedeck_team", "docs/deck/team/registry.json", "private"),
    (".cuedeck/config.toml", "control"),
    ("docs/settings.toml", "control"),
    ("docs/deck/config.toml", "control"),
    _of("cuedeck_memory", ".cuedeck/memory/default/project.json", "control"),
]


@pytest.mark.parametrize(("path", "reason"), REFUSED)
def test_no_tool_writes_a_protected_path_whatever_reaches_it(
    protected_workspace: Path, path: str, reason: str
) -> None:
    root = protected_workspace
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and not p.is_symlink()}
    target = root / path
    digest = sha256_bytes(target.read_bytes()) if target.is_file() else "0" * 64
    attempts: list[tuple[str, dict[str, Any]]] = [
        ("create_file", {"file_path": path, "content": "[[token]]\nrole = 'admin'\n"}),
        ("edit_file", {"file_path": path, "old_string": "a", "new_string": "b",
                       "content_hash": digest}),
        ("delete_file", {"file_path": path, "content_hash": digest}),
    ]  # fmt: skip
    for tool, arguments in attempts:
        with pytest.raises(Protected) as refused:
            call(root, tool, **arguments)
        assert refused.value.code == 1013
        assert refused.value.data["reason"] == reason, tool
        assert refused.value.data["field"] == "file_path"
    after = {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and not p.is_symlink()}
    assert after == before


@pytest.mark.parametrize(("path", "reason"), REFUSED)
def test_readers_are_refused_git_and_private_files_but_may_read_control_files(
    protected_workspace: Path, path: str, reason: str
) -> None:
    if reason == "control":
        assert call(protected_workspace, "get_file_content", file_path=path)["success"]
        return
    with pytest.raises(Protected) as refused:
        call(protected_workspace, "get_file_content", file_path=path)
    assert refused.value.data["reason"] == reason


def test_a_link_into_git_is_no_document(protected_workspace: Path) -> None:
    workspace = open_workspace(protected_workspace)
    assert "docs/gitconfig.md" not in workspace.documents
    assert "docs/readme.md" in workspace.documents
    with pytest.raises((FileNotFound, Protected)) as refused:
        read_doc(workspace, "docs/gitconfig.md")
    assert "bare" not in str(refused.value.to_dict())
    problems = [p for p in workspace.index.left_out if p.path == "docs/gitconfig.md"]
    assert problems
    assert "no tool reads" in problems[0].message


@pytest.mark.parametrize(
    ("rel", "write", "reason"),
    [
        (".git", False, "git"),
        ("a/.GIT/config", False, "git"),
        (".git./config", False, "git"),
        (".cuedeck/.cache", False, "private"),
        (".cuedeck/.Cache/x", True, "private"),
        ("nested/.cuedeck/state.json", False, "private"),
        ("nested/.cuedeck/access.toml", False, None),  # a plugin's: only when registered
        (".cuedeck/config.toml", True, "control"),
        (".cuedeck/config.toml", False, None),
        (".cuedeck/cards/k3x9q2.md", True, None),
        (".github/workflows/ci.yml", True, None),
        ("docs/.gitignore", True, None),
        ("docs/config.toml", True, None),
    ],
)
def test_protection_rules(rel: str, write: bool, reason: str | None) -> None:
    assert protection(rel, write=write) == reason


def test_a_hard_link_is_not_read(make_workspace: MakeWorkspace, tmp_path: Path) -> None:
    outside = tmp_path / "outside-secret.txt"
    outside.write_text("TOPSECRET outside the workspace\n")
    root = make_workspace({"plain.md": "# Plain\n"})
    os.link(outside, root / "shared.txt")
    os.link(outside, root / "shared.md")
    with pytest.raises(CueError) as refused:
        call(root, "get_file_content", file_path="shared.txt")
    assert refused.value.code == 1014
    assert "TOPSECRET" not in str(refused.value.to_dict())
    workspace = open_workspace(root)
    assert "shared.md" not in workspace.documents
    assert "plain.md" in workspace.documents
