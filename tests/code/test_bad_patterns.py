"""A `.gitignore` a client writes with lines git skips breaks nothing, over stdio, and a bad
glob argument is invalid input (issue 35, finding 6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.mcp.conftest import CUE, environment

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

CARD = "---\ntitle: Send\nstatus: active\n---\n# Send\n\nSee @code/client.py#Client.send.\n"


async def test_a_client_written_gitignore_breaks_no_tool(code_root: Path) -> None:
    from mcp import MCPError
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters

    (code_root / ".cuedeck" / "cards" / "snd001.md").write_text(CARD, encoding="utf-8")
    params = StdioServerParameters(
        command=CUE, args=["-C", str(code_root), "mcp", "--tools", "all"], env=environment()
    )
    async with Client(params, mode="legacy") as client:
        written = await client.call_tool(
            "create_file", {"file_path": ".gitignore", "content": "[z-a]\n!\n\\\n*.log\n"}
        )
        assert not written.is_error
        for tool, arguments in [
            ("list_files", {}),
            ("browse_directory", {"path": "."}),
            ("directory_tree", {}),
            ("regex_search", {"pattern": "def send"}),
            ("search_code", {"query": "send", "mode": "keyword"}),
            ("read_context", {"query": "send request", "mode": "keyword"}),
            ("read_doc", {"path": "client.py", "anchor": "Client.send"}),
            ("build_scene", {}),
        ]:
            result = await client.call_tool(tool, arguments)
            assert not result.is_error, (tool, result.content)
        for tool, arguments in [
            ("list_files", {"globs": ["[z-a]"]}),
            ("list_files", {"globs": ["!"]}),
            ("regex_search", {"pattern": "x", "globs": ["\\"]}),
            ("search_code", {"query": "send", "path": "[z-a]"}),
        ]:
            with pytest.raises(MCPError) as refused:
                await client.call_tool(tool, arguments)
            assert refused.value.error.code == 1004, tool
            assert "not a valid pattern" in refused.value.error.message, tool
