"""The HTTP transport against DNS rebinding and reconnecting clients: a real `cue mcp`."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import MCPError
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from cuedeck.serving.http_guard import HEADER_TIMEOUT, MAX_BODY_BYTES, HostOriginGuard
from tests.conftest import endless_chunked_body, raw_http
from tests.mcp.conftest import CUE, environment, http_server

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


async def _statuses(url: str, headers: list[dict[str, str]]) -> list[int]:
    async with httpx2.AsyncClient() as http:
        return [(await http.post(url, json=PING, headers=h)).status_code for h in headers]


async def _read_doc(url: str, *, origin: str | None = None, source: str | None = None) -> Any:
    """read_doc over a new connection and session: the result, or the MCPError raised."""
    headers = {"Origin": origin} if origin else {}
    transport = httpx2.AsyncHTTPTransport(local_address=source) if source else None
    async with (
        httpx2.AsyncClient(headers=headers, transport=transport) as http,
        Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
    ):
        try:
            return await client.call_tool("read_doc", {"path": "docs/api.md"})
        except MCPError as error:
            return error


async def test_forged_host_and_origin_are_refused_and_genuine_ones_served(demo: Path) -> None:
    with http_server(demo) as (url, port):
        statuses = await _statuses(
            url,
            [
                {"Host": f"attacker.example:{port}"},  # a rebound DNS name
                {"Host": "attacker.example"},
                {"Host": f"127.0.0.1:{port + 1}"},  # another port is another server
                {"Origin": "http://attacker.example"},  # a cross-site page
                {"Origin": "http://localhost:3000"},  # another local web app
                {"Origin": "null"},  # a sandboxed frame or a file: page
            ],
        )
        plain = await _read_doc(url)
        same_origin = await _read_doc(url, origin=f"http://127.0.0.1:{port}")
        by_name = await _read_doc(url, origin=f"http://localhost:{port}")
    assert statuses == [421, 421, 421, 403, 403, 403]
    for result in (plain, same_origin, by_name):
        assert result.structured_content["path"] == ".cuedeck/docs/api.md"


async def test_config_allow_lists_extend_what_is_accepted(demo: Path) -> None:
    config = demo / ".cuedeck" / "config.toml"
    config.write_text(
        config.read_text()
        + '\n[mcp]\nallowed_hosts = ["cuedeck.test"]\n'
        + 'allowed_origins = ["https://board.example"]\n'
    )
    with http_server(demo) as (url, port):
        statuses = await _statuses(
            url,
            [
                {"Host": f"cuedeck.test:{port}"},
                {"Origin": "https://board.example"},
                {"Host": "cuedeck.test:1"},
                {"Origin": "https://other.example"},
            ],
        )
    assert statuses[0] not in (421, 403)
    assert statuses[1] not in (421, 403)
    assert statuses[2:] == [421, 403]


def test_a_non_loopback_address_needs_a_token_or_insecure(demo: Path) -> None:
    refused = subprocess.run(
        [CUE, "-C", str(demo), "mcp", "--transport", "http", "--host", "0.0.0.0"],
        capture_output=True,
        text=True,
        timeout=60,
        env=environment(),
        check=False,
    )
    assert refused.returncode == 1
    assert "error[1004]" in refused.stderr
    assert "CUEDECK_MCP_TOKEN" in refused.stderr
    assert "--insecure" in refused.stderr


async def test_insecure_serves_a_non_loopback_address_still_checking_host(demo: Path) -> None:
    with http_server(demo, "--host", "0.0.0.0", "--insecure") as (url, port):
        result = await _read_doc(url)
        statuses = await _statuses(url, [{"Host": f"attacker.example:{port}"}])
    assert result.structured_content["path"] == ".cuedeck/docs/api.md"
    assert statuses == [421]


async def test_rate_limits_follow_the_client_not_the_session(demo: Path) -> None:
    config = demo / ".cuedeck" / "config.toml"
    config.write_text(config.read_text() + "\n[rate_limits.read_doc]\nper_minute = 1\nburst = 2\n")
    with http_server(demo) as (url, _):
        await _read_doc(url, source="127.0.0.1")
        await _read_doc(url, source="127.0.0.1")
        # A new connection and session from the same address finds the bucket empty...
        reconnected = await _read_doc(url, source="127.0.0.1")
        # ...while another client (another loopback address) has a bucket of its own.
        other = await _read_doc(url, source="127.0.0.2")
    assert isinstance(reconnected, MCPError)
    assert reconnected.error.code == 429
    assert other.structured_content["path"] == ".cuedeck/docs/api.md"


async def test_token_holders_share_one_bucket_whatever_their_address(demo: Path) -> None:
    config = demo / ".cuedeck" / "config.toml"
    config.write_text(config.read_text() + "\n[rate_limits.read_doc]\nper_minute = 1\nburst = 1\n")
    token = {"Authorization": "Bearer team-token"}
    with http_server(demo, CUEDECK_MCP_TOKEN="team-token") as (url, _):
        async with (
            httpx2.AsyncClient(headers=token) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            await client.call_tool("read_doc", {"path": "docs/api.md"})
        transport = httpx2.AsyncHTTPTransport(local_address="127.0.0.3")
        async with (
            httpx2.AsyncClient(headers=token, transport=transport) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            with pytest.raises(MCPError) as limited:
                await client.call_tool("read_doc", {"path": "docs/api.md"})
    assert limited.value.error.code == 429


def test_guard_rules() -> None:
    guard = HostOriginGuard(
        None,  # type: ignore[arg-type]
        host="::1",
        port=8765,
        allowed_hosts=["mcp.internal", "proxy.internal:443"],
        allowed_origins=["https://board.example/"],
    )
    assert guard.host_allowed("[::1]:8765")
    assert guard.host_allowed("LOCALHOST:8765")
    assert guard.host_allowed("mcp.internal:8765")
    assert guard.host_allowed("proxy.internal:443")
    assert not guard.host_allowed("proxy.internal:8765")
    assert not guard.host_allowed("localhost")  # port 80: not this server
    assert not guard.host_allowed(None)
    assert guard.origin_allowed(None)
    assert guard.origin_allowed("http://[::1]:8765")
    assert guard.origin_allowed("https://board.example")
    assert not guard.origin_allowed("http://board.example")


async def test_duplicate_origins_and_endless_bodies_are_refused(demo: Path) -> None:
    with http_server(demo) as (_url, port):
        for origins in (("http://evil.example", f"http://127.0.0.1:{port}"),
                        (f"http://127.0.0.1:{port}", "http://evil.example")):  # fmt: skip
            extra = "".join(f"Origin: {origin}\r\n" for origin in origins)
            answer = raw_http(
                port,
                f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{extra}"
                "Content-Length: 2\r\nConnection: close\r\n\r\n{}".encode(),
            )
            assert answer.startswith(b"HTTP/1.1 400 "), answer[:200]
        sent, answer = endless_chunked_body(port, "/mcp")
    assert sent < MAX_BODY_BYTES * 8  # the cap, and what the kernel's buffers took
    assert answer.startswith((b"HTTP/1.1 413 ", b"reset")), answer[:200]


async def test_headers_that_never_end_lose_the_connection(demo: Path) -> None:
    with http_server(demo) as (_url, port):
        with socket.create_connection(("127.0.0.1", port), timeout=HEADER_TIMEOUT * 6) as sock:
            sock.sendall(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode())
            closed = sock.recv(1024)  # waits for the server: it closes at the deadline
        served = await _read_doc(url=_url)
    assert closed == b""
    assert served.structured_content["path"] == ".cuedeck/docs/api.md"  # others still served


async def test_every_request_gets_an_answer_over_http(demo: Path) -> None:
    headers = {"Accept": "application/json, text/event-stream"}
    initialize = {
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "probe", "version": "1"}},
    }  # fmt: skip
    deep: object = []
    for _ in range(200):
        deep = [deep]
    answers = []
    with http_server(demo) as (url, _port):
        async with httpx2.AsyncClient(headers=headers) as http:
            opened = await http.post(url, json=initialize)
            session = {"mcp-session-id": opened.headers.get("mcp-session-id", "")}
            for request_id in ({"a": 1}, 1.5, None, True):
                reply = await http.post(
                    url, json={"jsonrpc": "2.0", "id": request_id, "method": "ping"},
                    headers=session,
                )  # fmt: skip
                answers.append((reply.status_code, reply.json()["error"]["code"]))
            call = {"name": "list_tasks", "arguments": {"status": deep}}
            reply = await http.post(
                url, json={"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": call},
                headers=session,
            )  # fmt: skip
            answers.append((reply.status_code, reply.json()["error"]["code"]))
    assert answers == [(400, -32600)] * 4 + [(200, 1004)]
