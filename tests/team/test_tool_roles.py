"""One rule for a tool's role: what ``get_tool_docs`` reports is what the server enforces,
for every tool a team server serves (the team's own included), over MCP."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from fastmcp import Client
from mcp import MCPError

from cuedeck.workspace import open_workspace
from cuedeck_mcp.roles import allows
from cuedeck_mcp.server import build_server

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.anyio

ROLES = ("read", "write", "admin")


def _local_role(home: Path, role: str) -> None:
    """Serve clients without a token as ``role`` (``[mcp] local_role``)."""
    config = home / ".cuedeck" / "config.toml"
    config.write_text(
        config.read_text(encoding="utf-8").split("[mcp]")[0] + f'[mcp]\nlocal_role = "{role}"\n',
        encoding="utf-8",
    )


async def _as(home: Path, role: str) -> tuple[set[str], dict[str, str], dict[str, Any]]:
    """Served to a client of ``role``: the tools it sees, each served tool's role as
    ``get_tool_docs`` reports it, and what a call of each tool it does not see answers."""
    _local_role(home, role)
    server = build_server(open_workspace(home), team=True, profile=["all"])
    async with Client(server) as client:
        listed = {tool.name for tool in await client.list_tools()}
        served = server.cuedeck_middleware.tools  # type: ignore[attr-defined]
        documented = {}
        for name in served:
            reply = await client.call_tool("get_tool_docs", {"tool": name})
            documented[name] = reply.structured_content["role"]
        refused = {}
        for name in sorted(set(served) - listed):
            with pytest.raises(MCPError) as caught:
                await client.call_tool(name, {})
            refused[name] = caught.value.error
    return listed, documented, refused


@pytest.mark.slow  # every tool of a team server called under each role (~10 s)
async def test_get_tool_docs_and_the_server_agree_on_every_tools_role(home: Path) -> None:
    seen = {role: await _as(home, role) for role in ROLES}
    documented = seen["admin"][1]
    assert all(found[1] == documented for found in seen.values())  # one answer, any caller
    assert seen["admin"][0] == set(documented)  # an admin is served every tool
    for role, (listed, _, refused) in seen.items():
        assert listed == {n for n, needed in documented.items() if allows(role, needed)}, role  # type: ignore[arg-type]
        for name, error in refused.items():
            assert (error.code, error.data["required_role"]) == (1012, documented[name]), name
    # The team's tools, as the code-indexer specification gives them (docs/teams.md).
    assert {name: documented[name] for name in TEAM_ROLES} == TEAM_ROLES
    assert {"read_doc", "edit_file", "delete_file", "get_tool_docs"} <= set(documented)


TEAM_ROLES = {
    "add_golden_repo": "admin",
    "refresh_golden_repo": "admin",
    "remove_golden_repo": "admin",
    "list_users": "admin",
    "deactivate_repository": "write",
    "activate_repository": "write",
    "sync_repository": "write",
    "manage_composite_repository": "write",
    "list_global_repos": "read",
    "global_repo_status": "read",
    "list_activated_repos": "read",
}


async def test_every_tool_publishes_an_output_schema(home: Path) -> None:
    """Over MCP, with the specification's replies (the server of one workspace and the
    team's alike; CueDeck's own replies leave schemas out of tools/list on purpose, for
    its size: docs/mcp.md), every tool's outputSchema is a valid object schema, those
    that answer a confirmation first or a result included (a union of both)."""
    import jsonschema

    _local_role(home, "admin")  # every tool listed, the destructive ones too
    server = build_server(open_workspace(home), team=True, profile=["all"], replies="spec")
    async with Client(server) as client:
        listed = {tool.name: tool.output_schema for tool in (await client.list_tools())}
    missing = sorted(name for name, schema in listed.items() if not schema)
    assert missing == []
    for name, schema in listed.items():
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object" and schema["required"][0] == "success", name
    asks_first = {"delete_file", "git_pull", "git_branch_switch", "git_reset", "git_clean"}
    asks_first |= {"git_checkout_file", "git_branch_delete", "remove_golden_repo"}
    assert {"delete_file", "remove_golden_repo"} <= set(listed)
    for name in asks_first & set(listed):  # the git tools when cuedeck-git is installed
        branches = [set(branch["properties"]) for branch in listed[name]["anyOf"]]
        asked = {"success", "requires_confirmation", "confirmation_token", "warning_message"}
        assert asked in branches, name
        assert any("confirmation_token" not in branch for branch in branches), name
