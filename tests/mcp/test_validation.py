"""Arguments over MCP are validated once, refusals keep their code and message."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from fastmcp import Client
from mcp import MCPError

from cuedeck import hookimpl
from cuedeck.plugins.host import make_plugin_host
from cuedeck.settings import RateLimit
from cuedeck.workspace import open_workspace
from tests.core.test_tools import SEEN, counted_echo

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.anyio


class Counted:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(counted_echo, category="core", read_only=True, rate_limit=RateLimit(60, 2))


async def test_a_rate_limited_call_is_validated_once(demo: Path) -> None:
    """The server validates before it spends the rate limit, and the call takes that
    validation; a bad argument is refused with 1004 and spends nothing."""
    from cuedeck_mcp.server import build_server

    host = make_plugin_host()
    host.register(Counted(), name="counted")
    server = build_server(open_workspace(demo, plugins=host), profile=["core"])
    SEEN.clear()
    async with Client(server) as client:
        for _ in range(3):
            with pytest.raises(MCPError) as refused:
                await client.call_tool("counted_echo", {"text": 7})
            assert refused.value.error.code == 1004
            assert "counted_echo: invalid 'text'" in refused.value.error.message
        first = await client.call_tool("counted_echo", {"text": "hello"})
        assert SEEN == ["hello"]  # validated once, for the limit and the call alike
        second = await client.call_tool("counted_echo", {"text": "again"})
        with pytest.raises(MCPError) as limited:
            await client.call_tool("counted_echo", {"text": "more"})
    assert [first.content[0].text, second.content[0].text] == ["hello", "again"]  # type: ignore[union-attr]
    assert limited.value.error.code == 429
    assert SEEN == ["hello", "again", "more"]
