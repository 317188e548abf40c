"""The tasks and search tools through MCP: happy paths and their error codes on the wire."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from fastmcp import Client
from mcp import MCPError

from cuedeck.plugins.host import make_plugin_host
from cuedeck.serving.reply import reply_text

from .conftest import server_for

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.anyio

TOOLS = make_plugin_host().tools()
needs_tasks = pytest.mark.skipif("list_tasks" not in TOOLS, reason="cuedeck-tasks not installed")
needs_search = pytest.mark.skipif(
    "read_context" not in TOOLS, reason="cuedeck-search not installed"
)


async def _call(client: Client, tool: str, args: dict[str, Any]) -> Any:
    """The tool's reply: its structured content (unwrapped when it wraps a list), which
    the text the model reads renders."""
    result = await client.call_tool(tool, args)
    value = result.structured_content
    assert value is not None
    if (result.meta or {}).get("fastmcp", {}).get("wrap_result"):
        value = value["result"]
    assert result.content[0].text == reply_text(value)  # type: ignore[union-attr]
    return value


async def _error(client: Client, tool: str, args: dict[str, Any]) -> Any:
    with pytest.raises(MCPError) as caught:
        await client.call_tool(tool, args)
    return caught.value.error


@needs_tasks
async def test_task_tools_happy_paths(demo: Path) -> None:
    async with Client(server_for(demo)) as client:
        active = await _call(client, "list_tasks", {"status": "active"})
        created = await _call(
            client,
            "create_task",
            {"title": "Rotate keys", "priority": "high", "tags": ["ops"], "depends_on": ["k3x9q2"]},
        )
        new_id = created["id"]
        updated = await _call(
            client, "update_task", {"id": new_id, "updates": {"status": "active", "notes": "go"}}
        )
        deps = await _call(client, "get_task_dependencies", {"id": new_id})
        dependents = await _call(client, "get_task_dependencies", {"id": "k3x9q2", "reverse": True})
        graph = await _call(client, "validate_task_graph", {})
        listed = await client.call_tool("list_tasks", {"status": "active"})
    assert [card["id"] for card in active] == ["k3x9q2"]
    assert created["path"] == f".cuedeck/cards/{new_id}.md"
    assert (demo / created["path"]).is_file()
    assert created["metadata"]["status"] == "todo"
    assert created["metadata"]["depends_on"] == ["k3x9q2"]
    assert updated["status"] == "active"
    assert set(updated["updated_fields"]) >= {"status"}
    assert [t["id"] for t in deps["tasks"]] == ["k3x9q2"]
    assert new_id in [t["id"] for t in dependents["tasks"]]
    assert graph["valid"] is True
    # a list reply travels as structured content wrapped in {"result": [...]}
    assert listed.structured_content is not None
    assert {c["id"] for c in listed.structured_content["result"]} == {"k3x9q2", new_id}


@needs_tasks
async def test_task_tool_errors_keep_their_codes(demo: Path) -> None:
    async with Client(server_for(demo)) as client:
        missing_dep = await _error(client, "create_task", {"title": "X", "depends_on": ["k3x9q3"]})
        cycle = await _error(
            client, "update_task", {"id": "m7p2r5", "updates": {"add_depends_on": ["k3x9q2"]}}
        )
        unknown = await _error(
            client, "update_task", {"id": "k3x9q3", "updates": {"status": "done"}}
        )
        empty = await _error(client, "update_task", {"id": "k3x9q2", "updates": {}})
        bad_id = await _error(client, "get_task_dependencies", {"id": "NOT-AN-ID"})
        bad_status = await _error(client, "list_tasks", {"status": "doing"})
    assert missing_dep.code == 1001
    assert missing_dep.data["suggestion"] == "Did you mean 'k3x9q2'?"
    assert cycle.code == 1002
    assert cycle.data["cycle_path"] == ["m7p2r5", "k3x9q2", "m7p2r5"]
    assert (unknown.code, unknown.data["suggestion"]) == (1001, "Did you mean 'k3x9q2'?")
    assert (empty.code, empty.data["field"]) == (1004, "updates")
    assert (bad_id.code, bad_id.data["field"]) == (1004, "id")
    assert (bad_status.code, bad_status.data["field"]) == (1004, "status")


@needs_tasks
async def test_update_task_default_rate_limit_is_15_then_429(demo: Path) -> None:
    async with Client(server_for(demo), mode="legacy") as client:
        for n in range(15):
            await client.call_tool("update_task", {"id": "w4n8t1", "updates": {"notes": f"n{n}"}})
        error = await _error(client, "update_task", {"id": "w4n8t1", "updates": {"notes": "x"}})
    assert error.code == 429
    assert (error.data["limit"], error.data["current_count"]) == (10, 15)


@needs_search
async def test_read_context_keyword_and_hybrid(demo: Path) -> None:
    async with Client(server_for(demo)) as client:
        keyword = await _call(client, "read_context", {"query": "refresh token", "mode": "keyword"})
        hybrid = await _call(client, "read_context", {"query": "refresh token", "limit": 2})
        filtered = await _call(
            client,
            "read_context",
            {"query": "login", "mode": "keyword", "filters": {"tags": ["security"]}},
        )
        bad_mode = await _error(client, "read_context", {"query": "x", "mode": "fuzzy"})
        empty = await _error(client, "read_context", {"query": ""})
    assert (keyword["mode"], keyword["answered_by"], keyword["embedding"]) == (
        "keyword",
        "keyword",
        None,
    )
    assert ".cuedeck/cards/k3x9q2.md" in [r["path"] for r in keyword["results"]]
    assert {"path", "hash", "tokens", "anchors"} <= set(keyword["results"][0])
    assert len(hybrid["results"]) == 2
    # The first hybrid call of a server finds nothing embedded: keyword answers, and the
    # reply says so, with what is left to embed (the server embeds it in the background).
    assert hybrid["answered_by"] in ("keyword", "hybrid-partial", "hybrid")
    if hybrid["answered_by"] != "hybrid":
        assert hybrid["embedding"]["missing_sections"] > 0
        assert hybrid["note"].startswith("semantic coverage ")
    assert [r["path"] for r in filtered["results"]] == [".cuedeck/docs/auth.md"]
    assert (bad_mode.code, bad_mode.data["field"]) == (1004, "mode")
    assert (empty.code, empty.data["field"]) == (1004, "query")


needs_scene = pytest.mark.skipif("build_scene" not in TOOLS, reason="build_scene not registered")


@needs_scene
async def test_build_scene_and_the_scene_resource(demo: Path) -> None:
    async with Client(server_for(demo)) as client:
        reply = await _call(client, "build_scene", {"card_id": "k3x9q2"})
        resource = await client.read_resource("cuedeck://scene")
        uris = {str(r.uri) for r in await client.list_resources()}
    assert "cuedeck://scene" in uris
    assert "Add refresh tokens to login" in reply["text"]
    assert reply["card"] == "k3x9q2"
    assert reply["tokens"] < reply["token_limit"] == 1600  # the demo's [scene] token_limit
    assert "| priority | tokens | placed |" in reply["text"]  # the manifest, as a table
    text = resource[0].text  # type: ignore[union-attr]
    assert "Add refresh tokens to login" in text
    for scene in (reply["text"], text):
        assert "sk_live_" not in scene
        assert "[REDACTED:" in scene


@needs_scene
async def test_build_scene_errors(demo: Path) -> None:
    docs = demo / ".cuedeck" / "docs"
    (docs / "loop-a.md").write_text("# A\n\nSee @doc/loop-b.\n")
    (docs / "loop-b.md").write_text("# B\n\nSee @doc/loop-a.\n")
    (demo / ".cuedeck" / "cards" / "lp0000.md").write_text(
        "---\nid: lp0000\ntitle: Loop\nstatus: todo\n---\n# Loop\n\nSee @doc/loop-a.\n"
    )
    async with Client(server_for(demo)) as client:
        too_small = await _error(client, "build_scene", {"card_id": "k3x9q2", "token_limit": 5})
        missing = await _error(client, "build_scene", {"card_id": "k3x9q3"})
        cycle = await _error(client, "build_scene", {"card_id": "lp0000"})
        bad = await _error(client, "build_scene", {"format": "pdf"})
    assert too_small.code == 1003
    assert too_small.data["limit"] == 5
    assert too_small.data["current_size"] > 5
    assert "action" in too_small.data
    assert (missing.code, missing.data["suggestion"]) == (1001, "Did you mean 'k3x9q2'?")
    assert cycle.code == 1002
    assert cycle.data["cycle_path"][0] == cycle.data["cycle_path"][-1]
    assert (bad.code, bad.data["field"]) == (1004, "format")
