"""The MCP server through FastMCP's in-memory client: tools, errors, limits, masking, resources."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import TYPE_CHECKING, Any

import mcp_types
import pytest
from fastmcp import Client
from fastmcp.client.messages import MessageHandler
from mcp import MCPError

from cuedeck import hookimpl
from cuedeck.errors import (
    Conflict,
    CycleDetected,
    InvalidInput,
    TokenLimitExceeded,
)
from cuedeck.plugins.host import make_plugin_host
from cuedeck.serving.reply import reply_text
from cuedeck.workspace import open_workspace
from cuedeck.writes import locked
from cuedeck_mcp.server import TEAM_ONLY, build_server
from tests.conftest import needs

from .conftest import server_for

if TYPE_CHECKING:
    from pathlib import Path

    from tests.conftest import MakeWorkspace

pytestmark = pytest.mark.anyio

SECRET = "sk_live_4eC39HqLyjWDarjtT1zdp7dcTYooMQauvdEDq54NiTphI7jx"  # planted in the demo


async def _error(client: Client, tool: str, args: dict[str, Any]) -> Any:
    with pytest.raises(MCPError) as caught:
        await client.call_tool(tool, args)
    return caught.value.error


# -- tools/list --------------------------------------------------------------------------


def _generated_titles(schema: Any) -> list[str]:
    """``title`` keywords in a schema (a property named "title" is not one)."""
    found = []
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "title" and isinstance(value, str):
                found.append(value)
            elif key == "properties" and isinstance(value, dict):
                for sub in value.values():
                    found += _generated_titles(sub)
            else:
                found += _generated_titles(value)
    elif isinstance(schema, list):
        for sub in schema:
            found += _generated_titles(sub)
    return found


def _as_admin(demo: Path) -> None:
    """Serve the local user as admin: destructive tools are listed only for that role."""
    with (demo / ".cuedeck" / "config.toml").open("a", encoding="utf-8") as config:
        config.write('\n[mcp]\nlocal_role = "admin"\n')


@needs("cuedeck_example_plugin")
async def test_every_registered_tool_is_served_with_its_metadata(demo: Path) -> None:
    _as_admin(demo)
    tools = (open_workspace(demo).plugins).tools()
    async with Client(server_for(demo, profile=["all"])) as client:
        listed = {tool.name: tool for tool in await client.list_tools()}
    # Every tool, but the team's own: only a team server serves those (docs/teams.md).
    assert set(listed) == {n for n, t in tools.items() if t.category not in TEAM_ONLY}
    assert {"read_doc", "get_tool_categories", "first_time_user_guide", "word_count"} <= set(listed)
    for name, served in listed.items():
        tool = tools[name]
        assert served.description is not None
        assert served.description.splitlines()[0] == tool.summary
        read_only, destructive, idempotent = _hints(served.annotations)
        assert read_only is tool.read_only, name
        assert destructive is tool.destructive, name
        assert idempotent is (tool.idempotent or tool.read_only), name
        if not tool.read_only:  # said explicitly either way, never left to the default
            assert served.annotations is not None
            assert served.annotations.destructive_hint is tool.destructive, name
        assert not _generated_titles(served.input_schema), name
    read_doc = listed["read_doc"]
    assert read_doc.input_schema["required"] == ["file_path"]
    assert read_doc.output_schema is None  # replies carry structured content all the same


def _hints(annotations: mcp_types.ToolAnnotations | None) -> tuple[bool, bool, bool]:
    """``(read_only, destructive, idempotent)`` as the MCP spec reads ``annotations``: a
    hint left out has its default (read-only false, destructive true, idempotent false),
    and a read-only tool neither destroys nor changes anything when called again."""
    read_only = bool(annotations and annotations.read_only_hint)
    if read_only:
        return True, False, True
    destructive = annotations is None or annotations.destructive_hint is not False
    return False, destructive, bool(annotations and annotations.idempotent_hint)


def _o200k_tokens(tools: list[mcp_types.Tool]) -> int:
    """Exact o200k tokens of ``tools`` as tools/list sends them (``{"tools": [...]}``, no
    spaces), the example plugin's left out (the budgets are CueDeck's own). bpe-openai
    is a dev dependency: no estimate."""
    from cuedeck.token_counts import O200kCounter

    counter = O200kCounter.load()
    if counter is None:
        why = O200kCounter.refused or "bpe-openai is not installed (uv sync --locked installs it)"
        pytest.fail(f"the tools/list budgets are in exact o200k tokens: {why}")
    dumped = [
        t.model_dump(by_alias=True, exclude_none=True, mode="json")
        for t in tools
        if t.name != "word_count"
    ]
    return counter.count(json.dumps({"tools": dumped}, ensure_ascii=False, separators=(",", ":")))


#: The memory tools the default profile serves (the other twelve are opt-in).
MEMORY_ESSENTIALS = {"context_capture", "context_restore", "context_analyze_usage"}


@needs(
    "cuedeck_tasks",
    "cuedeck_memory",
    "cuedeck_search",
    "cuedeck_code",
    "cuedeck_git",
    "cuedeck_example_plugin",
)
async def test_tools_list_fits_its_token_budget(demo: Path) -> None:
    async with Client(server_for(demo)) as client:
        listed = await client.list_tools()
    names = {t.name for t in listed} - {"word_count"}
    assert names >= MEMORY_ESSENTIALS  # the core: scene, search, docs, tasks, memory
    assert {"build_scene", "read_context", "read_doc", "list_tasks", "update_task"} <= names
    assert "context_gc_prune" not in names and "edit_file" not in names
    assert len(names) == 18  # search_code, find_symbol and repo_map (cuedeck-code) among them
    # Every conversation pays for tools/list: the default profile stays under 3,000
    # exact o200k tokens (tests/mcp/test_tools_list.py counts the bytes a real server
    # writes; benchmarks/mcp_teams.py reports the figure per profile and role).
    tokens = _o200k_tokens(listed)
    assert tokens < 3000, f"{tokens} o200k tokens for the default profile's tools"


async def test_tool_profiles_choose_what_is_served(demo: Path) -> None:
    _as_admin(demo)
    workspace = open_workspace(demo)
    async with Client(server_for(demo, profile=["all"])) as client:
        everything = {t.name: t for t in await client.list_tools()}
    async with Client(server_for(demo, profile=["core", "get_file_content"])) as client:
        some = {t.name for t in await client.list_tools()}
    files = {"get_file_content", "create_file", "edit_file", "delete_file"}
    assert files <= set(everything)
    assert everything["delete_file"].annotations.destructive_hint is True  # type: ignore[union-attr]
    assert some & files == {"get_file_content"} and "read_doc" in some
    # Every tool of every package (memory, files and git included), as admin sees them.
    tools = workspace.plugins.tools()
    assert len(everything) == len([t for t in tools.values() if t.category not in TEAM_ONLY])
    tokens = _o200k_tokens(list(everything.values()))
    # 9,515 while output schemas listed every reply's fields (about 2,400 tokens); 7,500
    # before the ten opt-in code-intelligence tools (scip, about 1,420 tokens), the four
    # claim tools (category claims, opt-in: about 600 tokens) and force on the seven tools
    # that write paths.
    assert tokens < 9600, f"{tokens} o200k tokens for all tools"
    with pytest.raises(InvalidInput) as unknown:
        server_for(demo, profile=["core", "no_such_tool"])
    assert unknown.value.data["field"] == "mcp.tools"


@pytest.mark.slow
async def test_published_schemas_take_every_documented_call(demo: Path) -> None:
    """What tools/list leaves out never makes a documented call invalid: every reference
    example and every call the guide suggests validates against the published schema."""
    import jsonschema

    from cuedeck.serving.tool_docs import reference_of

    _as_admin(demo)
    tools = (open_workspace(demo).plugins).tools()
    async with Client(server_for(demo, profile=["all"])) as client:
        listed = {t.name: t for t in await client.list_tools()}
        guide = (await client.call_tool("first_time_user_guide", {})).structured_content
    async with Client(server_for(demo, profile=["all"], team=True)) as client:
        # The team's own tools, as a team server publishes them (docs/teams.md).
        team = {t.name: t for t in await client.list_tools() if t.name not in listed}
    listed.update(team)
    assert guide is not None
    calls = [(step["tool"], step["example_call"]) for step in guide["steps"]]
    for name, tool in tools.items():
        example = reference_of(tool).example
        assert example is not None, name
        calls.append((name, example.arguments))
    for name, arguments in calls:
        jsonschema.validate(arguments, listed[name].input_schema)
    assert ("list_tasks", {"status": "active"}) in calls  # one value, and a list, both taken
    assert ("list_tasks", {"status": ["active", "todo"]}) in calls
    # Guard caps and the null of optional inputs are not published; real limits are.
    capture = listed["context_capture"].input_schema["properties"]
    assert "maxItems" not in capture["segments"]
    assert capture["segments"]["items"]["properties"]["line_range"]["maxItems"] == 2
    assert capture["task_id"]["type"] == "string"
    async with Client(server_for(demo)) as client:  # the server still enforces every cap
        too_long = await _error(client, "read_context", {"query": "x" * 201})
    assert "maxLength" not in listed["read_context"].input_schema["properties"]["query"]
    assert too_long.code == 1004 and too_long.data["field"] == "query"
    assert "at most 200 characters" in too_long.message
    assert "semantic" not in listed["read_context"].input_schema["properties"]  # deprecated
    # Text that only restates a name, or repeats a sibling's, is not paid for twice.
    assert "description" not in capture["project_id"]  # "Project identifier"
    dates = listed["list_tasks"].input_schema["properties"]
    assert "'<2w' (newer)" in dates["created"]["description"]
    assert dates["updated"]["description"] == "As for created"
    # Hints the MCP defaults already give are not sent; destructive is always said.
    assert listed["read_doc"].annotations == mcp_types.ToolAnnotations(read_only_hint=True)
    assert listed["git_reset"].annotations == mcp_types.ToolAnnotations(destructive_hint=True)
    assert listed["create_task"].annotations == mcp_types.ToolAnnotations(destructive_hint=False)


@needs("cuedeck_tasks", "cuedeck_memory")
async def test_replies_are_text_and_structured_content_without_output_schemas(
    demo: Path,
) -> None:
    async with Client(server_for(demo)) as client:
        listed = {t.name: t for t in await client.list_tools()}
        tasks = await client.call_tool("list_tasks", {"status": "active"})
        usage = await client.call_tool("context_analyze_usage", {"project_id": "demo"})
    # No output schema is paid for in tools/list: every reply carries its structured
    # content anyway, and get_tool_docs has the typed reference.
    assert all(tool.output_schema is None for tool in listed.values())
    # A list reply is wrapped as {"result": [...]}; the reply's meta says so, and FastMCP's
    # client unwraps it.
    assert tasks.structured_content is not None
    assert tasks.content[0].text == reply_text(tasks.structured_content["result"])  # type: ignore[union-attr]
    assert [card["id"] for card in tasks.structured_content["result"]] == ["k3x9q2"]
    assert isinstance(tasks.data, list) and len(tasks.data) == 1  # unwrapped
    assert tasks.content[0].text.splitlines()[0].startswith("id | title | status")  # type: ignore[union-attr]
    assert usage.structured_content is not None
    assert usage.structured_content["project_id"] == "demo"
    assert usage.content[0].text == reply_text(usage.structured_content)  # type: ignore[union-attr]


# -- read_doc and the example plugin -------------------------------------------------------


async def test_read_doc_structured_content_and_text(demo: Path) -> None:
    async with Client(server_for(demo)) as client:
        result = await client.call_tool("read_doc", {"path": "docs/auth.md", "anchor": "sessions"})
    page = result.structured_content
    heading = open_workspace(demo).document(".cuedeck/docs/auth.md").find_heading("Sessions")
    assert heading is not None
    assert page is not None
    assert page["path"] == ".cuedeck/docs/auth.md"
    assert page["content"].startswith("## Sessions\n")
    assert page["line_range"] == {"start": heading.line, "end": heading.end_line}
    # The model reads the page's text as it is, with the other fields as lines.
    text = result.content[0].text  # type: ignore[union-attr]
    assert text == reply_text(page)
    assert page["content"].rstrip("\n") in text and f"hash: {page['hash']}" in text


async def test_pages_over_mcp_rebuild_a_crlf_file_and_cut_a_long_line(
    make_workspace: MakeWorkspace,
) -> None:
    long_line = "word " * 3000 + "\r\n"
    data = ("# Title\r\n\r\n" + long_line + "tail line\r\n" * 50).encode()
    root = make_workspace({"doc.md": data})
    count = open_workspace(root).count_tokens
    parts = []
    offset = 0
    async with Client(server_for(root)) as client:
        while True:
            args = {"path": "doc.md", "offset": offset, "max_tokens": 250}
            result = await client.call_tool("read_doc", args)
            page = result.structured_content
            assert page is not None
            # Each reply fits, whichever form a client hands its model.
            assert count(result.content[0].text) <= 250  # type: ignore[union-attr]
            assert count(json.dumps(page, ensure_ascii=False, separators=(",", ":"))) <= 250
            parts.append(page["content"])
            if not page["has_more"]:
                break
            assert page["next_offset"] > offset
            offset = page["next_offset"]
    cut = next(part for part in parts if part.startswith("word "))
    assert long_line.startswith(cut) and len(cut) < len(long_line)  # the start of the line
    assert "".join(parts).encode() == data.replace(long_line.encode(), cut.encode())
    assert len(parts) > 3


@needs("cuedeck_example_plugin")
async def test_example_plugin_tool_is_served(demo: Path) -> None:
    async with Client(server_for(demo)) as client:
        result = await client.call_tool("word_count", {"path": "docs/deployment.md"})
    assert result.structured_content == {"path": "docs/deployment.md", "words": 57, "headings": 3}


@pytest.mark.slow
async def test_guide_tools_over_mcp(demo: Path) -> None:
    async with Client(server_for(demo)) as client:
        categories = (await client.call_tool("get_tool_categories", {})).structured_content
        guide = (await client.call_tool("first_time_user_guide", {})).structured_content
    assert categories is not None
    assert guide is not None
    names = {t["name"] for c in categories["categories"] for t in c["tools"]}
    assert {"read_doc", "word_count", "first_time_user_guide"} <= names
    assert guide["active_card"] == "k3x9q2"
    assert guide["steps"][0]["tool"] == "get_tool_categories"
    # The default profile serves no file tools, so the tools about tools do not list them.
    assert "edit_file" not in names
    assert not any(line.startswith("edit_file") for line in guide["other_tools"])
    async with Client(server_for(demo, profile=["all"])) as client:
        everything = (await client.call_tool("get_tool_categories", {})).structured_content
    assert everything is not None
    assert "edit_file" in {t["name"] for c in everything["categories"] for t in c["tools"]}


# -- errors ------------------------------------------------------------------------------


async def test_missing_file_is_1001_with_suggestion(demo: Path) -> None:
    async with Client(server_for(demo)) as client:
        error = await _error(client, "read_doc", {"path": "docs/auht.md"})
    assert error.code == 1001
    assert error.message.startswith("File Not Found: ")
    assert error.data["suggestion"] == "Did you mean '.cuedeck/docs/auth.md'?"


@pytest.mark.parametrize(
    "path",
    [
        "../../etc/passwd.md",
        "/etc/passwd.md",
        ".git/config.md",
        "docs/../../x.md",
        "a\\..\\..\\x.md",
    ],
)
async def test_path_traversal_is_1004_naming_path(demo: Path, path: str) -> None:
    async with Client(server_for(demo)) as client:
        error = await _error(client, "read_doc", {"path": path})
    assert error.code == (1013 if ".git" in path else 1004)  # 1013: a protected path
    assert error.data["field"] == "path"


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"path": "docs/auth.md", "surprise": 1}, "surprise"),
        ({"path": "docs/auth.md", "offset": -1}, "offset"),
        ({"path": "docs/auth.md", "max_tokens": "many"}, "max_tokens"),
        ({}, "file_path"),  # the name the schema gives it
    ],
)
async def test_invalid_arguments_are_1004_naming_the_field(
    demo: Path, args: dict[str, Any], field: str
) -> None:
    async with Client(server_for(demo)) as client:
        error = await _error(client, "read_doc", args)
    assert (error.code, error.data["field"]) == (1004, field)


def raise_error(workspace: Any, kind: str) -> str:
    """Fail the way ``kind`` says (a test tool raising CueDeck's real errors)."""
    root = workspace.root
    if kind == "cycle":
        raise CycleDetected(["a.md", "b.md", "a.md"])
    if kind == "budget":
        raise TokenLimitExceeded(
            "scene too large", current_size=35000, limit=32000, action="Pruned 'Low' nodes."
        )
    if kind == "conflict":
        raise Conflict("card changed", path="x.md", current_hash="abc", expected_hash="def")
    if kind == "lock":
        with locked(root / ".cuedeck" / "held.lock", timeout=0.2):
            return "not reached"
    if kind == "bug":
        return str(1 / 0)
    if kind == "leak":
        raise ValueError(f"could not parse {SECRET}")
    return f"secret {SECRET}"


class FailingPlugin:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(raise_error, category="test", read_only=True)


def _failing_server(root: Path) -> Any:
    pm = make_plugin_host()
    pm.register(FailingPlugin(), name="failing")
    return build_server(open_workspace(root, plugins=pm))


async def test_every_error_code_reaches_the_client_with_its_data(demo: Path) -> None:
    held = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with locked(demo / ".cuedeck" / "held.lock"):
            held.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(10)
    try:
        async with Client(_failing_server(demo)) as client:
            cycle = await _error(client, "raise_error", {"kind": "cycle"})
            budget = await _error(client, "raise_error", {"kind": "budget"})
            conflict = await _error(client, "raise_error", {"kind": "conflict"})
            lock = await _error(client, "raise_error", {"kind": "lock"})
            bug = await _error(client, "raise_error", {"kind": "bug"})
    finally:
        release.set()
        holder.join()
    assert (cycle.code, cycle.data["cycle_path"]) == (1002, ["a.md", "b.md", "a.md"])
    assert budget.code == 1003
    assert {k: budget.data[k] for k in ("current_size", "limit", "action")} == {
        "current_size": 35000,
        "limit": 32000,
        "action": "Pruned 'Low' nodes.",
    }
    assert (conflict.code, conflict.data["current_hash"]) == (1005, "abc")
    assert lock.code == 1007
    assert isinstance(lock.data["holder_pid"], int)
    assert bug.code == 1000
    assert "ZeroDivisionError" in bug.message


class HalfBrokenPlugin:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register("tests.mcp.test_server:raise_error", name="lazy_error", category="test")
        register("tests.mcp.no_such_module:broken", category="test", read_only=True)


@needs("cuedeck_example_plugin")
async def test_a_tool_that_does_not_load_is_left_out_and_the_rest_served(demo: Path) -> None:
    pm = make_plugin_host()
    pm.register(HalfBrokenPlugin(), name="half-broken")
    server = build_server(open_workspace(demo, plugins=pm), profile=["all"])
    async with Client(server) as client:
        listed = {tool.name for tool in await client.list_tools()}
        conflict = await _error(client, "lazy_error", {"kind": "conflict"})
        read = await client.call_tool("read_doc", {"path": "docs/auth.md"})
    assert "broken" not in listed
    assert {"lazy_error", "read_doc", "build_scene", "word_count"} <= listed
    assert conflict.code == 1005
    assert not read.is_error
    (failure,) = pm.failures
    assert failure.name == "half-broken"
    assert "ToolLoadFailed: tool 'broken' from 'half-broken'" in failure.error
    assert "'tests.mcp.no_such_module:broken'" in failure.error


# -- rate limits -------------------------------------------------------------------------


@needs("cuedeck_example_plugin")
async def test_rate_limit_is_429_per_tool_and_per_client(demo: Path) -> None:
    config = demo / ".cuedeck" / "config.toml"
    config.write_text(config.read_text() + "\n[rate_limits.read_doc]\nper_minute = 2\nburst = 3\n")
    server = server_for(demo)
    async with Client(server, mode="legacy") as client:
        for _ in range(3):
            await client.call_tool("read_doc", {"path": "docs/auth.md"})
        error = await _error(client, "read_doc", {"path": "docs/auth.md"})
        assert error.code == 429
        assert error.data["limit"] == 2
        assert error.data["window_seconds"] == 60
        assert error.data["current_count"] == 3
        assert 1 <= error.data["retry_after_seconds"] <= 30
        # other tools have their own buckets
        await client.call_tool("word_count", {"path": "docs/deployment.md"})
    # Reconnecting does not refill the bucket: it belongs to the client, not the session.
    async with Client(server, mode="legacy") as other_session:
        again = await _error(other_session, "read_doc", {"path": "docs/auth.md"})
    assert again.code == 429


async def test_a_call_that_cannot_run_spends_no_rate_limit_token(demo: Path) -> None:
    config = demo / ".cuedeck" / "config.toml"
    config.write_text(config.read_text() + "\n[rate_limits.read_doc]\nper_minute = 1\nburst = 2\n")
    async with Client(server_for(demo), mode="legacy") as client:
        for _ in range(5):
            invalid = await _error(client, "read_doc", {"path": 7})
            assert invalid.code == 1004
        for _ in range(2):
            await client.call_tool("read_doc", {"path": "docs/auth.md"})
        assert (await _error(client, "read_doc", {"path": "docs/auth.md"})).code == 429


# -- masking ------------------------------------------------------------------------------


async def test_a_planted_secret_never_leaves_the_server(demo: Path) -> None:
    async with Client(_failing_server(demo)) as client:
        page = await client.call_tool("read_doc", {"path": "docs/runbook.md"})
        plain = await client.call_tool("raise_error", {"kind": "echo"})
        resource = await client.read_resource("cuedeck://docs/docs/runbook.md")
    assert page.structured_content is not None
    assert "STRIPE_SECRET_KEY=" in page.structured_content["content"]
    for text in (
        json.dumps(page.structured_content),
        page.content[0].text,  # type: ignore[union-attr]
        json.dumps(plain.structured_content),
        resource[0].text,  # type: ignore[union-attr]
    ):
        assert SECRET not in text
        assert "[REDACTED:" in text


async def test_an_internal_error_is_masked_and_its_traceback_logged_masked(
    demo: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level("ERROR", logger="cuedeck"):
        async with Client(_failing_server(demo)) as client:
            error = await _error(client, "raise_error", {"kind": "leak"})
    assert error.code == 1000
    assert "ValueError" in error.message
    assert SECRET not in error.message
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert "Traceback (most recent call last)" in logged
    assert "raise_error" in logged  # the frame that failed
    assert "ValueError: could not parse [REDACTED:" in logged
    assert SECRET not in logged


async def test_an_error_echoing_normalised_input_is_masked(demo: Path) -> None:
    password = "Hunter2Hunter2xyzzy"
    # normpath folds the URL's // into /, which the database-url rule no longer matches.
    url = f"postgres://ledger:{password}@db.internal:5432/ledger.md"
    async with Client(server_for(demo)) as client:
        missing = await _error(client, "read_doc", {"path": url})
        resource = await _resource_error(client, f"cuedeck://docs/{url}")
    for error in (missing, resource):
        assert error.code in (1001, 1004)
        assert password not in json.dumps([error.message, error.data])
        assert "[REDACTED:" in error.message


async def _resource_error(client: Client[Any], uri: str) -> Any:
    with pytest.raises(MCPError) as caught:
        await client.read_resource(uri)
    return caught.value.error


async def test_resource_list_masks_card_titles(demo: Path) -> None:
    card = demo / ".cuedeck" / "cards" / "s3cr3t.md"
    card.write_text(f"---\ntitle: rotate {SECRET}\nstatus: todo\n---\nBody.\n")
    async with Client(server_for(demo)) as client:
        listed = await client.list_resources()
    described = [r for r in listed if str(r.uri).endswith("s3cr3t")]
    assert described
    assert SECRET not in json.dumps([r.model_dump(mode="json") for r in listed])
    assert "[REDACTED:" in (described[0].description or "")


# -- resources ----------------------------------------------------------------------------


async def test_resources_cards_docs_and_errors(demo: Path) -> None:
    async with Client(server_for(demo)) as client:
        uris = {str(r.uri) for r in await client.list_resources()}
        templates = {t.uri_template for t in await client.list_resource_templates()}
        card = await client.read_resource("cuedeck://cards/k3x9q2")
        doc = await client.read_resource("cuedeck://docs/.cuedeck/docs/auth.md")
        with pytest.raises(MCPError) as missing:
            await client.read_resource("cuedeck://cards/k3x9q3")
    assert {"cuedeck://cards/k3x9q2", "cuedeck://cards/m7p2r5", "cuedeck://cards/w4n8t1"} <= uris
    assert {"cuedeck://cards/{id}", "cuedeck://docs/{path*}"} <= templates
    assert card[0].text.startswith("---\nid: k3x9q2\n")  # type: ignore[union-attr]
    assert doc[0].text.startswith("---\ntitle: Authentication")  # type: ignore[union-attr]
    assert missing.value.error.code == 1001
    assert missing.value.error.data["suggestion"] == "Did you mean 'k3x9q2'?"


class Recorder(MessageHandler):
    def __init__(self) -> None:
        self.changes = 0
        self.changed = asyncio.Event()

    async def on_resource_list_changed(
        self, message: mcp_types.ResourceListChangedNotification
    ) -> None:
        self.changes += 1
        self.changed.set()


async def test_a_new_card_announces_resources_list_changed(demo: Path) -> None:
    recorder = Recorder()
    server = server_for(demo)
    async with Client(server, message_handler=recorder, mode="legacy") as client:
        await client.call_tool("read_doc", {"path": "docs/auth.md"})
        assert recorder.changes == 0
        (demo / ".cuedeck" / "cards" / "zz9zz9.md").write_text(
            "---\nid: zz9zz9\ntitle: New\nstatus: todo\n---\n# New\n"
        )
        await _reported(server, ".cuedeck/cards/zz9zz9.md")
        await client.call_tool("read_doc", {"path": "docs/auth.md"})
        await asyncio.wait_for(recorder.changed.wait(), 10)  # it travels beside the reply
        uris = {str(r.uri) for r in await client.list_resources()}
    assert recorder.changes == 1
    assert "cuedeck://cards/zz9zz9" in uris


# -- freshness and concurrency -------------------------------------------------------------


async def _reported(server: Any, path: str) -> None:
    """Wait until the server's file watcher has seen ``path`` change."""
    freshness = server.cuedeck_runtime.freshness
    assert await asyncio.to_thread(freshness.wait_for, path)


@needs("cuedeck_example_plugin")
async def test_edits_between_calls_are_seen(demo: Path) -> None:
    doc = demo / ".cuedeck" / "docs" / "auth.md"
    server = server_for(demo)
    async with Client(server) as client:
        before = (await client.call_tool("read_doc", {"path": "docs/auth.md"})).structured_content
        doc.write_text(doc.read_text() + "\n## Lockout\n\nTen minutes.\n")
        await _reported(server, ".cuedeck/docs/auth.md")
        after = await client.call_tool("read_doc", {"path": "docs/auth.md", "anchor": "lockout"})
        counted = await client.call_tool("word_count", {"path": ".cuedeck/docs/auth.md"})
    assert before is not None
    assert after.structured_content is not None
    assert after.structured_content["content"] == "## Lockout\n\nTen minutes.\n"
    assert after.structured_content["hash"] != before["hash"]
    assert counted.structured_content is not None
    assert counted.structured_content["headings"] == 4


@needs("cuedeck_example_plugin")
async def test_concurrent_calls_are_served_consistently(demo: Path) -> None:
    async with Client(server_for(demo)) as client:
        calls = [
            client.call_tool("read_doc", {"path": f".cuedeck/docs/{name}.md"})
            for name in ("api", "auth", "conventions", "runbook") * 8
        ] + [client.call_tool("word_count", {"path": "docs/deployment.md"}) for _ in range(8)]
        results = await asyncio.gather(*calls)
    paths = [r.structured_content["path"] for r in results[:32]]  # type: ignore[index]
    assert paths == [f".cuedeck/docs/{n}.md" for n in ("api", "auth", "conventions", "runbook") * 8]
    assert all(r.structured_content["words"] == 57 for r in results[32:])  # type: ignore[index]


def test_a_busy_port_is_error_1050_for_one_and_several_workspaces(demo: Path) -> None:
    import socket

    from click.testing import CliRunner

    from cuedeck_cli.app import make_cli

    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = str(holder.getsockname()[1])
        for extra in ([], ["--workspace", f"api={demo}"]):
            result = CliRunner().invoke(
                make_cli(), ["-C", str(demo), "mcp", "--transport", "http", "--port", port, *extra]
            )
            assert result.exit_code == 1
            assert result.stderr.startswith(f"error[1050] port {port} on 127.0.0.1 is taken")
            assert "--port " in result.stderr.splitlines()[1]


@needs("cuedeck_git")
async def test_a_tool_outside_the_profile_says_how_to_serve_it(demo: Path) -> None:
    async with Client(server_for(demo)) as client:  # the default profile: core
        names = {tool.name for tool in await client.list_tools()}
        with pytest.raises(MCPError) as refused:
            await client.call_tool("git_status", {})
        with pytest.raises(MCPError) as unknown:  # nobody registered it: a protocol error
            await client.call_tool("no_such_tool", {})
    assert unknown.value.error.code == -32602
    assert unknown.value.error.message.startswith("Unknown tool: 'no_such_tool'")
    assert "git_status" not in names
    error = refused.value.error
    assert error.code == 1051
    assert error.message == (
        "Tool Not Served: git_status is installed but not served: this server serves the "
        "'core' tool profile, which leaves out the 'git' category"
    )
    assert error.data["help"].startswith(
        'restart the server with `cue mcp --tools core,git` (or set [mcp] tools = ["core", "git"]'
    )


@needs("cuedeck_tasks")
async def test_a_local_client_refused_a_tool_hears_of_local_role(demo: Path) -> None:
    (demo / ".cuedeck" / "config.toml").write_text('[mcp]\nlocal_role = "read"\n')
    async with Client(server_for(demo)) as client:
        with pytest.raises(MCPError) as refused:
            await client.call_tool("create_task", {"title": "Nope"})
    error = refused.value.error
    assert error.code == 1012
    assert "[mcp] local_role (read)" in error.data["help"]
    assert 'local_role = "write"' in error.data["help"]
    assert "token add" not in error.data["help"]


@pytest.mark.slow
def test_initialize_waits_for_no_tool_module(demo: Path) -> None:
    """A deferred server (stdio) can answer initialize before any tool module is imported
    or described; furnishing it imports the served ones the first time (to describe
    them), and none once their descriptions are remembered."""
    from tests.conftest import run_script

    script = f"""
import json, sys
from cuedeck.workspace import open_workspace
from cuedeck_mcp.server import build_server
TOOLS = ("cuedeck_git.history", "cuedeck_tasks.tools", "cuedeck.serving.read_doc")
server = build_server(open_workspace({str(demo)!r}), defer=True)
before = sorted(m for m in sys.modules if m in TOOLS)
server.cuedeck_furnish()
after = sorted(m for m in sys.modules if m in TOOLS)
print(json.dumps([before, after, hasattr(server, "cuedeck_runtime")]))
"""
    # git's history tool is not in the default profile: never imported to serve it.
    assert run_script(script) == [[], ["cuedeck.serving.read_doc", "cuedeck_tasks.tools"], True]
    assert run_script(script) == [[], [], True]
