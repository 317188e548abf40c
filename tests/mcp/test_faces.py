"""Tool descriptions and schemas remembered between server starts (cuedeck_mcp.faces)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client

from cuedeck import hookimpl
from cuedeck.plugins.host import make_plugin_host
from cuedeck.workspace import open_workspace
from cuedeck_mcp.server import build_server
from tests.conftest import run_script
from tests.mcp.conftest import CUE, environment

TOOL = '''
def shout(workspace, text: str) -> dict:
    """{summary}"""
    return {{"text": text.upper()}}
'''


class ShoutPlugin:
    def __init__(self, module: str) -> None:
        self.module = module

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(f"{self.module}:shout", category="text", read_only=True)


@pytest.fixture
def shout_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Path]]:
    name = f"cuedeck_shout_{tmp_path.name.replace('-', '_')}"
    path = tmp_path / f"{name}.py"
    path.write_text(TOOL.format(summary="Upper-case a text."), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name, path
    sys.modules.pop(name, None)


async def _listed(demo: Path, module: str) -> dict[str, Any]:
    host = make_plugin_host()
    host.register(ShoutPlugin(module), name="shouter")
    server = build_server(open_workspace(demo, plugins=host), profile=["core", "shout"])
    async with Client(server) as client:
        return {tool.name: tool for tool in await client.list_tools()}


@pytest.mark.anyio
async def test_an_edited_tool_is_described_anew(demo: Path, shout_module: tuple[str, Path]) -> None:
    module, path = shout_module
    first = await _listed(demo, module)
    assert first["shout"].description == "Upper-case a text."
    path.write_text(TOOL.format(summary="Shout a text back."), encoding="utf-8")
    sys.modules.pop(module)  # as a restarted server would import it
    again = await _listed(demo, module)
    assert again["shout"].description == "Shout a text back."
    assert again["read_doc"] == first["read_doc"]


@pytest.mark.slow
def test_a_restarted_server_describes_its_tools_without_importing_them(demo: Path) -> None:
    script = f"""
import asyncio, json, sys
from fastmcp import Client
from cuedeck.workspace import open_workspace
from cuedeck_mcp.server import build_server
server = build_server(open_workspace({str(demo)!r}), profile=["core", "memory"])
async def main():
    async with Client(server) as client:
        return [t.model_dump(mode="json") for t in await client.list_tools()]
listed = asyncio.run(main())
modules = sorted(m for m in sys.modules if m in ("cuedeck_memory.tools", "numpy"))
print(json.dumps([listed, modules]))
"""
    first, imported = run_script(script)
    again, not_imported = run_script(script)
    assert imported == ["cuedeck_memory.tools", "numpy"]  # described: imported once
    assert not_imported == []
    assert again == first


#: Runs `cue` as its console script does, then writes the modules it imported.
PROBE = """
import atexit, json, runpy, sys
out, script = sys.argv[1], sys.argv[2]
atexit.register(lambda: open(out, "w").write(json.dumps(sorted(sys.modules))))
sys.argv = sys.argv[2:]
sys.path[0] = script.rpartition("/")[0]
runpy.run_path(script, run_name="__main__")
"""
REQUESTS = [
    {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
     "params": {"name": "read_doc", "arguments": {"path": "docs/auth.md"}}},
]  # fmt: skip


@pytest.mark.slow
def test_the_stdio_server_answers_without_what_it_defers(demo: Path, tmp_path: Path) -> None:
    """Over stdio, a restarted server's first answers import neither the tools it does
    not call nor FastMCP's session-state library (CueDeck writes no session state)."""
    out = tmp_path / "modules.json"
    lines = "".join(json.dumps(request) + "\n" for request in REQUESTS)
    for _ in range(2):  # the second start finds the tools' descriptions remembered
        done = subprocess.run(
            [sys.executable, "-c", PROBE, str(out), CUE, "-C", str(demo), "mcp"],
            input=lines, capture_output=True, text=True, env=environment(), timeout=120,
        )  # fmt: skip
        replies = {r["id"]: r for r in map(json.loads, done.stdout.splitlines())}
        assert sorted(replies) == [0, 1, 2], done.stderr[-2000:]
        assert "error" not in replies[2]
    modules = set(json.loads(out.read_text(encoding="utf-8")))
    deferred = (
        "key_value",
        "beartype",
        "numpy",
        "cuedeck_tasks.tools",
        "cuedeck.serving.scene_tool",
    )
    assert sorted(m for m in modules if m.startswith(deferred)) == []
    assert "cuedeck.serving.read_doc" in modules and "cuedeck_mcp.asgi" not in modules
