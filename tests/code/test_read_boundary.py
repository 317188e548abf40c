"""One read boundary for every walker (issue 35, finding 5).

What get_file_content refuses (CueDeck's private files, a team's copies, [files] deny
whatever link leads there, a file with several hard links, a bare repository's files),
regex_search, list_files, browse_directory, directory_tree and the index leave out too;
git_stage does not stage it, and a diff of the working tree does not show it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cuedeck import open_workspace
from tests.conftest import needs
from tests.mcp.conftest import CUE, environment

MARKER = "BOUNDARY_MARKER"
#: Access tokens (the MCP server) and git_stage (the git tools) are planted and called.
pytestmark = needs("cuedeck_mcp", "cuedeck_git")


def caller(root: Path) -> Any:
    workspace = open_workspace(root)
    tools = workspace.plugins.tools()
    return lambda name, **arguments: tools[name].call(workspace, arguments)


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env=environment(
        GIT_AUTHOR_NAME="Ada", GIT_AUTHOR_EMAIL="ada@example.org",
        GIT_COMMITTER_NAME="Ada", GIT_COMMITTER_EMAIL="ada@example.org",
        GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1",
    ))  # fmt: skip


@pytest.fixture
def planted(code_root: Path, tmp_path: Path) -> Path:
    """The sample code, a repository, and every kind of file no tool reads."""
    root = code_root
    deck = root / ".cuedeck"
    (root / ".gitignore").write_text(".cuedeck/.cache/\n", encoding="utf-8")
    # committed with the code: its deny list names what no reply may name
    (deck / "config.toml").write_text('[files]\ndeny = [".env", "private/"]\n', encoding="utf-8")
    _git(root, "init", "--quiet")
    # the tool commits later with the repository's own identity, not the user's
    _git(root, "config", "user.name", "Ada")
    _git(root, "config", "user.email", "ada@example.org")
    _git(root, "add", "--all")
    _git(root, "commit", "--quiet", "-m", "code")
    subprocess.run(
        [CUE, "-C", str(root), "mcp", "token", "add", "ci-bot", "--role", "read"],
        check=True, capture_output=True, env=environment(),
    )  # fmt: skip
    with (deck / "access.toml").open("a", encoding="utf-8") as access:
        access.write(f"# {MARKER} access\n")
    (deck / ".state.lock").write_text(f"{MARKER} lock\n", encoding="utf-8")
    copy = deck / "team" / "members" / "bob" / "repo"
    copy.mkdir(parents=True)
    (copy / "notes.md").write_text(f"# Bob\n\n{MARKER} team copy\n", encoding="utf-8")
    (root / ".env").write_text(f"SECRET={MARKER}-env\n", encoding="utf-8")
    (root / "env-notes.txt").symlink_to(".env")
    outside = tmp_path / "outside.txt"
    outside.write_text(f"{MARKER} outside through a hard link\n", encoding="utf-8")
    os.link(outside, root / "shared.txt")
    bare = root / "fixtures" / "bare.git"
    for rel in ("objects/info", "refs/heads"):
        (bare / rel).mkdir(parents=True)
    (bare / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    (bare / "config").write_text(f"# {MARKER} bare config\n", encoding="utf-8")
    (bare / "description").write_text(f"{MARKER} description\n", encoding="utf-8")
    (bare / "README.md").write_text(f"# Bare\n\n{MARKER} bare readme\n", encoding="utf-8")
    (root / "private").mkdir()
    (root / "private" / "plan.md").write_text(f"# Plan\n\n{MARKER} denied\n", encoding="utf-8")
    (root / "plan-link.md").symlink_to("private/plan.md")
    return root


LISTINGS = [
    ("regex_search", {"pattern": MARKER}),
    ("regex_search", {"pattern": "ci-bot|hash"}),
    ("list_files", {"limit": 500}),
    ("browse_directory", {"path": "."}),
    ("browse_directory", {"path": ".cuedeck"}),
    ("directory_tree", {"depth": 8, "max_tokens": 20000}),
]
#: What no reply may name or show.
NEVER = (MARKER, "access.toml", ".state.lock", "team/", "members", ".env", "env-notes",
         "shared.txt", "bare.git", "ci-bot", "private", "plan-link")  # fmt: skip


def shown(reply: Any) -> str:
    """A reply as text, without the pattern it echoes."""
    return json.dumps({key: value for key, value in reply.items() if key != "pattern"})


@pytest.mark.parametrize(("tool", "arguments"), LISTINGS)
def test_walkers_leave_out_what_no_tool_reads(
    planted: Path, tool: str, arguments: dict[str, Any]
) -> None:
    reply = shown(caller(planted)(tool, **arguments))
    assert [word for word in NEVER if word in reply] == []


def test_the_index_leaves_them_out(planted: Path) -> None:
    workspace = open_workspace(planted)
    workspace.refresh()
    indexed = set(workspace.index.paths)
    assert not {p for p in indexed if any(word in p for word in NEVER)}
    found = workspace.plugins.tools()["search_code"].call(workspace, {"query": MARKER})
    assert MARKER not in json.dumps(found)


def test_git_stages_nothing_a_tool_may_not_read(planted: Path) -> None:
    call = caller(planted)
    (planted / "new_module.py").write_text("def new():\n    return 1\n", encoding="utf-8")
    staged = call("git_stage")["staged_files"]
    assert "new_module.py" in staged
    assert [path for path in staged if any(word in path for word in NEVER)] == []
    call("git_commit", message="what was staged")
    diff = call("git_diff")  # the working tree, hard-linked file included, is not shown
    assert MARKER not in json.dumps(diff)
    history = call("git_search_diffs", text=MARKER)
    assert history["commits"] == []


@pytest.mark.slow
@pytest.mark.anyio
async def test_over_stdio_no_walker_crosses_the_boundary(planted: Path) -> None:
    from mcp import MCPError
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(
        command=CUE, args=["-C", str(planted), "mcp", "--tools", "all"], env=environment()
    )
    async with Client(params, mode="legacy") as client:
        for tool, arguments in [*LISTINGS, ("git_stage", {}), ("git_diff", {"staged": True})]:
            result = await client.call_tool(tool, arguments)
            assert not result.is_error, (tool, result.content)
            reply = shown(result.structured_content)
            assert [word for word in NEVER if word in reply] == [], tool
        for path, code in {
            ".cuedeck/access.toml": 1013, "env-notes.txt": 1004, "shared.txt": 1014,
            "fixtures/bare.git/config": 1013,
        }.items():  # fmt: skip
            with pytest.raises(MCPError) as refused:
                await client.call_tool("get_file_content", {"file_path": path})
            assert refused.value.error.code == code, path
