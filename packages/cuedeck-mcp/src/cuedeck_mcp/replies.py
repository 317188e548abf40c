"""Reply shapes: CueDeck's own, or the code-indexer specification's, behind one switch.

``replies = "spec"`` (the deployment file's key, or ``CUEDECK_MCP_REPLIES=spec`` for any
server) serves clients written against the specification:

* every object reply carries ``success: true`` (a list reply: ``{"success", "result"}``);
* ``get_file_content``'s ``content`` is a list of text blocks;
* a failure is a tool result (``isError``) holding ``{"success": false, "error", "hint",
  "code", "data"}`` instead of a JSON-RPC error;
* output schemas carry every property's type and the ``required`` lists.

CueDeck's shapes (the default) differ for reasons docs/mcp.md gives per difference.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, Literal

from cuedeck.errors import InvalidInput

if TYPE_CHECKING:
    from fastmcp.tools.base import ToolResult

    from cuedeck_mcp.runtime import CueFailure

Replies = Literal["cuedeck", "spec"]
REPLIES_ENV = "CUEDECK_MCP_REPLIES"
#: Tools whose ``content`` string the specification wants as a list of text blocks.
CONTENT_BLOCKS = frozenset({"get_file_content"})


def check_replies(value: str | None, *, field: str = "replies") -> Replies:
    """``value`` (default ``$CUEDECK_MCP_REPLIES``, else ``cuedeck``) as a reply style."""
    chosen = value if value is not None else os.environ.get(REPLIES_ENV) or "cuedeck"
    if chosen not in ("cuedeck", "spec"):
        raise InvalidInput(f"replies must be cuedeck or spec, not {chosen!r}", field=field)
    return chosen  # type: ignore[return-value]


def spec_value(tool: str, value: Any) -> dict[str, Any]:
    """A successful reply in the specification's shape: an object with ``success``."""
    if not isinstance(value, dict):
        return {"success": True, "result": value}
    shaped = {"success": True, **value}
    if tool in CONTENT_BLOCKS and isinstance(shaped.get("content"), str):
        shaped["content"] = [{"type": "text", "text": shaped["content"]}]
    return shaped


def spec_failure(failure: CueFailure) -> ToolResult:
    """A failure as the specification's reply: a tool result marked as an error."""
    from fastmcp.tools.base import ToolResult
    from mcp_types import TextContent

    body = {
        "success": False,
        "error": f"{failure.title}: {failure.message}",
        "hint": str(failure.data.get("help") or failure.data.get("suggestion") or ""),
        "code": failure.code,
        "data": failure.data,
    }
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    return ToolResult(
        content=[TextContent(type="text", text=text)], structured_content=body, is_error=True
    )


def typed_output_schema(tool: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The output schema of a spec reply: ``schema`` (typed, see
    :func:`cuedeck_mcp.adapter.output_schema`) with ``success`` required first, a list
    reply as ``{"success", "result"}``, and content blocks where the tool has them. A
    reply of one of several shapes (a destructive tool's confirmation asked, or its
    result) is each of them so made."""
    branches = schema.get("anyOf")
    if isinstance(branches, list) and branches and "properties" not in schema:
        return {
            "type": "object",
            "properties": {"success": {"type": "boolean"}},
            "required": ["success"],
            "anyOf": [typed_output_schema(tool, branch) for branch in branches],
        }
    properties = {
        key: value for key, value in schema.get("properties", {}).items() if key != "success"
    }
    if tool in CONTENT_BLOCKS and "content" in properties:
        block = {
            "type": "object",
            "properties": {"type": {"type": "string"}, "text": {"type": "string"}},
            "required": ["type", "text"],
        }
        properties["content"] = {"type": "array", "items": block}
    required = [name for name in schema.get("required", []) if name != "success"]
    # A list reply is sent whole as {"success", "result"}: no FastMCP wrapping marker.
    return {
        "type": "object",
        "properties": {"success": {"type": "boolean"}, **properties},
        "required": ["success", *required],
    }
