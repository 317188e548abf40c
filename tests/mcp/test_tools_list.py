"""The size of tools/list, which every agent pays on every connection: the reply a real
`cue mcp` writes to the official MCP client, byte for byte, in exact o200k tokens."""

from __future__ import annotations

import json
import shlex
from typing import TYPE_CHECKING

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from tests.conftest import needs_extras
from tests.mcp.conftest import CUE, environment

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = [pytest.mark.anyio, pytest.mark.slow, needs_extras]

#: The default profile's budget, in exact o200k tokens (issue 37: 3,631 before).
BUDGET = 3000


def o200k() -> object:
    from cuedeck.token_counts import O200kCounter

    counter = O200kCounter.load()
    if counter is None:
        why = O200kCounter.refused or "bpe-openai is not installed (uv sync --locked installs it)"
        pytest.fail(f"tools/list is measured in exact o200k tokens: {why}")
    return counter


@pytest.mark.parametrize("role", ["read", "write", "admin"])
async def test_the_default_profiles_tools_list_costs_under_3000_tokens(
    demo: Path, tmp_path: Path, role: str
) -> None:
    with (demo / ".cuedeck" / "config.toml").open("a", encoding="utf-8") as config:
        config.write(f'\n[mcp]\nlocal_role = "{role}"\n')
    wire = tmp_path / "stdout.jsonl"
    # What the server writes is copied on its way to the client: the reply as sent.
    served = f"{shlex.quote(CUE)} -C {shlex.quote(str(demo))} mcp | tee {shlex.quote(str(wire))}"
    # The example plugin (installed for the tests) is not CueDeck's: its tool is left out.
    env = environment(CUEDECK_DISABLE_PLUGINS="example")
    params = StdioServerParameters(command="sh", args=["-c", served], env=env)
    async with Client(params, mode="legacy") as client:
        listed = await client.list_tools()
    lines = [json.loads(line) for line in wire.read_text(encoding="utf-8").splitlines()]
    replies = [line for line in lines if "tools" in line.get("result", {})]
    assert len(replies) == 1
    names = {tool["name"] for tool in replies[0]["result"]["tools"]}
    assert names == {tool.name for tool in listed.tools} and "word_count" not in names
    assert {"build_scene", "read_doc", "read_context", "list_tasks"} <= names
    assert ("context_capture" in names) is (role != "read")  # a read role sees no writer
    raw = next(line for line in wire.read_text(encoding="utf-8").splitlines() if '"tools"' in line)
    tokens = o200k().count(raw)  # type: ignore[attr-defined]
    assert tokens < BUDGET, f"tools/list for the {role} role is {tokens} o200k tokens"
    # No output schema is paid for: replies carry their structured content anyway.
    assert all("outputSchema" not in tool for tool in replies[0]["result"]["tools"])
