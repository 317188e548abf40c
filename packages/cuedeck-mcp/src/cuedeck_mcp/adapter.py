"""Registered CueDeck tools as FastMCP tools: schemas, annotations, structured replies.

The adapter adds no behaviour of its own. A tool's input schema, output schema, summary
and flags all come from :class:`cuedeck.plugins.tools.Tool`; the schemas and annotations are
only compacted (generated titles, guard limits, MCP defaults and restated text left out;
docs/mcp.md lists it all) because every token of ``tools/list`` is paid by every
conversation. The server still validates every argument against the full signature.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from fastmcp.tools.base import Tool as FastMCPTool
from fastmcp.tools.base import ToolResult
from mcp_types import TextContent, ToolAnnotations
from mcp_types import Tool as MCPTool
from pydantic import PrivateAttr

from cuedeck.serving.reply import compact_json, reply_text

if TYPE_CHECKING:
    from cuedeck.plugins.tools import Tool
    from cuedeck_mcp.replies import Replies
    from cuedeck_mcp.runtime import WorkspaceRuntime

log = logging.getLogger("cuedeck")

_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_ONE = ("items", "additionalProperties", "not", "contains", "if", "then", "else")
#: Marks an output schema whose value is wrapped as ``{"result": ...}`` (FastMCP's
#: convention, which its client unwraps): MCP structured content must be an object. Kept
#: on the server's side; ``tools/list`` leaves it out (each reply's meta says it).
WRAP_KEY = "x-fastmcp-wrap-result"


#: Output-schema keywords that only restate or constrain what the server itself produces.
_OUTPUT_ONLY_NOISE = frozenset(
    {"description", "required", "pattern", "format", "additionalProperties", "examples"}
)
#: Longer input patterns are not published (the description says the format in words,
#: and the server validates every argument anyway): a date regex costs 70 tokens, a
#: project id's 22. Card ids and content hashes keep theirs.
MAX_PATTERN = 20
#: Length and count caps from here up are not published: few calls come near them, and
#: the server enforces them (1004 names the field and the limit). Smaller ones (a pair's
#: two items) say what a value is and stay.
GUARD_CAP = 50
_CAPS = ("maxLength", "maxItems")
_FLOORS = ("minLength", "minItems")


def compact_schema(node: Any, *, output: bool = False) -> Any:
    """A JSON schema trimmed for ``tools/list``, where every token is paid per conversation.

    Drops pydantic's generated titles, ``default: null``, ``additionalProperties`` (false,
    or the default true), long patterns, guard caps and floors of 1, and folds ``anyOf``
    of bare types into a type list (``anyOf [T, null]`` into ``type: [T, "null"]``); an
    ``output`` schema also drops descriptions, ``required`` and formats: it describes what
    the server sends, and the tool's description says what it means.
    """
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" and isinstance(value, str):
            continue
        if output and key in _OUTPUT_ONLY_NOISE and not isinstance(value, dict):
            continue
        if key == "additionalProperties" and value is False:
            continue
        if key == "pattern" and isinstance(value, str) and len(value) > MAX_PATTERN:
            continue
        if key in _CAPS and isinstance(value, int) and value >= GUARD_CAP:
            continue
        if key in _FLOORS and value == 1:
            continue  # non-empty: what any real argument is anyway
        if key == "additionalProperties" and value is True:
            continue  # the default
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: compact_schema(sub, output=output) for name, sub in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [compact_schema(sub, output=output) for sub in value]
        elif key in _SCHEMA_ONE:
            out[key] = compact_schema(value, output=output)
            if key == "items" and "description" in node and isinstance(out[key], dict):
                out[key].pop("description", None)  # the array's own description says it
        else:
            out[key] = value
    if out.get("default", 0) is None:
        del out["default"]  # an optional argument left out is None anyway
    return _fold_nullable(out)


def _fold_types(node: dict[str, Any]) -> dict[str, Any]:
    """``anyOf`` of bare types (``{"type": "object"}``, ``{"type": "string"}``) as one
    ``type`` list, the same schema for half the tokens."""
    options = node.get("anyOf")
    if (
        not isinstance(options, list)
        or len(options) < 2
        or "type" in node
        or not all(
            isinstance(o, dict) and set(o) == {"type"} and isinstance(o["type"], str)
            for o in options
        )
    ):
        return node
    folded = {key: value for key, value in node.items() if key != "anyOf"}
    folded["type"] = [o["type"] for o in options]
    return folded


def _fold_nullable(node: dict[str, Any]) -> dict[str, Any]:
    node = _fold_types(node)
    options = node.get("anyOf")
    if not isinstance(options, list) or len(options) != 2 or {"type": "null"} not in options:
        return node
    other = options[0] if options[1] == {"type": "null"} else options[1]
    kind = other.get("type")
    if not isinstance(kind, str) or kind in ("object", "array"):
        return node  # keep nested shapes readable; only scalars fold cleanly
    folded = {key: value for key, value in node.items() if key != "anyOf"}
    folded.update(other)
    folded["type"] = [kind, "null"]
    return folded


#: Properties at this depth and below keep their names but not their schemas (``{}``
#: accepts anything) in output schemas: agents still see every field of a reply (the
#: description says what they hold) for a fraction of the tokens ``tools/list`` costs.
OUTPUT_DEPTH = 0


#: Words a description may add to a parameter's name and still only restate it.
_NAME_WORDS = {"identifier": "id", "the": "", "a": "", "name": ""}


#: What a parameter described word for word like an earlier one says instead.
SAME_AS = "As for "


def restates(description: str, name: str) -> bool:
    """Whether ``description`` says no more than the parameter ``name`` (``Project
    identifier`` for ``project_id``, ``Branch name`` for ``branch_name``)."""
    words = {_NAME_WORDS.get(w, w) for w in re.findall(r"[a-z0-9]+", description.lower())}
    return words - {""} <= set(name.lower().split("_"))


def _published_inputs(schema: dict[str, Any]) -> dict[str, Any]:
    """The properties of an input schema (at every level) as ``tools/list`` shows them.

    Optional inputs lose their ``null`` (leaving one out is the same, and the union costs
    tokens for every optional argument of every tool); deprecated optional inputs are left
    out (old callers still send them and the server still takes them, but nobody new
    should learn them here); a description that only restates the name goes, and one that
    repeats an earlier sibling's word for word says ``As for <sibling>``. What is published
    stays a subset of what the server accepts.
    """
    if isinstance(schema.get("items"), dict):
        schema = {**schema, "items": _published_inputs(schema["items"])}
    if not isinstance(schema.get("properties"), dict):
        return schema
    required = set(schema.get("required", ()))
    properties: dict[str, Any] = {}
    described: dict[str, str] = {}  # description -> the first sibling that has it
    for name, prop in schema["properties"].items():
        if name not in required and prop.get("deprecated") is True:
            continue
        text = prop.get("description")
        if isinstance(text, str) and restates(text, name):
            prop = {key: value for key, value in prop.items() if key != "description"}
        elif isinstance(text, str):
            first = described.setdefault(text, name)
            if first != name and len(SAME_AS + first) < len(text):
                prop = {**prop, "description": SAME_AS + first}
        if name not in required:
            prop = _not_null(prop)
        properties[name] = _published_inputs(prop)
    return {**schema, "properties": properties}


def _not_null(prop: dict[str, Any]) -> dict[str, Any]:
    """``prop`` without ``null`` among its types or ``anyOf`` options."""
    kind = prop.get("type")
    if isinstance(kind, list) and "null" in kind:
        rest = [k for k in kind if k != "null"]
        prop = {**prop, "type": rest[0] if len(rest) == 1 else rest}
    options = prop.get("anyOf")
    if isinstance(options, list) and {"type": "null"} in options:
        rest_options = [o for o in options if o != {"type": "null"}]
        prop = {k: v for k, v in prop.items() if k != "anyOf"}
        prop = (
            {**rest_options[0], **prop}
            if len(rest_options) == 1
            else {**prop, "anyOf": rest_options}
        )
    return prop


def _inline(node: Any, defs: dict[str, Any], depth: int = 0) -> Any:
    """``node`` with local ``$ref`` s replaced by their definitions."""
    if isinstance(node, list):
        return [_inline(item, defs, depth) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/") and depth < 32:
        target = defs.get(ref.removeprefix("#/$defs/"), {})
        rest = {key: value for key, value in node.items() if key != "$ref"}
        return _inline({**target, **rest}, defs, depth + 1)
    return {key: _inline(value, defs, depth) for key, value in node.items() if key != "$defs"}


def _shallow(node: Any, level: int = 0) -> Any:
    """``node`` with the properties of objects below :data:`OUTPUT_DEPTH` left out."""
    if isinstance(node, list):
        return [_shallow(item, level) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "properties" and isinstance(value, dict):
            if level > OUTPUT_DEPTH:
                continue
            if level == OUTPUT_DEPTH:
                out[key] = {name: {} for name in value}
                continue
            out[key] = {name: _shallow(sub, level + 1) for name, sub in value.items()}
        elif key in ("additionalProperties", "patternProperties") and isinstance(value, dict):
            out[key] = _shallow(value, level + 1) if level < OUTPUT_DEPTH else {}
        else:
            out[key] = _shallow(value, level)
    return out


def input_schema(tool: Tool) -> dict[str, Any]:
    """The MCP input schema of ``tool``: compacted, references inlined, properties as
    :func:`_published_inputs` shows them."""
    compact = compact_schema(tool.input_schema())
    return _published_inputs(_inline(compact, compact.get("$defs") or {}))


def output_schema(tool: Tool, *, typed: bool = False) -> dict[str, Any] | None:
    """The MCP output schema of ``tool``: an object, wrapping other shapes; None if untyped.

    References are inlined, and objects nested deeper than :data:`OUTPUT_DEPTH` keep
    only their type, so that the schema stays small in ``tools/list``. ``typed`` keeps
    every property's type and the ``required`` lists instead (descriptions still go), as
    the specification's replies publish them (:mod:`cuedeck_mcp.replies`).
    """
    try:
        schema = tool.output_schema()
    except Exception as exc:  # a plugin's odd return type must not stop the server
        log.warning("tool %r: no output schema (%s)", tool.name, exc)
        return None
    if schema is None:
        return None
    if typed:
        compact = _without_descriptions(compact_schema(schema))
        schema = _inline(compact, compact.get("$defs") or {})
    else:
        compact = compact_schema(schema, output=True)
        schema = _shallow(_inline(compact, compact.get("$defs") or {}))
    if schema == {"type": "object"}:
        return None  # says nothing a dict reply does not; it is still sent as structured
    options = schema.get("anyOf")
    if (
        "type" not in schema
        and isinstance(options, list)
        and options
        and all(isinstance(o, dict) and o.get("type") == "object" for o in options)
    ):
        schema = {"type": "object", **schema}  # one of several objects is an object
    if schema.get("type") != "object":
        schema = {
            "type": "object",
            "properties": {"result": schema},
            "required": ["result"],
            WRAP_KEY: True,
        }
    return schema


def _without_descriptions(node: Any) -> Any:
    """``node`` without ``description`` keys at any level (a property so named stays)."""
    if isinstance(node, list):
        return [_without_descriptions(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "description" and isinstance(value, str):
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _without_descriptions(sub) for name, sub in value.items()}
        else:
            out[key] = _without_descriptions(value)
    return out


def with_repository_alias(schema: dict[str, Any], *, required: bool) -> dict[str, Any]:
    """``schema`` with the ``repository_alias`` argument first: a team server's tools run
    on the repository it names (docs/teams.md)."""
    from cuedeck_mcp.repositories import REPOSITORY_ALIAS

    alias = {
        "type": "string",
        "description": "The repository: a shared one (name-global) or one of yours "
        "(list_global_repos, list_activated_repos)",
    }
    properties = {REPOSITORY_ALIAS: alias, **schema.get("properties", {})}
    names = [*([REPOSITORY_ALIAS] if required else []), *schema.get("required", [])]
    return {**schema, "properties": properties, **({"required": names} if names else {})}


class Face(NamedTuple):
    """A tool as ``tools/list`` shows it (before a team server adds repository_alias)."""

    summary: str
    parameters: dict[str, Any]
    output: dict[str, Any] | None


def face_of(tool: Tool, replies: Replies) -> Face:
    """Make ``tool``'s face now, importing it: its one-line summary and its schemas
    (:mod:`cuedeck_mcp.faces` remembers them between starts)."""
    from cuedeck_mcp.replies import typed_output_schema

    output = output_schema(tool, typed=replies == "spec")
    if replies == "spec" and output is not None:
        output = typed_output_schema(tool.name, output)
    return Face(tool.summary, input_schema(tool), output)


def tool_annotations(tool: Tool) -> ToolAnnotations:
    """``tool``'s flags as MCP annotations, each hint sent only where it means something.

    The MCP defaults are ``readOnlyHint`` false, ``destructiveHint`` true and
    ``idempotentHint`` false, and the last two apply to tools that write only. So a
    read-only tool says just that; a writing tool always says whether it is destructive
    (explicitly, even where the default would say it) and says idempotent when it is.
    """
    if tool.read_only:
        return ToolAnnotations(read_only_hint=True)
    return ToolAnnotations(
        destructive_hint=tool.destructive,
        idempotent_hint=True if tool.idempotent else None,
    )


class ServedTool(FastMCPTool):
    """A registered CueDeck tool, served over MCP."""

    _tool: Tool = PrivateAttr()
    _runtime: WorkspaceRuntime = PrivateAttr()
    _replies: Replies = PrivateAttr(default="cuedeck")

    @classmethod
    def adapt(
        cls,
        tool: Tool,
        runtime: WorkspaceRuntime,
        *,
        repository_alias: Literal["required", "optional"] | None = None,
        replies: Replies = "cuedeck",
        face: Face | None = None,
    ) -> ServedTool:
        """The MCP face of ``tool``, running on ``runtime`` (or the repository a call
        names: :data:`cuedeck_mcp.repositories.TARGET`); ``repository_alias`` publishes
        that argument in its input schema, required or not; ``replies`` chooses the reply
        shapes (:mod:`cuedeck_mcp.replies`). ``face`` is the tool's description and
        schemas as :func:`face_of` makes them (made now when None)."""
        if face is None:
            face = face_of(tool, replies)
        parameters = face.parameters
        if repository_alias is not None:
            parameters = with_repository_alias(parameters, required=repository_alias == "required")
        served = cls(
            name=tool.name,
            # The TL;DR only: every conversation pays for tools/list, and the parameters'
            # own descriptions are in the schema; get_tool_docs has the whole reference.
            description=face.summary,
            parameters=parameters,
            output_schema=face.output,
            annotations=tool_annotations(tool),
            tags={tool.category},
        )
        served._tool = tool
        served._runtime = runtime
        served._replies = replies
        return served

    def to_mcp_tool(self, **overrides: Any) -> MCPTool:
        tool = super().to_mcp_tool(**overrides)
        tool.meta = None  # FastMCP's tag list: the category is in get_tool_categories
        tool.title = None  # FastMCP derives it from the name, which says the same
        if self._replies != "spec":
            # Every reply carries its structured content anyway, and a wrapped one says
            # so in its own meta (``fastmcp.wrap_result``, which FastMCP's client reads):
            # field names would be paid for in every conversation to tell a model what
            # the reply's text shows it (get_tool_docs has the typed reference).
            tool.output_schema = None
        return tool

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        from cuedeck_mcp.progress import relayed_progress
        from cuedeck_mcp.repositories import TARGET

        target = TARGET.get()
        runtime = target.runtime if target is not None else self._runtime
        async with relayed_progress():  # long work reports progress if the client asked
            value = await runtime.run(runtime.call_tool, self._tool, arguments)
        wrapped = self.output_schema is not None and bool(self.output_schema.get(WRAP_KEY))
        if self._replies == "spec":
            from cuedeck_mcp.replies import spec_value

            value = spec_value(self.name, value)  # an object, lists as {"success", "result"}
            wrapped = False
            text = compact_json(value)  # the specification's clients read the JSON
        else:
            # Code and text as they are, not JSON-escaped; a reflects block as its line.
            text = reply_text(value, self._tool.reads_as)
        content = [TextContent(type="text", text=text)]
        if wrapped:
            return ToolResult(
                content=content,
                structured_content={"result": value},
                meta={"fastmcp": {"wrap_result": True}},
            )
        if isinstance(value, dict):
            return ToolResult(content=content, structured_content=value)
        return ToolResult(content=content)
