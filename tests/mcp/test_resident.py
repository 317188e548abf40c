"""Resident stdio servers: `cue mcp` relays to a warm server per workspace."""

from __future__ import annotations

import json
import os
import select
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from cuedeck_mcp import resident
from tests.conftest import plant_shadows
from tests.mcp.conftest import CUE, environment

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not resident.supported(), reason="abstract Unix sockets are Linux's"),
]


@pytest.fixture
def warm(demo: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The demo workspace with resident servers allowed; every one stopped afterwards."""
    monkeypatch.setenv("CUEDECK_MCP_RESIDENT", "1")
    yield demo
    resident.stop_servers(demo)


def params(root: Path, *args: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=CUE, args=["-C", str(root), "mcp", *args], env=environment()
    )


def servers(root: Path) -> list[dict[str, Any]]:
    """The registered resident servers of ``root``."""
    folder = Path(resident.registry())
    found = [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]
    return [entry for entry in found if entry["root"] == str(root)]


def wait_for_exit(pid: int, timeout: float = 60.0) -> bool:
    """Whether process ``pid`` ended within ``timeout`` (waits on the process, not a clock
    tick)."""
    try:
        ending = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([ending], [], [], timeout)[0])
    finally:
        os.close(ending)


async def test_a_client_started_again_is_served_by_the_same_warm_server(warm: Path) -> None:
    async with Client(params(warm), mode="legacy") as client:
        first = await client.call_tool(
            "context_capture",
            {"project_id": "p", "segments": [{"text": "the relay keeps the server warm"}]},
        )
        assert not first.is_error
    [server] = servers(warm)
    async with Client(params(warm), mode="legacy") as client:
        again = await client.call_tool("context_restore", {"project_id": "p"})
    assert not again.is_error
    assert "the relay keeps the server warm" in json.dumps(again.structured_content)
    assert servers(warm) == [server]  # the same process answered both sessions
    result = subprocess.run(
        [CUE, "-C", str(warm), "mcp", "stop", "--json"],
        capture_output=True, text=True, env=environment(), check=True, timeout=60,
    )  # fmt: skip
    stopped = [{"server": server["server"], "pid": server["pid"]}]
    assert json.loads(result.stdout)["stopped"] == stopped
    assert wait_for_exit(server["pid"], timeout=1.0)  # stop waits for the end
    assert servers(warm) == []
    assert list(Path(resident.registry()).glob(server["server"] + ".*")) == []  # log was empty


async def test_the_resident_server_runs_nothing_planted_where_the_client_starts(
    warm: Path, tmp_path: Path
) -> None:
    """A write client can create `cuedeck_cli/__main__.py` (and shadows of the standard
    modules) in the workspace; a `cue mcp` started there still starts the real server."""
    marker = tmp_path / "planted-code-ran"
    plant_shadows(warm, marker)
    server = StdioServerParameters(
        command=CUE, args=["-C", str(warm), "mcp"], env=environment(), cwd=str(warm)
    )
    async with Client(server, mode="legacy") as client:
        listed = await client.list_tools()
    assert listed.tools
    [started] = servers(warm)  # the relay started a resident server, from the workspace
    assert started["pid"] > 0
    assert not marker.exists(), marker.read_text()


async def test_a_changed_config_or_tool_list_gets_its_own_server(warm: Path) -> None:
    async with Client(params(warm), mode="legacy") as client:
        await client.list_tools()
    async with Client(params(warm, "--tools", "core,memory"), mode="legacy") as client:
        listed = {tool.name for tool in (await client.list_tools()).tools}
    assert "context_gc_analyze" in listed
    config = warm / ".cuedeck" / "config.toml"
    config.write_text(config.read_text() + "\n# edited\n", encoding="utf-8")
    async with Client(params(warm), mode="legacy") as client:
        await client.list_tools()
    assert len({entry["server"] for entry in servers(warm)}) == 3


@pytest.mark.slow
async def test_an_idle_resident_server_exits(warm: Path) -> None:
    config = warm / ".cuedeck" / "config.toml"
    config.write_text(config.read_text() + "\n[mcp]\nresident_seconds = 1\n", encoding="utf-8")
    async with Client(params(warm), mode="legacy") as client:
        await client.list_tools()
    [server] = servers(warm)
    assert wait_for_exit(server["pid"])
    assert servers(warm) == []


def test_requests_sent_before_the_input_ends_are_all_answered(warm: Path) -> None:
    initialize = {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}},
    }  # fmt: skip
    lines = [
        initialize,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        "not json",
    ]
    text = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    for _ in range(2):  # the first starts the server, the second finds it warm
        done = subprocess.run(
            [CUE, "-C", str(warm), "mcp"], input=text, capture_output=True, text=True,
            env=environment(), timeout=120, check=True,
        )  # fmt: skip
        replies = [json.loads(line) for line in done.stdout.splitlines()]
        assert sorted(str(reply.get("id")) for reply in replies) == ["1", "2", "None"]
        by_id = {reply.get("id"): reply for reply in replies}
        assert by_id[None]["error"]["code"] == -32700
        assert by_id[2]["result"]["tools"]
    assert len(servers(warm)) == 1


def test_without_resident_servers_each_client_has_its_own_process(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUEDECK_MCP_RESIDENT", "0")
    request = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    done = subprocess.run(
        [CUE, "-C", str(demo), "mcp"], input=json.dumps(request) + "\n", capture_output=True,
        text=True, env=environment(), timeout=120, check=True,
    )  # fmt: skip
    assert json.loads(done.stdout)["id"] == 1
    assert servers(demo) == []


def test_the_key_follows_what_could_make_two_servers_differ(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = resident.key(tmp_path, None)
    assert resident.key(tmp_path, None) == first
    assert resident.key(tmp_path, ["core", "git"]) != first
    assert resident.key(tmp_path / "other", None) != first
    monkeypatch.setenv("SOME_TOKEN", "changed")
    assert resident.key(tmp_path, None) != first
