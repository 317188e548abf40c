"""The specification's reply shapes behind one switch, and cidx_quick_reference."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import jsonschema
import pytest
from fastmcp import Client

from tests.conftest import needs
from tests.mcp.conftest import server_for

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.anyio

PROFILE = ["core", "files", "cidx_quick_reference"]


@needs("cuedeck_tasks")
async def test_spec_replies_have_success_content_blocks_and_typed_schemas(demo: Path) -> None:
    async with Client(server_for(demo, profile=PROFILE, replies="spec")) as client:
        listed = {t.name: t for t in await client.list_tools()}
        page = await client.call_tool("get_file_content", {"file_path": "docs/deployment.md"})
        tasks = await client.call_tool("list_tasks", {"status": "active"})
        missing = await client.call_tool(
            "read_doc", {"path": "docs/deploymnt.md"}, raise_on_error=False
        )
    reply = page.structured_content
    assert reply is not None and reply["success"] is True
    text = (demo / "docs" / "deployment.md").read_text(encoding="utf-8")
    assert reply["content"] == [{"type": "text", "text": text}]
    assert reply["metadata"]["path"] == "docs/deployment.md"
    assert tasks.structured_content is not None
    assert tasks.structured_content["success"] is True
    assert [card["id"] for card in tasks.structured_content["result"]] == ["k3x9q2"]
    # A failure is a reply, not a JSON-RPC error: success false, error, hint, code.
    assert missing.is_error is True
    failure = missing.structured_content
    assert failure is not None
    assert failure["success"] is False and failure["code"] == 1001
    assert failure["error"].startswith("File Not Found: ")
    assert failure["hint"] == "Did you mean 'docs/deployment.md'?"
    assert failure["data"]["path"] == "docs/deploymnt.md"
    assert json.loads(missing.content[0].text) == failure  # type: ignore[union-attr]
    # Output schemas carry types and required lists, and the replies validate against them.
    schema = listed["get_file_content"].output_schema
    assert schema is not None and schema["required"][0] == "success"
    assert schema["properties"]["content"]["type"] == "array"
    assert schema["properties"]["metadata"]["properties"]["total_lines"]["type"] == "integer"
    assert "total_lines" in schema["properties"]["metadata"]["required"]
    jsonschema.validate(reply, schema)
    jsonschema.validate(tasks.structured_content, listed["list_tasks"].output_schema)  # type: ignore[arg-type]
    for tool in listed.values():
        if tool.output_schema is not None:
            jsonschema.Draft202012Validator.check_schema(tool.output_schema)
            assert tool.output_schema["required"][0] == "success", tool.name


async def test_cuedeck_replies_are_the_default(demo: Path) -> None:
    async with Client(server_for(demo, profile=PROFILE)) as client:
        page = await client.call_tool("get_file_content", {"file_path": "docs/deployment.md"})
    assert page.structured_content is not None
    assert isinstance(page.structured_content["content"], str)


@needs("cuedeck_tasks")
async def test_the_quick_reference_lists_what_the_caller_may_call(demo: Path) -> None:
    async with Client(server_for(demo, profile=PROFILE)) as client:
        everything = await client.call_tool("cidx_quick_reference", {})
        files = await client.call_tool("cidx_quick_reference", {"category": "files"})
    reply: Any = everything.structured_content
    names = [tool["name"] for tool in reply["tools"]]
    assert reply["total_tools"] == len(names) and "read_doc" in names
    assert "delete_file" not in names  # destructive: the local client is write, not admin
    assert "may be left out" in reply["repository_alias"]
    by_name = {tool["name"]: tool for tool in reply["tools"]}
    assert by_name["update_task"] == {
        "name": "update_task",
        "category": "tasks",
        "summary": by_name["update_task"]["summary"],
        "permission": "repository:write",
        "writes": True,
    }
    assert by_name["read_doc"]["permission"] == "query_repos"
    listed: Any = files.structured_content
    assert {tool["category"] for tool in listed["tools"]} == {"files"}


async def test_a_bad_switch_is_1004(demo: Path) -> None:
    from cuedeck.errors import InvalidInput

    with pytest.raises(InvalidInput) as bad:
        server_for(demo, replies="cidx")
    assert bad.value.data["field"] == "replies"
