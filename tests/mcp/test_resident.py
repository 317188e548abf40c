"""Resident stdio servers: `cue mcp` relays to a warm server per workspace."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from cuedeck.watch.watcher import supported as watcher_supported
from cuedeck_mcp import resident_registry, resident_relay
from tests.conftest import needs, plant_shadows, process_ended
from tests.mcp.conftest import CUE, environment

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not resident_relay.supported(), reason="abstract Unix sockets are Linux's"),
]


@pytest.fixture
def warm(demo: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The demo workspace with resident servers allowed; every one stopped afterwards."""
    monkeypatch.setenv("CUEDECK_MCP_RESIDENT", "1")
    yield demo
    resident_registry.stop_servers(demo)


def params(root: Path, *args: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=CUE, args=["-C", str(root), "mcp", *args], env=environment()
    )


def servers(root: Path) -> list[dict[str, Any]]:
    """The registered resident servers of ``root``."""
    folder = Path(resident_registry.registry())
    found = [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]
    return [entry for entry in found if entry["root"] == str(root)]


@needs("cuedeck_memory")
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
    # The same process answered both sessions.
    assert [(e["server"], e["pid"]) for e in servers(warm)] == [(server["server"], server["pid"])]
    result = subprocess.run(
        [CUE, "-C", str(warm), "mcp", "stop", "--json"],
        capture_output=True, text=True, env=environment(), check=True, timeout=60,
    )  # fmt: skip
    stopped = [{"server": server["server"], "pid": server["pid"]}]
    assert json.loads(result.stdout)["stopped"] == stopped
    assert process_ended(server["pid"], timeout=1.0)  # stop waits for the end
    assert servers(warm) == []
    assert (
        list(Path(resident_registry.registry()).glob(server["server"] + ".*")) == []
    )  # log was empty


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


@pytest.mark.slow  # three resident servers started and retired (~12 s)
@needs("cuedeck_memory")
async def test_a_changed_config_or_tool_list_gets_its_own_server_and_the_old_one_goes(
    warm: Path,
) -> None:
    """One resident server per workspace: a new one asks the one before to retire, which
    ends at once when no client is connected to it."""
    async with Client(params(warm), mode="legacy") as client:
        await client.list_tools()
    [first] = servers(warm)
    async with Client(params(warm, "--tools", "core,memory"), mode="legacy") as client:
        listed = {tool.name for tool in (await client.list_tools()).tools}
    assert "context_gc_analyze" in listed
    assert process_ended(first["pid"])
    [second] = servers(warm)
    config = warm / ".cuedeck" / "config.toml"
    config.write_text(config.read_text() + "\n# edited\n", encoding="utf-8")
    async with Client(params(warm), mode="legacy") as client:
        await client.list_tools()
    assert process_ended(second["pid"])
    [third] = servers(warm)
    assert len({first["server"], second["server"], third["server"]}) == 3


@pytest.mark.slow  # two resident servers, one retired under a client (~9 s)
@needs("cuedeck_memory")
async def test_a_retiring_server_serves_its_client_to_the_end(warm: Path) -> None:
    async with Client(params(warm), mode="legacy") as old_client:
        await old_client.list_tools()
        [old] = servers(warm)
        async with Client(params(warm, "--tools", "core,memory"), mode="legacy") as new_client:
            await new_client.list_tools()
        retiring = [entry for entry in servers(warm) if entry["server"] == old["server"]]
        assert retiring and retiring[0]["retiring"] and retiring[0]["sessions"] == 1
        again = await old_client.call_tool("list_tasks", {})  # still served
        assert not again.is_error
    assert process_ended(old["pid"])  # its last client left
    assert [entry["server"] for entry in servers(warm)] != [old["server"]]


@pytest.mark.slow
async def test_an_idle_resident_server_exits(warm: Path) -> None:
    config = warm / ".cuedeck" / "config.toml"
    config.write_text(config.read_text() + "\n[mcp]\nresident_seconds = 1\n", encoding="utf-8")
    async with Client(params(warm), mode="legacy") as client:
        await client.list_tools()
    [server] = servers(warm)
    assert process_ended(server["pid"])
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
    first = resident_relay.key(tmp_path, None)
    assert resident_relay.key(tmp_path, None) == first
    assert resident_relay.key(tmp_path, ["core", "git"]) != first
    assert resident_relay.key(tmp_path / "other", None) != first
    monkeypatch.setenv("SOME_TOKEN", "changed")
    assert resident_relay.key(tmp_path, None) != first


def cue(root: Path, *args: str) -> str:
    """Run `cue -C root ARGS` as a person would; its stdout."""
    done = subprocess.run(
        [CUE, "-C", str(root), *args],
        capture_output=True, text=True, env=environment(), check=True, timeout=120,
    )  # fmt: skip
    return done.stdout


def watcher_pid(root: Path, timeout: float = 30.0) -> int:
    """The pid of the workspace's watcher once it answers (polled with a deadline: it
    says nothing to whoever started it)."""
    from cuedeck.watch import watcher

    deadline = time.monotonic() + timeout
    while (found := watcher.status(root)) is None:
        assert time.monotonic() < deadline, "the watcher never answered"
        time.sleep(0.05)
    return int(found["pid"])


@pytest.mark.slow
@pytest.mark.skipif(not watcher_supported(), reason="the watcher uses inotify")
async def test_doctor_and_status_list_what_runs_until_stop_and_the_idle_limit_end_it(
    warm: Path,
) -> None:
    config = warm / ".cuedeck" / "config.toml"
    config.write_text(
        config.read_text() + "\n[watch]\nwatcher_idle_seconds = 20\n", encoding="utf-8"
    )
    async with Client(params(warm), mode="legacy") as client:
        await client.list_tools()
        [server] = servers(warm)
        cue(warm, "search", "--mode", "keyword", "refresh")  # starts the workspace's watcher
        watcher = watcher_pid(warm)
        doctor = json.loads(cue(warm, "doctor", "--json"))
        status = json.loads(cue(warm, "status", "--json"))["processes"]
        lines = cue(warm, "status").splitlines()
    for listing in (doctor["background"], status):
        running = {(p["kind"], p["pid"]): p for p in listing}
        assert set(running) == {("resident MCP server", server["pid"]), ("watcher", watcher)}
        resident_entry = running["resident MCP server", server["pid"]]
        assert resident_entry["ends"] == "15 min after its last client leaves (1 connected now)"
        assert running["watcher", watcher]["ends"].startswith("after 20 s without a question")
        assert all(p["age_seconds"] >= 0 for p in listing)
    assert [line.split(" (pid")[0] for line in lines] == ["resident MCP server", "watcher"]
    assert f"resident MCP server (pid {server['pid']}, " in lines[0]
    cue(warm, "mcp", "stop")
    assert process_ended(server["pid"], timeout=60)  # stopped
    assert process_ended(watcher, timeout=60)  # its idle limit, 20 s without a question
    assert cue(warm, "status") == "nothing runs in the background for this workspace\n"
