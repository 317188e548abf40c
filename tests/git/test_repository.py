"""Git uses only the repository it found, by path; no tool makes a git directory.

A workspace that is a folder of a bigger repository (docs/git.md supports it) has no
``.git`` of its own. Git, left to find its repository, would take the root as one as soon
as it held ``HEAD``, ``objects/`` and ``refs/``, and run what that root's ``config``
names (``core.sshCommand`` on a fetch). Every package runs git through core's one runner,
pinned to the ``.git`` found at the workspace or above it, and the file tools refuse the
files that would make any folder a git directory.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cuedeck.errors import Protected
from cuedeck.system.git import find_repository
from cuedeck.workspace import open_workspace
from tests.git.conftest import git
from tests.mcp.conftest import CUE, environment

GIT_DIRECTORY = {
    "HEAD": "ref: refs/heads/main\n",
    "objects/info/packs": "\n",
    "refs/heads/main": "",
    "config": "[core]\n\trepositoryformatversion = 0\n",
}


@pytest.fixture
def inner(tmp_path: Path, remote: Path) -> Path:
    """A workspace that is the folder ``ws`` of a repository with a pushed commit."""
    outer = tmp_path / "outer"
    root = outer / "ws"
    (root / ".cuedeck" / "docs").mkdir(parents=True)
    (root / "README.md").write_text("# Inner\n", encoding="utf-8")
    (outer / ".gitignore").write_text(".cuedeck/.cache/\n", encoding="utf-8")
    git(outer, "init", "--quiet")
    git(outer, "add", "--all")
    git(outer, "commit", "--quiet", "-m", "outer commit")
    git(outer, "remote", "add", "origin", str(remote))
    git(outer, "push", "--quiet", "-u", "origin", "main")
    return root


def _plant_git_directory(folder: Path, marker: Path) -> None:
    """What a person or a checkout could leave: a git directory whose config runs a
    program on the next fetch."""
    for rel, text in GIT_DIRECTORY.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text, encoding="utf-8")
    (folder / "config").write_text(
        f'[core]\n\trepositoryformatversion = 0\n\tsshCommand = "touch {marker}; false"\n'
        '[remote "origin"]\n\turl = ssh://git.invalid/x\n'
        "\tfetch = +refs/heads/*:refs/remotes/origin/*\n",
        encoding="utf-8",
    )


@pytest.mark.parametrize("folder", ["", "vendor/evil/"])
@pytest.mark.parametrize("order", [("HEAD", "objects", "refs"), ("refs", "objects", "HEAD")])
def test_no_tool_completes_a_git_directory(
    inner: Path, folder: str, order: tuple[str, str, str]
) -> None:
    workspace = open_workspace(inner)
    create = workspace.plugins.tools()["create_file"]
    names = {"HEAD": "HEAD", "objects": "objects/info/packs", "refs": "refs/heads/main"}
    *first, last = (f"{folder}{names[name]}" for name in order)
    for rel in first:  # one or two of the three make no git directory yet
        create.call(workspace, {"file_path": rel, "content": "x\n"})
    with pytest.raises(Protected) as refused:
        create.call(workspace, {"file_path": last, "content": "ref: refs/heads/main\n"})
    assert refused.value.code == 1013 and refused.value.data["reason"] == "git"
    assert "git directory" in str(refused.value)
    assert not (inner / last).exists()
    with pytest.raises(Protected):  # whatever the case: a case-insensitive disk agrees
        create.call(
            workspace, {"file_path": last.replace(order[2], order[2].lower()), "content": ""}
        )


def test_nothing_is_written_into_a_git_directory_kept_in_the_workspace(
    inner: Path, tmp_path: Path
) -> None:
    _plant_git_directory(inner / "fixtures" / "bare.git", tmp_path / "never")
    workspace = open_workspace(inner)
    tools = workspace.plugins.tools()
    for tool, arguments in (
        ("create_file", {"file_path": "fixtures/bare.git/hooks/post-update", "content": "x"}),
        ("create_file", {"file_path": "fixtures/bare.git/info/attributes", "content": "x"}),
        ("get_file_content", {"file_path": "fixtures/bare.git/config"}),
    ):
        with pytest.raises(Protected):
            tools[tool].call(workspace, arguments)
    # a file named like one, where it makes no git directory, is an ordinary file
    tools["create_file"].call(workspace, {"file_path": "docs/HEAD", "content": "notes\n"})
    tools["create_file"].call(workspace, {"file_path": "src/config", "content": "x = 1\n"})


def test_git_keeps_to_the_repository_found_whatever_the_root_holds(
    inner: Path, tmp_path: Path
) -> None:
    """The root made a git directory by hand: git, left to itself, would use it and run
    its sshCommand on a fetch; the tools still use the outer repository."""
    marker = tmp_path / "ssh-command-ran"
    _plant_git_directory(inner, marker)
    found = find_repository(inner)
    assert found is not None and found.top == str((tmp_path / "outer").resolve())
    workspace = open_workspace(inner)
    tools = workspace.plugins.tools()
    status = tools["git_status"].call(workspace, {})
    assert status["branch"] == "main" and status["upstream"] == "origin/main"
    assert tools["git_fetch"].call(workspace, {})["success"]
    assert not marker.exists()
    # the trap works: git finding its repository by itself takes the root
    subprocess.run(["git", "fetch"], cwd=inner, capture_output=True, check=False)
    assert marker.exists()


def test_without_any_repository_git_tools_say_so(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    (root / ".cuedeck" / "docs").mkdir(parents=True)
    _plant_git_directory(root, tmp_path / "never")  # by hand: still no .git anywhere
    workspace = open_workspace(root)
    from cuedeck_git.errors import GitFailed

    with pytest.raises(GitFailed) as failed:
        workspace.plugins.tools()["git_status"].call(workspace, {})
    assert failed.value.data["reason"] == "not_a_repository"


@pytest.mark.slow
@pytest.mark.anyio
async def test_over_stdio_a_client_cannot_make_the_root_a_repository(
    inner: Path, tmp_path: Path
) -> None:
    from mcp import MCPError
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(
        command=CUE, args=["-C", str(inner), "mcp", "--tools", "all"], env=environment()
    )
    async with Client(params, mode="legacy") as client:
        for rel in ("HEAD", "objects/info/packs"):
            done = await client.call_tool("create_file", {"file_path": rel, "content": "x\n"})
            assert not done.is_error
        with pytest.raises(MCPError) as refused:
            await client.call_tool("create_file", {"file_path": "refs/heads/main", "content": ""})
        assert refused.value.error.code == 1013
        status = await client.call_tool("git_status", {})
        assert status.structured_content is not None
        assert status.structured_content["upstream"] == "origin/main"
    assert not (inner / "refs").exists()


def test_no_branch_brings_a_git_directory_in(inner: Path, tmp_path: Path) -> None:
    outer = inner.parent
    git(outer, "switch", "--quiet", "-c", "planted")
    _plant_git_directory(inner, tmp_path / "never")
    git(outer, "add", "--all")
    git(outer, "commit", "--quiet", "-m", "a git directory at the workspace root")
    git(outer, "switch", "--quiet", "main")
    assert not (inner / "HEAD").exists()
    workspace = open_workspace(inner)
    tools = workspace.plugins.tools()
    with pytest.raises(Protected) as refused:
        tools["git_branch_switch"].call(workspace, {"branch_name": "planted"})
    assert refused.value.data["reason"] == "git"
    assert "ws/HEAD" in refused.value.data["paths"]
    assert not (inner / "HEAD").exists()
