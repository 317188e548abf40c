"""Tools: validation that names the field, schemas derived from the signature."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from pydantic import AfterValidator, Field
from typing_extensions import TypedDict

from cuedeck import open_workspace
from cuedeck.errors import InvalidInput
from cuedeck.plugins.host import make_plugin_host
from cuedeck.plugins.tools import Tool
from tests.conftest import MakeWorkspace, needs_extras


class Filters(TypedDict, total=False):
    tags: list[str]
    priority: str


class Reply(TypedDict):
    echoed: str
    limit: int


def echo(
    workspace: Any,
    query: Annotated[str, Field(min_length=1, max_length=20, description="What to echo")],
    limit: Annotated[int, Field(ge=1, le=50)] = 5,
    filters: Filters | None = None,
) -> Reply:
    """Echo the query back.

    Longer text after the summary line.
    """
    return {"echoed": query, "limit": limit}


@pytest.fixture
def tool() -> Tool:
    return Tool(echo, name="echo", plugin="tests", category="test", read_only=True)


def test_summary_and_description(tool: Tool) -> None:
    assert tool.summary == "Echo the query back."
    assert tool.description.endswith("Longer text after the summary line.")


def test_input_schema_carries_the_constraints(tool: Tool) -> None:
    schema = tool.input_schema()
    assert schema["required"] == ["query"]
    query = schema["properties"]["query"]
    assert (query["minLength"], query["maxLength"], query["description"]) == (1, 20, "What to echo")
    assert schema["properties"]["limit"]["maximum"] == 50
    assert schema["additionalProperties"] is False
    assert "workspace" not in schema["properties"]


def test_output_schema_from_the_return_type(tool: Tool) -> None:
    schema = tool.output_schema()
    assert schema is not None
    assert set(schema["properties"]) == {"echoed", "limit"}


def test_call_validates_and_converts(tool: Tool, make_workspace: MakeWorkspace) -> None:
    workspace = open_workspace(make_workspace())
    assert tool.call(workspace, {"query": "hi"}) == {"echoed": "hi", "limit": 5}
    assert tool.call(workspace, {"query": "hi", "limit": 7})["limit"] == 7


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({}, "query"),
        ({"query": ""}, "query"),
        ({"query": "x" * 21}, "query"),
        ({"query": "ok", "limit": 0}, "limit"),
        ({"query": "ok", "limit": "many"}, "limit"),
        ({"query": "ok", "filters": {"tags": "auth"}}, "filters.tags"),
        ({"query": "ok", "colour": "red"}, "colour"),
    ],
)
def test_bad_arguments_name_the_field(
    tool: Tool, make_workspace: MakeWorkspace, arguments: dict[str, Any], field: str
) -> None:
    with pytest.raises(InvalidInput) as caught:
        tool.call(open_workspace(make_workspace()), arguments)
    assert caught.value.code == 1004
    assert caught.value.data["field"] == field


def test_a_tool_needs_a_docstring_and_a_workspace_parameter() -> None:
    def undocumented(workspace: Any) -> None:
        pass

    def no_workspace(query: str) -> None:
        """Has a docstring."""

    with pytest.raises(InvalidInput, match="no docstring"):
        Tool(undocumented, name="u", plugin="p")
    with pytest.raises(InvalidInput, match="first parameter must be 'workspace'"):
        Tool(no_workspace, name="n", plugin="p")


def test_every_registered_tool_has_working_schemas() -> None:
    tools = make_plugin_host().tools()
    assert tools, "core registers tools of its own"
    for name, registered in tools.items():
        assert registered.summary, name
        assert registered.input_schema()["type"] == "object", name
        registered.output_schema()  # builds, or raises


def _demo_tool(name: str) -> tuple[Any, Tool]:
    from tests.conftest import REPO

    workspace = open_workspace(REPO / "examples" / "demo")
    return workspace, workspace.plugins.tools()[name]


@pytest.mark.parametrize(
    ("tool", "arguments", "field"),
    [
        ("read_doc", {"path": "docs/api.md", "offset": True}, "offset"),
        ("read_doc", {"path": 7}, "path"),
        ("read_doc", {"path": "docs/api.md", "max_tokens": "500"}, "max_tokens"),
        ("build_scene", {"token_limit": 1000.0}, "token_limit"),
    ],
)
def test_arguments_are_strictly_typed(tool: str, arguments: dict[str, Any], field: str) -> None:
    workspace, served = _demo_tool(tool)
    with pytest.raises(InvalidInput) as refused:
        served.call(workspace, arguments)
    assert (refused.value.code, refused.value.data["field"]) == (1004, field)


@pytest.mark.parametrize(
    ("arguments", "field", "problem"),
    [
        ({"path": "x" * 1_000_001}, "path", "longer than 1,000,000 characters"),
        ({"path": "a.md", "anchor": "a" * 1_000_001}, "anchor", "longer than"),
    ],
)
def test_every_string_has_a_length_cap(arguments: dict[str, Any], field: str, problem: str) -> None:
    workspace, served = _demo_tool("read_doc")
    with pytest.raises(InvalidInput) as refused:
        served.call(workspace, arguments)
    assert refused.value.data["field"] == field
    assert problem in refused.value.message


def test_lists_and_nesting_have_caps() -> None:
    from cuedeck.plugins.tools import check_sizes

    with pytest.raises(InvalidInput) as long_list:
        check_sizes({"tags": ["x"] * 10_001}, tool="t")
    deep: Any = "leaf"
    for _ in range(40):
        deep = [deep]
    with pytest.raises(InvalidInput) as too_deep:
        check_sizes({"updates": {"tags": deep}}, tool="t")
    assert long_list.value.data["field"] == "tags"
    assert "more than 10,000 items" in long_list.value.message
    assert too_deep.value.data["field"].startswith("updates.tags.0.0")
    check_sizes({"tags": ["x"] * 10_000, "text": "y" * 1_000_000}, tool="t")  # at the caps


def _untyped(schema: dict[str, Any], defs: dict[str, Any], where: str = "$") -> list[str]:
    """Places in an output schema that do not say their type, or an object's required
    keys. Array items and open maps (``dict[str, Any]``) may hold any JSON value."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return _untyped(defs[name], defs, f"{where}->{name}")
    found = []
    if not any(key in schema for key in ("type", "anyOf", "oneOf", "enum", "const")):
        found.append(f"{where}: no type")
    for key in ("anyOf", "oneOf"):
        for n, option in enumerate(schema.get(key, [])):
            found += _untyped(option, defs, f"{where}|{n}")
    properties = schema.get("properties")
    if properties is not None:
        if not schema.get("required"):
            found.append(f"{where}: no required keys")
        for name, sub in properties.items():
            found += _untyped(sub, defs, f"{where}.{name}")
    items = schema.get("items")
    if isinstance(items, dict) and items:
        found += _untyped(items, defs, f"{where}[]")
    return found


@needs_extras
def test_every_tool_publishes_a_typed_output_schema() -> None:
    tools = make_plugin_host().checked_tools()
    assert len(tools) > 40
    found = {}
    for name, tool in tools.items():
        schema = tool.output_schema()
        if schema is None:
            found[name] = ["no output schema: the return type is missing or Any"]
            continue
        if problems := _untyped(schema, schema.get("$defs", {})):
            found[name] = problems
    assert found == {}


def test_nesting_up_to_the_cap_is_taken_and_one_level_more_refused() -> None:
    from cuedeck.plugins.tools import MAX_DEPTH, check_sizes

    def nested(levels: int) -> Any:
        value: Any = "leaf"
        for _ in range(levels - 1):
            value = [value]
        return value

    check_sizes({"tags": nested(MAX_DEPTH)}, tool="t")  # the leaf sits at the cap
    with pytest.raises(InvalidInput) as refused:
        check_sizes({"tags": nested(MAX_DEPTH + 1)}, tool="t")
    assert refused.value.data["field"] == "tags" + ".0" * MAX_DEPTH
    with pytest.raises(InvalidInput, match=r"'batch\.2\.text': longer than 1,000,000"):
        check_sizes({"batch": [{"text": "a"}, {"text": "b"}, {"text": "c" * 1_000_001}]}, tool="t")


SEEN: list[str] = []


def _counted(value: str) -> str:
    SEEN.append(value)
    return value


def counted_echo(workspace: Any, text: Annotated[str, AfterValidator(_counted)]) -> str:
    """Echo a text, each validation of it counted."""
    return text


def test_a_call_after_validate_takes_its_result_once() -> None:
    """A server validates before it spends a rate limit; the call that follows does not
    validate the same arguments again (and a later call does)."""
    tool = Tool(counted_echo, name="counted_echo", plugin="tests")
    workspace: Any = None  # the tool never looks at it
    SEEN.clear()
    arguments = {"text": "hello"}
    tool.validate(arguments)
    assert tool.call(workspace, dict(arguments)) == "hello"
    assert SEEN == ["hello"]
    assert tool.call(workspace, arguments) == "hello"
    assert SEEN == ["hello", "hello"]
    tool.validate(arguments)
    with pytest.raises(InvalidInput, match="counted_echo: invalid 'text'"):
        tool.call(workspace, {"text": 7})  # other arguments: validated, and refused
