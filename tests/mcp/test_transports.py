"""`cue mcp` as a real subprocess, driven by the official MCP SDK over stdio and HTTP."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import MCPError
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.mcp.conftest import CUE, environment, http_server

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

SECRET = "sk_live_4eC39HqLyjWDarjtT1zdp7dcTYooMQauvdEDq54NiTphI7jx"


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_stdio_subprocess_serves_tools_errors_and_masking(demo: Path, mode: str) -> None:
    params = StdioServerParameters(command=CUE, args=["-C", str(demo), "mcp"], env=environment())
    async with Client(params, mode=mode) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        page = await client.call_tool("read_doc", {"path": "docs/runbook.md"})
        counted = await client.call_tool("word_count", {"path": "docs/deployment.md"})
        with pytest.raises(MCPError) as missing:
            await client.call_tool("read_doc", {"path": "docs/runbok.md"})
        with pytest.raises(MCPError) as traversal:
            await client.call_tool("read_doc", {"path": "../../etc/hosts.md"})
    assert {"read_doc", "word_count", "get_tool_categories", "first_time_user_guide"} <= names
    assert page.structured_content is not None
    assert page.structured_content["path"] == ".cuedeck/docs/runbook.md"
    assert SECRET not in page.structured_content["content"]
    assert counted.structured_content == {"path": "docs/deployment.md", "words": 57, "headings": 3}
    assert missing.value.error.code == 1001
    assert missing.value.error.data["suggestion"] == "Did you mean '.cuedeck/docs/runbook.md'?"
    assert (traversal.value.error.code, traversal.value.error.data["field"]) == (1004, "path")


def test_stdout_carries_only_json_rpc(demo: Path) -> None:
    request = (
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
        '"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n'
    )
    done = subprocess.run(
        [CUE, "-C", str(demo), "mcp"],
        input=request,
        capture_output=True,
        text=True,
        timeout=60,
        env=environment(),
        check=False,
    )
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    assert lines
    assert all(line.startswith('{"jsonrpc":"2.0"') for line in lines), done.stdout


async def _read_doc_over_http(url: str, headers: dict[str, str] | None = None) -> Any:
    async with httpx2.AsyncClient(headers=headers or {}) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode="legacy") as client:
            result = await client.call_tool("read_doc", {"path": "docs/api.md", "anchor": "login"})
            with pytest.raises(MCPError) as missing:
                await client.call_tool("read_doc", {"path": "docs/nope.md"})
            return result, missing.value.error


async def test_http_without_a_token(demo: Path) -> None:
    with http_server(demo) as (url, _):
        result, missing = await _read_doc_over_http(url)
    assert result.structured_content["anchor"] == "Login"
    assert missing.code == 1001


async def test_http_with_a_token_requires_it(demo: Path) -> None:
    with http_server(demo, CUEDECK_MCP_TOKEN="s3cret-token") as (url, _):
        async with httpx2.AsyncClient() as http:
            refused = await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
            wrong = await http.post(
                url,
                json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                headers={"Authorization": "Bearer wrong"},
            )
        result, _ = await _read_doc_over_http(url, {"Authorization": "Bearer s3cret-token"})
    assert refused.status_code == 401
    assert wrong.status_code == 401
    assert result.structured_content["path"] == ".cuedeck/docs/api.md"


def test_cue_help_does_not_import_fastmcp() -> None:
    code = (
        "import sys, click\n"
        "from cuedeck_cli.app import make_cli\n"
        "cli = make_cli()\n"
        "names = cli.list_commands(click.Context(cli))\n"
        "assert 'mcp' in names, names\n"
        "assert 'fastmcp' not in sys.modules and 'mcp' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, env=environment(), timeout=60)
