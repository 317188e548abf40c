"""The read_context tool: inputs, the deprecated flag, filters, errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cuedeck import open_workspace
from cuedeck.errors import InvalidInput
from cuedeck.plugins.host import make_plugin_host
from cuedeck.plugins.tools import Tool
from cuedeck.workspace import Workspace
from cuedeck_search.settings import MAX_LIMIT


@pytest.fixture
def tool() -> Tool:
    return make_plugin_host().tools()["read_context"]


def call(tool: Tool, workspace: Workspace, **arguments: Any) -> Any:
    """The results of a call (the reply's other fields are tested apart)."""
    return tool.call(workspace, arguments)["results"]


def test_registered_as_a_read_only_search_tool(tool: Tool) -> None:
    assert (tool.category, tool.read_only, tool.idempotent, tool.destructive) == (
        "search",
        True,
        True,
        False,
    )
    schema = tool.input_schema()
    properties = schema["properties"]
    assert schema["required"] == ["query"]
    assert (properties["query"]["minLength"], properties["query"]["maxLength"]) == (1, 200)
    (limit, _none) = properties["limit"]["anyOf"]
    assert (limit["minimum"], limit["maximum"]) == (1, MAX_LIMIT)
    assert properties["limit"]["default"] is None  # [search] limit
    assert properties["semantic"]["deprecated"] is True
    assert properties["semantic"]["default"] is False
    output = tool.output_schema()
    assert output is not None
    assert output["type"] == "object"
    assert {"results", "mode", "answered_by", "semantic_coverage", "embedding"} <= set(
        output["required"]
    )
    item = output["$defs"]["ContextResult"]
    assert {"path", "hash", "tokens", "anchors", "score"} <= set(item["required"])


def test_keyword_results_have_the_documented_shape(tool: Tool, small_workspace: Path) -> None:
    workspace = open_workspace(small_workspace)
    (first, *_) = call(tool, workspace, query="refresh_access_token", mode="keyword")
    document = workspace.document(".cuedeck/docs/auth.md")
    assert first["path"] == ".cuedeck/docs/auth.md"
    assert (first["hash"], first["tokens"]) == (document.sha256, document.tokens)
    assert first["anchors"][0] == "Token refresh"
    assert first["keyword_score"] == first["score"] > 0
    assert first["semantic_score"] is None


@pytest.mark.slow
def test_deprecated_semantic_flag_and_mode_precedence(tool: Tool, small_workspace: Path) -> None:
    workspace = open_workspace(small_workspace)
    semantic = call(tool, workspace, query="refunds", semantic=True)
    assert semantic[0]["keyword_score"] is None and semantic[0]["semantic_score"] is not None
    keyword = call(tool, workspace, query="refunds", semantic=True, mode="keyword")
    assert keyword[0]["semantic_score"] is None  # mode wins
    hybrid = call(tool, workspace, query="refunds")
    assert hybrid[0]["keyword_score"] is not None and hybrid[0]["semantic_score"] is not None


def test_filters(tool: Tool, small_workspace: Path) -> None:
    workspace = open_workspace(small_workspace)
    found = call(tool, workspace, query="rates", mode="keyword", filters={"assignee": "ALICE"})
    assert [r["path"] for r in found] == [".cuedeck/cards/a1b2c3.md"]
    assert call(tool, workspace, query="rates", mode="keyword", filters={"tags": ["ci"]}) == []


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({}, "query"),
        ({"query": ""}, "query"),
        ({"query": "x" * 201}, "query"),
        ({"query": "   "}, "query"),
        ({"query": "a", "limit": 0}, "limit"),
        ({"query": "a", "limit": 101}, "limit"),
        ({"query": "a", "mode": "fuzzy"}, "mode"),
        ({"query": "a", "filters": {"tags": "ci"}}, "filters.tags"),
        ({"query": "a", "filters": {"owner": "x"}}, "filters.owner"),
        ({"query": "a", "fuzzy": True}, "fuzzy"),
    ],
)
def test_bad_input_is_1004_naming_the_field(
    tool: Tool, small_workspace: Path, arguments: dict[str, Any], field: str
) -> None:
    with pytest.raises(InvalidInput) as caught:
        tool.call(open_workspace(small_workspace), arguments)
    assert caught.value.code == 1004
    assert caught.value.data["field"] == field
