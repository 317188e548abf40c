"""The file tools through a real `cue mcp` over stdio: read, edit, and what is masked."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import MCPError
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from tests.mcp.conftest import CUE, environment

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

KEY = "sk_live_4eC39HqLyjWDarjtT1zdp7dcTYooMQauvdEDq54NiTphI7jx"


async def test_read_edit_and_refusals_over_stdio(demo: Path) -> None:
    (demo / "src").mkdir()
    (demo / "src" / "settings.py").write_bytes(f"DEBUG = True\r\nKEY = '{KEY}'\r\n".encode())
    params = StdioServerParameters(
        command=CUE, args=["-C", str(demo), "mcp", "--tools", "all"], env=environment()
    )
    async with Client(params, mode="legacy") as client:
        read = await client.call_tool("get_file_content", {"file_path": "src/settings.py"})
        page = read.structured_content
        assert page is not None
        edited = await client.call_tool(
            "edit_file",
            {
                "file_path": "src/settings.py",
                "old_string": "DEBUG = True",
                "new_string": "DEBUG = False",
                "content_hash": page["content_hash"],
            },
        )
        with pytest.raises(MCPError) as stale:
            await client.call_tool(
                "edit_file",
                {
                    "file_path": "src/settings.py",
                    "old_string": "DEBUG = False",
                    "new_string": "DEBUG = True",
                    "content_hash": page["content_hash"],
                },
            )
        with pytest.raises(MCPError) as denied:
            await client.call_tool("get_file_content", {"file_path": "../../etc/passwd"})
    assert KEY not in page["content"] and "[REDACTED:" in page["content"]  # the reply is masked
    assert KEY in (demo / "src" / "settings.py").read_text()  # the file is not
    assert edited.structured_content is not None
    assert edited.structured_content["changes_made"] == 1
    assert (demo / "src" / "settings.py").read_bytes().startswith(b"DEBUG = False\r\n")
    assert stale.value.error.code == 1005
    assert "current_content_hash" in stale.value.error.data
    assert denied.value.error.code == 1004
