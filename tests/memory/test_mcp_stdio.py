"""Every memory tool through a real `cue mcp` over stdio, and memory surviving a restart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("cuedeck_mcp")

from mcp import MCPError
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from tests.mcp.conftest import CUE, environment
from tests.memory.conftest import KEY, card

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

TOOLS = {
    "context_analyze_usage",
    "context_get_working_set",
    "context_gc_analyze",
    "context_gc_prune",
    "context_gc_pin",
    "context_gc_unpin",
    "context_stash",
    "context_search_stashed",
    "context_retrieve_stashed",
    "context_list_projects",
    "context_set_current_task",
    "context_get_task_context",
    "context_create_task_snapshot",
    "context_capture",
    "context_restore",
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def server(root: Path) -> StdioServerParameters:
    """`cue mcp` serving the memory tools; the local user as admin, for prune-delete."""
    config = root / ".cuedeck" / "config.toml"
    if not config.exists():
        config.write_text('[mcp]\nlocal_role = "admin"\n', encoding="utf-8")
    args = ["-C", str(root), "mcp", "--tools", "core,memory"]
    return StdioServerParameters(command=CUE, args=args, env=environment())


SCHEMAS: dict[str, Any] = {}


async def use(client: Client, tool: str, **arguments: Any) -> Any:
    """Call ``tool``; its reply must be structured and valid against its full output
    schema (types and required keys), as typed replies promise."""
    import jsonschema

    result = await client.call_tool(tool, arguments)
    assert result.structured_content is not None, tool
    jsonschema.validate(result.structured_content, SCHEMAS[tool])
    return result.structured_content


async def test_every_tool_over_stdio_and_a_restart(make_workspace: Any) -> None:
    from cuedeck.workspace import open_workspace

    root = make_workspace({".cuedeck/cards/c2c2c2.md": card("c2c2c2", "Login")})
    tools = open_workspace(root).plugins.tools()
    for name in TOOLS:
        schema = tools[name].output_schema()
        assert schema is not None and schema["required"], name  # typed, with required keys
        SCHEMAS[name] = schema
    async with Client(server(root), mode="legacy") as client:
        listed = {tool.name for tool in (await client.list_tools()).tools}
        assert listed >= TOOLS
        task = await use(client, "context_set_current_task", project_id="web", task_id="c2c2c2")
        assert task["active_card"] == "c2c2c2"
        captured = await use(
            client,
            "context_capture",
            project_id="web",
            segments=[
                {"text": f"token {KEY} pasted", "type": "message"},
                {"text": "we chose sessions in redis", "type": "decision"},
                {"text": "build output " * 30, "type": "log", "task_id": "other"},
            ],
        )
        message, decision, log = captured["segment_ids"]
        usage = await use(
            client,
            "context_analyze_usage",
            project_id="web",
            context_descriptors=json.dumps({"recent_messages": ["hello there"]}),
        )
        assert usage["usage_metrics"]["total_segments"] == 4
        working = await use(client, "context_get_working_set", project_id="web")
        assert KEY not in json.dumps(working)
        assert await use(client, "context_gc_pin", project_id="web", segment_ids=[decision]) == {
            "pinned_segments": [decision],
            "errors": [],
        }
        await use(client, "context_gc_unpin", project_id="web", segment_ids=[decision])
        await use(client, "context_gc_pin", project_id="web", segment_ids=[decision])
        analysis = await use(client, "context_gc_analyze", project_id="web", target_tokens=10)
        assert analysis["pruning_candidates"][0]["segment_id"] == log
        assert analysis["pruning_plan"]["target_met"]
        pruned = await use(
            client, "context_gc_prune", project_id="web", segment_ids=[log], action="stash"
        )
        assert pruned["pruned_segments"] == [log]
        stashed = await use(client, "context_stash", project_id="web", query="token pasted")
        assert stashed["stashed_segments"] == [message]
        found = await use(client, "context_search_stashed", query="build output")
        assert found["segments"][0]["segment_id"] == log
        back = await use(
            client, "context_retrieve_stashed", project_id="web", query="token", move_to_active=True
        )
        assert back["moved_to_active"] == [message]
        assert (await use(client, "context_list_projects"))["projects"] == ["web"]
        context = await use(client, "context_get_task_context", project_id="web")
        assert context["segment_count"] == 3  # the log belongs to task "other"
        snap = await use(client, "context_create_task_snapshot", project_id="web", name="s1")
        with pytest.raises(MCPError) as refused:
            await use(
                client,
                "context_gc_prune",
                project_id="web",
                segment_ids=[message],
                action="delete",
                confirm=True,
                confirmation_token="AAAA-AAAA-AAAA",
            )
        assert refused.value.error.code == 1009
        with pytest.raises(MCPError) as bad:
            await use(client, "context_search_stashed", filters="{oops")
        assert bad.value.error.code == 1004

    # A new server process: working set, pins, current task and snapshots are all there.
    async with Client(server(root), mode="legacy") as client:
        restored = await use(client, "context_restore", project_id="web", max_tokens=2000)
        assert restored["task_id"] == "c2c2c2"
        assert restored["snapshot"]["snapshot_id"] == snap["snapshot_id"]
        assert restored["segments"][0]["segment_id"] == decision
        assert restored["segments"][0]["pinned"] is True
        working = await use(client, "context_get_working_set", project_id="web")
        assert {s["segment_id"] for s in working["segments"]} >= {message, decision}
        first = await use(
            client,
            "context_gc_prune",
            project_id="web",
            segment_ids=[message],
            action="delete",
            confirm=True,
        )
        done = await use(
            client,
            "context_gc_prune",
            project_id="web",
            segment_ids=[message],
            action="delete",
            confirm=True,
            confirmation_token=first["confirmation_token"],
        )
        assert done["pruned_segments"] == [message]


async def test_a_secret_as_project_id_is_refused_over_stdio(make_workspace: Any) -> None:
    from mcp import MCPError

    root = make_workspace()
    secret = "AKIAQYLPMN5HHHFPZAM2"
    async with Client(server(root), mode="legacy") as client:
        kept = {"project_id": "ok", "segments": [{"text": "kept"}]}
        assert not (await client.call_tool("context_capture", kept)).is_error
        with pytest.raises(MCPError) as refused:
            await client.call_tool(
                "context_capture", {"project_id": secret, "segments": [{"text": "x"}]}
            )
    assert refused.value.error.code == 1004
    assert secret not in json.dumps([refused.value.error.message, refused.value.error.data])
    written = b"".join(p.read_bytes() for p in (root / ".cuedeck").rglob("*") if p.is_file())
    assert secret.encode() not in written
