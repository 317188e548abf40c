"""repository_alias on a server of one workspace: accepted, not published."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from fastmcp import Client
from mcp import MCPError

from tests.conftest import needs
from tests.mcp.conftest import server_for

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.anyio


@needs("cuedeck_tasks")
async def test_one_workspace_takes_its_own_name_and_nothing_else(demo: Path) -> None:
    async with Client(server_for(demo, name="demo")) as client:
        listed = {t.name: t for t in await client.list_tools()}
        plain = await client.call_tool("read_doc", {"path": "docs/auth.md"})
        named = await client.call_tool(
            "read_doc", {"path": "docs/auth.md", "repository_alias": "demo"}
        )
        with pytest.raises(MCPError) as other:
            await client.call_tool("read_doc", {"path": "docs/auth.md", "repository_alias": "x"})
        with pytest.raises(MCPError) as not_text:
            await client.call_tool("list_tasks", {"repository_alias": 3})
    assert all(
        "repository_alias" not in t.input_schema.get("properties", {}) for t in listed.values()
    )
    assert named.structured_content == plain.structured_content
    assert other.value.error.code == 1400
    assert other.value.error.data["candidates"] == ["demo"]
    assert not_text.value.error.code == 1004
    assert not_text.value.error.data["field"] == "repository_alias"
