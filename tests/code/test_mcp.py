"""Code over MCP with the real client: `cue mcp` over stdio serves search_code in the core
profile, read_context answers with symbols, read_doc reads one by anchor, and the files
tools are there with the files category."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("cuedeck_mcp")

from mcp import MCPError
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from tests.mcp.conftest import CUE, environment

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def use(client: Client, tool: str, **arguments: Any) -> Any:
    result = await client.call_tool(tool, arguments)
    assert result.structured_content is not None, tool
    return result.structured_content


async def test_code_over_stdio(code_root: Path) -> None:
    params = StdioServerParameters(
        command=CUE, args=["-C", str(code_root), "mcp"], env=environment()
    )
    async with Client(params, mode="legacy") as client:
        listed = {tool.name for tool in (await client.list_tools()).tools}
        assert "search_code" in listed
        assert not listed & {"regex_search", "list_files", "browse_directory", "directory_tree"}
        found = await use(client, "search_code", query="send request retries", mode="keyword")
        assert found["results"][0]["symbol"] == "Client.send"
        context = await use(client, "read_context", query="HTTPTransport", mode="keyword")
        best = context["results"][0] if "results" in context else context
        text = str(best)
        assert "transport.py" in text and "HTTPTransport" in text
        page = await use(client, "read_doc", path="lib.rs", anchor="Cache.new")
        assert page["line_range"] == {"start": 27, "end": 29}
        assert page["content"].startswith("    pub fn new(capacity: usize) -> Self {")
        with pytest.raises(MCPError) as caught:
            await use(client, "read_doc", path="lib.rs", anchor="Cache.nwe")
        assert caught.value.error.code == 1001
    params = StdioServerParameters(
        command=CUE, args=["-C", str(code_root), "mcp", "--tools", "core,files"], env=environment()
    )
    async with Client(params, mode="legacy") as client:
        tree = await use(client, "directory_tree", depth=1)
        assert "store/ (1 files)" in tree["tree"]
        hits = await use(client, "regex_search", pattern=r"fn \w+\(&self")
        assert {m["path"] for m in hits["matches"]} == {"lib.rs"}
        with pytest.raises(MCPError) as caught:
            await use(client, "regex_search", pattern="(")
        assert caught.value.error.code == 1004


async def paths_within(client: Client, query: str, wanted: set[str], seconds: float) -> float:
    """Ask search_code for ``query`` until the files it finds are ``wanted``, at most
    ``seconds`` (the contract's deadline, not a sleep): how long that took."""
    started = time.monotonic()
    while True:
        reply = await use(client, "search_code", query=query, mode="keyword")
        took = time.monotonic() - started
        found = {hit["path"] for hit in reply["results"]}
        assert found == wanted or took < seconds, (found, took)
        if found == wanted:
            return took


async def test_an_outside_edit_to_source_is_searched_within_a_second(code_root: Path) -> None:
    """An editor appends a function, renames the file, then deletes it while the server
    runs: search_code sees each change within a second (the server follows every file a
    parser reads, not only markdown)."""
    params = StdioServerParameters(
        command=CUE, args=["-C", str(code_root), "mcp"], env=environment()
    )
    async with Client(params, mode="legacy") as client:
        await paths_within(client, "quokka_payload", set(), 0)
        before = await client.call_tool("search_code", {"query": "quokka_payload"})
        with (code_root / "client.py").open("a", encoding="utf-8") as source:
            source.write("\n\ndef quokka_payload(size: int) -> bytes:\n    return b'q' * size\n")
        await paths_within(client, "quokka_payload", {"client.py"}, 1.0)
        after = await client.call_tool("search_code", {"query": "quokka_payload"})
        # What each reply reflects: the index changed between them; the watcher saw it all.
        old, new = (r.structured_content["reflects"] for r in (before, after))  # type: ignore[index]
        assert old["tree"] != new["tree"] and old["head"] is None  # not a git repository
        assert (new["watch"], new["pending"]) == ("watcher", [])
        [text] = (block.text for block in after.content)  # type: ignore[union-attr]
        # For a model, said once, as the reply's last line.
        line = f"reflects index {new['tree']} (no git HEAD); watched, nothing pending"
        assert text.endswith("\n" + line) and "tree:" not in text
        (code_root / "client.py").rename(code_root / "agent.py")
        await paths_within(client, "quokka_payload", {"agent.py"}, 1.0)
        (code_root / "agent.py").unlink()
        await paths_within(client, "quokka_payload", set(), 1.0)


async def test_an_outside_edit_to_source_is_searched_within_a_second_over_http(
    code_root: Path,
) -> None:
    from tests.mcp.conftest import bearer_session, http_server

    async def work(client: Client) -> None:
        await paths_within(client, "wombat_checksum", set(), 0)
        with (code_root / "transport.py").open("a", encoding="utf-8") as source:
            source.write("\n\ndef wombat_checksum(data: bytes) -> int:\n    return len(data)\n")
        await paths_within(client, "wombat_checksum", {"transport.py"}, 1.0)

    with http_server(code_root) as (url, _):
        await bearer_session(url, None, work)


async def test_find_symbol_over_stdio(code_root: Path) -> None:
    params = StdioServerParameters(
        command=CUE, args=["-C", str(code_root), "mcp"], env=environment()
    )
    async with Client(params, mode="legacy") as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert "find_symbol" in listed  # the core profile serves it
        schema = listed["find_symbol"].input_schema["properties"]
        assert {"name", "match", "kind", "path", "language", "limit", "offset"} <= set(schema)
        found = await use(client, "find_symbol", name="store.Store.Len")
        assert [(h["path"], h["symbol"], h["line"]) for h in found["results"]] == [
            ("store/store.go", "Store.Len", 5)
        ]
        fuzzy = await use(client, "find_symbol", name="pURL", match="fuzzy", language="typescript")
        assert fuzzy["results"][0]["symbol"] == "parseURL"
        name = (await use(client, "whoami"))["workspace"]
        aliased = await use(client, "find_symbol", name="Cache::new", repository_alias=name)
        assert aliased["results"][0]["path"] == "lib.rs"
        with pytest.raises(MCPError) as caught:
            await use(client, "find_symbol", name="Cache.new", repository_alias="elsewhere")
        assert caught.value.error.code == 1400
        with pytest.raises(MCPError) as caught:
            await use(client, "find_symbol", name="not a name")
        assert caught.value.error.code == 1004
