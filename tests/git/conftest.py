"""Fixtures of the git tests: a real repository with a local bare remote, and a way to
call the registered git tools exactly as MCP and the CLI do."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("cuedeck_git")

from cuedeck.workspace import Workspace, open_workspace


def git(root: Path, *args: str, check: bool = True) -> str:
    """Run git in ``root`` as a person would, and return its output."""
    result = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
    if check and result.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {result.stderr}")
    return result.stdout


@pytest.fixture(autouse=True)
def _git_identity(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A private global git config: an identity, and nothing from the developer's own."""
    config = tmp_path / "gitconfig"
    config.write_text(
        "[user]\n\tname = Ada Agent\n\temail = ada@example.org\n"
        "[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    """An empty bare repository that plays the remote."""
    path = tmp_path / "remote.git"
    git(tmp_path, "init", "--quiet", "--bare", str(path))
    return path


@pytest.fixture
def repo(tmp_path: Path, remote: Path) -> Path:
    """A workspace that is a git repository with one pushed commit and ``origin``."""
    root = tmp_path / "ws"
    (root / ".cuedeck" / "cards").mkdir(parents=True)
    (root / ".cuedeck" / "docs").mkdir()
    (root / ".cuedeck" / "docs" / "guide.md").write_text("# Guide\n\nHello.\n", encoding="utf-8")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("def main():\n    return 1\n", encoding="utf-8")
    (root / "README.md").write_text("# Demo\n", encoding="utf-8")
    (root / ".gitignore").write_text(".cuedeck/.cache/\n*.log\n", encoding="utf-8")
    git(root, "init", "--quiet")
    git(root, "add", "--all")
    git(root, "commit", "--quiet", "-m", "first commit")
    git(root, "remote", "add", "origin", str(remote))
    git(root, "push", "--quiet", "-u", "origin", "main")
    return root


Call = Callable[..., Any]


@pytest.fixture
def call(repo: Path) -> Call:
    """``call("git_status", ...)``: a registered tool, validated and run on ``repo``."""
    workspace: Workspace = open_workspace(repo)
    tools = workspace.plugins.tools()

    def run(name: str, **arguments: Any) -> Any:
        return tools[name].call(workspace, arguments)

    return run
