"""Roles over the real HTTP transport: each token sees and may call exactly its tools."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import MCPError
from mcp.client import Client

from cuedeck.workspace import open_workspace
from cuedeck_mcp.roles import allows, load_grants
from cuedeck_mcp.server import TEAM_ONLY
from tests.mcp.conftest import (
    CUE,
    add_token,
    bearer_session,
    environment,
    free_port,
    server_for,
    wait_until_listening,
)

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def _cue(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CUE, "-C", str(root), *args], capture_output=True, text=True, env=environment()
    )


@contextmanager
def _serving(root: Path, log: Path, *args: str) -> Iterator[str]:
    """`cue --debug mcp --transport http` with its log in ``log``; yields the base URL."""
    port = free_port()
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [CUE, "--debug", "-C", str(root), "mcp", "--transport", "http",
             "--port", str(port), *args],
            stdout=sink, stderr=sink, env=environment(),
        )  # fmt: skip
        try:
            wait_until_listening(port, process, log.read_text)
            yield f"http://127.0.0.1:{port}"
        finally:
            process.terminate()
            process.wait(10)


async def test_each_role_sees_and_may_call_exactly_its_tools(demo: Path, tmp_path: Path) -> None:
    tokens = {role: add_token(demo, f"{role}-bot", role) for role in ("read", "write", "admin")}
    stored = (demo / ".cuedeck" / "access.toml").read_text(encoding="utf-8")
    assert not any(token in stored for token in tokens.values())  # hashes only
    assert {g.role for g in load_grants(demo)} == {"read", "write", "admin"}

    workspace = open_workspace(demo)
    # Every tool of `--tools all`: the team's own are served by a team server only.
    tools = {n: t for n, t in workspace.plugins.tools().items() if t.category not in TEAM_ONLY}
    log = tmp_path / "server.log"
    seen: dict[str, set[str]] = {}
    with _serving(demo, log, "--tools", "all") as base:
        url = f"{base}/mcp"
        for role, token in tokens.items():

            async def listed(client: Client) -> set[str]:
                return {tool.name for tool in (await client.list_tools()).tools}

            seen[role] = await bearer_session(url, token, listed)

        async def read_tries_to_write(client: Client) -> Any:
            who = (await client.call_tool("whoami", {})).structured_content
            with pytest.raises(MCPError) as refused:
                await client.call_tool(
                    "update_task", {"id": "k3x9q2", "updates": {"notes": "sneaky"}}
                )
            return who, refused.value.error

        who, refused = await bearer_session(url, tokens["read"], read_tries_to_write)

        async def codes_of(client: Client, names: set[str]) -> dict[str, int]:
            """Each tool called by name, unlisted: the code it is refused with."""
            codes = {}
            for name in sorted(names):
                with pytest.raises(MCPError) as caught:
                    await client.call_tool(name, {})
                codes[name] = caught.value.error.code
            return codes

        beyond = {
            role: {n for n, t in tools.items() if not allows(role, t.role)}
            for role in ("read", "write")
        }
        refusals = {
            role: await bearer_session(url, tokens[role], lambda c, r=role: codes_of(c, beyond[r]))
            for role in beyond
        }

        async def write_tries_to_delete(client: Client) -> Any:
            await client.call_tool("update_task", {"id": "k3x9q2", "updates": {"notes": "ok"}})
            with pytest.raises(MCPError) as refused:
                await client.call_tool("delete_file", {"file_path": "docs/api.md"})
            return refused.value.error

        write_refused = await bearer_session(url, tokens["write"], write_tries_to_delete)

        async with httpx2.AsyncClient() as http:
            ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
            anonymous = await http.post(url, json=ping)
            _cue(demo, "mcp", "token", "remove", "read-bot")
            revoked = await http.post(
                url, json=ping, headers={"Authorization": f"Bearer {tokens['read']}"}
            )
    for role in ("read", "write", "admin"):
        expected = {n for n, t in tools.items() if allows(role, t.role)}  # type: ignore[arg-type]
        assert seen[role] == expected, role
    assert "update_task" not in seen["read"] and "update_task" in seen["write"]
    assert "delete_file" not in seen["write"] and "git_reset" in seen["admin"]
    assert who["role"] == "read" and who["name"] == "read-bot" and who["transport"] == "http"
    assert set(who["may_call"]) == seen["read"]
    assert refused.code == 1012  # refused with a reason, not "unknown tool"
    assert refused.data["required_role"] == "write" and refused.data["role"] == "read"
    assert write_refused.code == 1012 and write_refused.data["required_role"] == "admin"
    # Every tool beyond a role is refused for what it is, never run nor "unknown".
    assert {"update_task", "git_reset"} <= beyond["read"] and "delete_file" in beyond["write"]
    for role, codes in refusals.items():
        assert codes == dict.fromkeys(beyond[role], 1012), role
    assert "sneaky" not in (demo / ".cuedeck" / "cards" / "k3x9q2.md").read_text()
    assert anonymous.status_code == 401 and revoked.status_code == 401
    server_log = log.read_text(encoding="utf-8", errors="replace")
    assert '"POST /mcp HTTP/1.1" 401' in server_log  # requests, refusals included, are logged
    assert not any(token in server_log for token in tokens.values())  # never a token


async def test_stdio_serves_the_local_role(demo: Path) -> None:
    async def names(root: Path) -> set[str]:
        from mcp.client.stdio import StdioServerParameters

        params = StdioServerParameters(
            command=CUE, args=["-C", str(root), "mcp", "--tools", "all"], env=environment()
        )
        async with Client(params, mode="legacy") as client:
            listed = {tool.name for tool in (await client.list_tools()).tools}
            who = (await client.call_tool("whoami", {})).structured_content
            return listed | {f"role:{who['role']}"}

    default = await names(demo)
    (demo / ".cuedeck" / "config.toml").write_text('[mcp]\nlocal_role = "admin"\n')
    admin = await names(demo)
    assert "role:write" in default and "update_task" in default
    assert "delete_file" not in default  # destructive: admin only
    assert "role:admin" in admin and "delete_file" in admin


async def test_in_process_client_checks_the_role_on_call(demo: Path) -> None:
    (demo / ".cuedeck" / "config.toml").write_text('[mcp]\nlocal_role = "read"\n')
    from fastmcp import Client as InProcess

    async with InProcess(server_for(demo)) as client:
        names = {tool.name for tool in await client.list_tools()}
        with pytest.raises(MCPError) as refused:
            await client.call_tool("create_task", {"title": "Nope"})
    assert "create_task" not in names and "list_tasks" in names
    assert refused.value.error.code == 1012


def test_token_commands(demo: Path) -> None:
    token = add_token(demo, "laptop", "admin")
    assert token.startswith("cdk_") and len(token) > 40
    listed = json.loads(_cue(demo, "mcp", "token", "list", "--json").stdout)
    assert listed == {
        "tokens": [{"name": "laptop", "role": "admin", "created": listed["tokens"][0]["created"]}]
    }
    again = _cue(demo, "mcp", "token", "add", "laptop")
    assert again.returncode != 0 and "error[1004]" in again.stderr
    assert _cue(demo, "mcp", "token", "remove", "laptop").returncode == 0
    assert json.loads(_cue(demo, "mcp", "token", "list", "--json").stdout) == {"tokens": []}


async def test_removing_the_last_token_opens_loopback_again_without_a_restart(
    demo: Path, tmp_path: Path
) -> None:
    # Removing the last token deletes access.toml; a file emptied some other way stays
    # locked (tests/mcp/test_access.py).
    token = add_token(demo, "laptop", "write")
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}

    async def whoami(client: Client) -> Any:
        return (await client.call_tool("whoami", {})).structured_content

    with _serving(demo, tmp_path / "server.log") as base:
        url = f"{base}/mcp"
        async with httpx2.AsyncClient() as http:
            before = (await http.post(url, json=ping)).status_code
            removed = _cue(demo, "mcp", "token", "remove", "laptop")
            after = (await http.post(url, json=ping)).status_code
        local = await bearer_session(url, None, whoami)
        stale = await bearer_session(url, token, whoami)  # a removed token: no token needed
        fresh = add_token(demo, "again", "read")
        async with httpx2.AsyncClient() as http:
            closed = (await http.post(url, json=ping)).status_code  # required again, at once
        again = await bearer_session(url, fresh, whoami)
    assert removed.returncode == 0 and "access.toml removed" in removed.stdout
    assert (before, closed) == (401, 401)
    assert after != 401  # past the token check (MCP then wants a session: 400)
    assert (local["name"], local["role"]) == ("local", "write")  # [mcp] local_role
    assert stale["name"] == "local"
    assert (again["name"], again["role"]) == ("again", "read")
