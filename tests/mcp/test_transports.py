"""`cue mcp` as a real subprocess, driven by the official MCP SDK over stdio and HTTP."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx2
import pytest
from mcp import MCPError
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

CUE = str(Path(sys.executable).with_name("cue"))
SECRET = "sk_live_4eC39HqLyjWDarjtT1zdp7dcTYooMQauvdEDq54NiTphI7jx"


def _environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUEDECK_", "CUE_"))}
    env.update(extra)
    return env


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_stdio_subprocess_serves_tools_errors_and_masking(demo: Path, mode: str) -> None:
    params = StdioServerParameters(command=CUE, args=["-C", str(demo), "mcp"], env=_environment())
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
        env=_environment(),
        check=False,
    )
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    assert lines
    assert all(line.startswith('{"jsonrpc":"2.0"') for line in lines), done.stdout


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def _http_server(root: Path, **env: str) -> Iterator[str]:
    port = _free_port()
    process = subprocess.Popen(
        [CUE, "-C", str(root), "mcp", "--transport", "http", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_environment(**env),
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(process.stderr.read().decode()) from None  # type: ignore[union-attr]
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


async def _read_doc_over_http(url: str, headers: dict[str, str] | None = None) -> Any:
    async with httpx2.AsyncClient(headers=headers or {}) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode="legacy") as client:
            result = await client.call_tool("read_doc", {"path": "docs/api.md", "anchor": "login"})
            with pytest.raises(MCPError) as missing:
                await client.call_tool("read_doc", {"path": "docs/nope.md"})
            return result, missing.value.error


async def test_http_without_a_token(demo: Path) -> None:
    with _http_server(demo) as url:
        result, missing = await _read_doc_over_http(url)
    assert result.structured_content["anchor"] == "Login"
    assert missing.code == 1001


async def test_http_with_a_token_requires_it(demo: Path) -> None:
    with _http_server(demo, CUEDECK_MCP_TOKEN="s3cret-token") as url:
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
        "import sys\n"
        "from cuedeck_cli.app import make_cli\n"
        "names = [c for c in make_cli().commands]\n"
        "assert 'mcp' in names, names\n"
        "assert 'fastmcp' not in sys.modules and 'mcp' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, env=_environment(), timeout=60)
