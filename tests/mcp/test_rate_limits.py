"""Rate limits follow who a client verifiably is: a verified token, else its address;
the local (stdio) client's buckets survive a restart of the server."""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest
from mcp import MCPError
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.mcp.conftest import CUE, environment, http_server

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def _limit(root: Path, tool: str, burst: int) -> None:
    config = root / ".cuedeck" / "config.toml"
    config.write_text(
        config.read_text() + f"\n[rate_limits.{tool}]\nper_minute = 1\nburst = {burst}\n"
    )


async def test_unverified_bearer_headers_share_their_address_bucket(demo: Path) -> None:
    _limit(demo, "read_doc", 3)
    outcomes = []
    with http_server(demo) as (url, _port):  # no token configured: nothing is verified
        for number in range(8):
            headers = {"Authorization": f"Bearer junk{number}"}
            async with (
                httpx2.AsyncClient(headers=headers) as http,
                Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
            ):
                try:
                    await client.call_tool("read_doc", {"path": "docs/api.md"})
                    outcomes.append("ok")
                except MCPError as error:
                    outcomes.append(str(error.error.code))
    assert outcomes == ["ok"] * 3 + ["429"] * 5


async def _forged_calls(url: str, count: int) -> list[str]:
    """``count`` calls of read_doc, each claiming another address in X-Forwarded-For."""
    outcomes = []
    for number in range(count):
        headers = {"X-Forwarded-For": f"203.0.113.{number + 1}", "X-Real-IP": "203.0.113.99"}
        async with (
            httpx2.AsyncClient(headers=headers) as http,
            Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
        ):
            try:
                await client.call_tool("read_doc", {"path": "docs/api.md"})
                outcomes.append("ok")
            except MCPError as error:
                outcomes.append(str(error.error.code))
    return outcomes


async def test_a_forged_forwarded_address_gets_no_fresh_bucket(demo: Path) -> None:
    """uvicorn believes X-Forwarded-For from loopback unless told not to: each forged
    address got a bucket of its own (8 of 8 calls where 3 were allowed)."""
    _limit(demo, "read_doc", 3)
    with http_server(demo) as (url, _port):
        assert await _forged_calls(url, 8) == ["ok"] * 3 + ["429"] * 5


async def test_trusted_proxies_are_believed(demo: Path) -> None:
    """Behind a proxy the person names, each forwarded client has its own bucket."""
    _limit(demo, "read_doc", 1)
    config = demo / ".cuedeck" / "config.toml"
    config.write_text(config.read_text() + '\n[mcp]\ntrusted_proxies = ["127.0.0.0/8"]\n')
    with http_server(demo) as (url, _port):
        assert await _forged_calls(url, 3) == ["ok"] * 3


async def test_the_local_clients_buckets_survive_a_restart(demo: Path) -> None:
    _limit(demo, "list_tasks", 2)
    params = StdioServerParameters(command=CUE, args=["-C", str(demo), "mcp"], env=environment())
    outcomes = []
    for _session in range(2):  # two server processes, one after the other
        async with Client(params, mode="legacy") as client:
            for _call in range(2):
                try:
                    await client.call_tool("list_tasks", {})
                    outcomes.append("ok")
                except MCPError as error:
                    outcomes.append(str(error.error.code))
    assert outcomes == ["ok", "ok", "429", "429"]
