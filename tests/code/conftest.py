"""Fixtures of the code tests: the sample source files of ``data/`` in a workspace."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

pytest.importorskip("cuedeck_code")

DATA = Path(__file__).parent / "data"


@pytest.fixture
def code_root(tmp_path: Path) -> Path:
    """A workspace (outside git) holding a copy of every sample file."""
    root = tmp_path / "code"
    shutil.copytree(DATA, root)
    for sub in ("cards", "docs"):
        (root / ".cuedeck" / sub).mkdir(parents=True)
    return root


def git(root: Path, *args: str) -> str:
    """Run git in ``root`` as a person would; its output."""
    import subprocess

    result = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
    assert result.returncode == 0, f"git {' '.join(args)} failed: {result.stderr}"
    return result.stdout


@pytest.fixture
def git_identity(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A private global git config: an identity, and nothing from the developer's own."""
    config = tmp_path / "gitconfig"
    config.write_text(
        "[user]\n\tname = Ada Agent\n\temail = ada@example.org\n[init]\n\tdefaultBranch = main\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


class Repo:
    """A workspace that is a git repository, changed and committed by the test."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def write(self, files: dict[str, str]) -> None:
        for rel, text in files.items():
            path = self.root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")

    def remove(self, *paths: str) -> None:
        for rel in paths:
            (self.root / rel).unlink()

    def commit(self, message: str, *, when: str | None = None) -> str:
        """Commit everything; ``when`` (``2026-01-02T10:00:00``) dates the commit."""
        import os

        git(self.root, "add", "--all")
        env = {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when} if when else {}
        saved = {key: os.environ.get(key) for key in env}
        os.environ.update(env)
        try:
            git(self.root, "commit", "--quiet", "--allow-empty", "-m", message)
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
        return git(self.root, "rev-parse", "HEAD").strip()


@pytest.fixture
def make_repo(tmp_path: Path, git_identity: None) -> Callable[[dict[str, str]], Repo]:
    """``make_repo({"src/x.py": "..."})``: a workspace in a new git repository with those
    files committed (``.cuedeck/`` with cards and docs folders, its cache ignored)."""

    def build(files: dict[str, str]) -> Repo:
        root = tmp_path / "repo"
        suffix = 1
        while root.exists():
            suffix += 1
            root = tmp_path / f"repo{suffix}"
        for sub in ("cards", "docs"):
            (root / ".cuedeck" / sub).mkdir(parents=True)
        repo = Repo(root)
        repo.write({".gitignore": ".cuedeck/.cache/\n", **files})
        git(root, "init", "--quiet")
        repo.commit("first commit", when="2026-01-01T10:00:00")
        return repo

    return build
