"""Claims on a server with tokens: the claimant is the token's member, members see each
other's claims, and a claimed file answers another member's edit_file with the holder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import MCPError
from mcp.client import Client

from tests.mcp.conftest import add_token, bearer_session, http_server

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_members_claim_as_themselves_and_see_each_others_claims(demo: Path) -> None:
    alice, bob = add_token(demo, "alice", "write"), add_token(demo, "bob", "admin")
    (demo / "src").mkdir()
    (demo / "src" / "refunds.py").write_text("def refund():\n    pass\n")
    with http_server(demo, "--tools", "all") as (url, _port):

        async def alice_claims(client: Client) -> Any:
            reply = await client.call_tool(
                "claim_task", {"id": "w4n8t1", "paths": ["src/refunds.py"]}
            )
            with pytest.raises(MCPError) as named_other:
                await client.call_tool("claim_task", {"id": "k3x9q2", "agent": "bob"})
            return reply.structured_content, named_other.value.error

        claimed, named_other = await bearer_session(url, alice, alice_claims)
        assert claimed["agent"] == "alice" and claimed["paths"] == ["src/refunds.py"]
        assert named_other.code == 1004 and "alice" in named_other.message

        async def bob_tries(client: Client) -> Any:
            with pytest.raises(MCPError) as held:
                await client.call_tool("claim_task", {"id": "w4n8t1"})
            read = (
                await client.call_tool("get_file_content", {"file_path": "src/refunds.py"})
            ).structured_content
            edit = {
                "file_path": "src/refunds.py",
                "old_string": "pass",
                "new_string": "return 0",
                "content_hash": read["content_hash"],
            }
            with pytest.raises(MCPError) as claimed_file:
                await client.call_tool("edit_file", edit)
            listed = (await client.call_tool("list_tasks", {})).structured_content["result"]
            forced = await client.call_tool("edit_file", {**edit, "force": True})
            following = (await client.call_tool("next_task", {})).structured_content
            return held.value.error, claimed_file.value.error, listed, forced, following

        held, claimed_file, listed, forced, following = await bearer_session(url, bob, bob_tries)
    assert held.code == 1500 and held.data["holder"] == "alice"
    assert claimed_file.code == 1501 and "alice" in claimed_file.message
    assert claimed_file.data["holders"][0]["card"] == "w4n8t1"
    assert {card["id"]: (card["claim"] or {}).get("agent") for card in listed}["w4n8t1"] == "alice"
    assert not forced.is_error
    assert "return 0" in (demo / "src" / "refunds.py").read_text()
    assert following["agent"] == "bob" and following["id"] == "k3x9q2"
