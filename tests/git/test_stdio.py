"""Every git tool through a real `cue mcp` over stdio: replies match their declared
output schemas, secrets in diffs are masked, and the confirmation flow works end to end."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest

pytest.importorskip("cuedeck_mcp")

from mcp import MCPError
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from cuedeck.workspace import open_workspace
from tests.git.conftest import git
from tests.mcp.conftest import CUE, environment

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

KEY = "sk_live_4eC39HqLyjWDarjtT1zdp7dcTYooMQauvdEDq54NiTphI7jx"
GIT_TOOLS = {
    "git_status", "git_diff", "git_log", "git_branch_list", "git_stage", "git_unstage",
    "git_commit", "git_fetch", "git_pull", "git_push", "git_branch_create",
    "git_branch_switch", "git_merge_abort", "git_reset", "git_clean", "git_checkout_file",
    "git_branch_delete",
}  # fmt: skip


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_every_git_tool_over_stdio(repo: Path, tmp_path: Path) -> None:
    teammate = tmp_path / "teammate"
    git(tmp_path, "clone", "--quiet", str(tmp_path / "remote.git"), str(teammate))
    git(teammate, "commit", "--quiet", "--allow-empty", "-m", "from a teammate")
    git(teammate, "push", "--quiet")
    # Destructive tools need the admin role; over stdio the local user has [mcp] local_role.
    (repo / ".cuedeck" / "config.toml").write_text('[mcp]\nlocal_role = "admin"\n')
    with (repo / ".git" / "info" / "exclude").open("a") as exclude:
        exclude.write(".cuedeck/config.toml\n")
    params = StdioServerParameters(
        command=CUE, args=["-C", str(repo), "mcp", "--tools", "all"], env=environment()
    )
    used: set[str] = set()
    declared = open_workspace(repo).plugins.tools()  # what each tool says it returns
    async with Client(params, mode="legacy") as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(listed) >= GIT_TOOLS
        for name in ("git_reset", "git_clean", "git_checkout_file", "git_branch_delete"):
            assert listed[name].annotations.destructive_hint is True
        assert listed["git_status"].annotations.read_only_hint is True

        async def call(name: str, **arguments: Any) -> dict[str, Any]:
            result = await client.call_tool(name, arguments)
            reply = result.structured_content
            assert reply is not None and not result.is_error
            jsonschema.validate(reply, declared[name].output_schema())  # the typed reply
            used.add(name)
            return reply

        (repo / "settings.py").write_text(f"KEY = '{KEY}'\n", encoding="utf-8")
        assert (await call("git_status"))["untracked"] == ["settings.py"]
        await call("git_stage", file_paths=["settings.py"])
        staged = await call("git_diff", staged=True)
        assert KEY not in staged["diff"] and "[REDACTED:" in staged["diff"]
        await call("git_unstage", file_paths=["settings.py"])
        await call("git_stage")
        commit = await call("git_commit", message="add settings")
        assert (await call("git_log", limit=1))["commits"][0]["commit_hash"] == commit[
            "commit_hash"
        ]
        assert (await call("git_fetch"))["refs_fetched"] == ["origin/main"]
        assert (await call("git_pull", mode="merge"))["commits_pulled"] == 2
        assert (await call("git_push"))["commits_pushed"] == 2
        await call("git_branch_create", branch_name="spike")
        await call("git_branch_switch", branch_name="spike")
        git(repo, "commit", "--quiet", "--allow-empty", "-m", "spike work")
        await call("git_branch_switch", branch_name="main")
        assert {b["name"] for b in (await call("git_branch_list"))["branches"]} == {
            "main",
            "spike",
        }

        asked = await call("git_branch_delete", branch_name="spike")
        assert "spike work" in asked["warning_message"]
        with pytest.raises(MCPError) as wrong:
            await client.call_tool(
                "git_branch_delete",
                {"branch_name": "spike", "confirmation_token": "AAAA-BBBB-CCCC"},
            )
        assert wrong.value.error.code == 1009
        assert wrong.value.error.data["confirmation_token"] != asked["confirmation_token"]
        await call(
            "git_branch_delete", branch_name="spike", confirmation_token=asked["confirmation_token"]
        )

        (repo / "README.md").write_text("# Local\n", encoding="utf-8")
        asked = await call("git_checkout_file", file_path="README.md")
        await call(
            "git_checkout_file",
            file_path="README.md",
            confirmation_token=asked["confirmation_token"],
        )
        (repo / "scratch.txt").write_text("tmp\n", encoding="utf-8")
        asked = await call("git_clean")
        assert (await call("git_clean", confirmation_token=asked["confirmation_token"]))[
            "removed_files"
        ] == ["scratch.txt"]
        asked = await call("git_reset", mode="hard", target="HEAD~1")
        await call(
            "git_reset",
            mode="hard",
            target="HEAD~1",
            confirmation_token=asked["confirmation_token"],
        )

        git(repo, "switch", "--quiet", "-c", "theirs")
        (repo / "README.md").write_text("# Theirs\n", encoding="utf-8")
        git(repo, "commit", "--quiet", "-am", "theirs")
        git(repo, "switch", "--quiet", "main")
        (repo / "README.md").write_text("# Ours\n", encoding="utf-8")
        git(repo, "commit", "--quiet", "-am", "ours")
        git(repo, "merge", "theirs", check=False)
        with pytest.raises(MCPError) as conflict:
            await client.call_tool("git_commit", {"message": "no"})
        assert conflict.value.error.code == 1030
        assert conflict.value.error.data["reason"] == "conflict"
        await call("git_merge_abort")
    assert used == GIT_TOOLS


async def test_a_hard_reset_names_each_file_of_a_folder_it_replaces(repo: Path) -> None:
    (repo / "notes").write_text("a committed file\n", encoding="utf-8")
    git(repo, "add", "notes")
    git(repo, "commit", "--quiet", "-m", "A")
    commit_a = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "rm", "--quiet", "notes")
    git(repo, "commit", "--quiet", "-m", "B")
    for name in ("a.md", "b.md", "c.md", "d/e.md", "d/f.md"):
        (repo / "notes" / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / "notes" / name).write_text("never committed\n", encoding="utf-8")
    (repo / ".cuedeck" / "config.toml").write_text('[mcp]\nlocal_role = "admin"\n')
    params = StdioServerParameters(
        command=CUE, args=["-C", str(repo), "mcp", "--tools", "all"], env=environment()
    )
    async with Client(params, mode="legacy") as client:
        asked = await client.call_tool("git_reset", {"mode": "hard", "target": commit_a})
    assert asked.structured_content is not None
    warning = asked.structured_content["warning_message"]
    assert "5 untracked or ignored file(s) it overwrites: notes/a.md, notes/b.md" in warning
    assert "notes/d/f.md" in warning
