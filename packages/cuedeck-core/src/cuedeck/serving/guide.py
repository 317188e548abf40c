"""Tools about the tools: ``get_tool_categories``, ``get_tool_docs`` and
``first_time_user_guide``.

They read the registered tools' own metadata (category, summary, flags) and references,
so a plugin's tool shows up in them with no change here. The walkthrough takes each
tool's step from its reference (``guide:`` in its package's ``reference.yaml``: where it
comes, why, an example call) and fills the example with this workspace's real ids and
paths; a tool that is not installed has no step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, cast

from typing_extensions import TypedDict  # pydantic needs it for TypedDicts on 3.11

from cuedeck.layout import DOCS_DIR, card_path

if TYPE_CHECKING:
    import pydantic

    from cuedeck.models import Document
    from cuedeck.plugins.tools import Tool
    from cuedeck.workspace import Workspace
else:
    from cuedeck.plugins.tools import lazy_pydantic as pydantic


#: Any JSON value (a parameter's default, an example reply), named so its schema says so.
JsonValue = str | int | float | bool | list[Any] | dict[str, Any] | None


class ToolInfo(TypedDict):
    """One tool, as ``get_tool_categories`` lists it."""

    name: str
    summary: str
    read_only: bool
    destructive: bool


class ToolCategory(TypedDict):
    """The tools of one category."""

    category: str
    tools: list[ToolInfo]


class ToolCategories(TypedDict):
    """What ``get_tool_categories`` returns."""

    categories: list[ToolCategory]


class ErrorInfo(TypedDict):
    """A common error of a tool: its code, when it happens, and the fix."""

    code: int
    when: str
    fix: str


class GuideStep(TypedDict):
    """One step of the walkthrough: a tool, why to call it, a call to copy, what comes
    back and what can go wrong."""

    tool: str
    why: str
    example_call: dict[str, Any]
    expected_result: str
    common_errors: list[ErrorInfo]


class Parameter(TypedDict):
    """One input of a tool."""

    name: str
    type: str
    required: bool
    default: JsonValue
    description: str


class ExampleCall(TypedDict):
    """A call against the demo workspace and the reply it really got."""

    arguments: dict[str, Any]
    reply: JsonValue


class ToolDocs(TypedDict):
    """What ``get_tool_docs`` returns: one tool's whole reference."""

    name: str
    tldr: str
    category: str
    role: str
    read_only: bool
    destructive: bool
    use_cases: list[str]
    requires: str
    parameters: list[Parameter]
    returns: str
    example: ExampleCall | None
    errors: list[ErrorInfo]
    related: list[str]


class Guide(TypedDict):
    """What ``first_time_user_guide`` returns."""

    active_card: str | None
    cards: int
    docs: int
    steps: list[GuideStep]
    other_tools: list[str]
    tips: list[str]


def _tools(workspace: Workspace) -> dict[str, Tool]:
    from cuedeck.serving.calls import offered_tools

    # A tool that does not load is not offered, nor one the caller's server does not serve.
    return offered_tools(workspace.plugins.checked_tools())


def get_tool_categories(workspace: Workspace) -> ToolCategories:
    """List every tool by category, with its summary and whether it writes."""
    grouped: dict[str, list[ToolInfo]] = {}
    tools = _tools(workspace)
    for tool in sorted(tools.values(), key=lambda t: (t.category, t.name)):
        grouped.setdefault(tool.category, []).append(
            {
                "name": tool.name,
                "summary": tool.summary,
                "read_only": tool.read_only,
                "destructive": tool.destructive,
            }
        )
    return {"categories": [{"category": name, "tools": items} for name, items in grouped.items()]}


def get_tool_docs(
    workspace: Workspace,
    tool: Annotated[str, pydantic.Field(description="Tool name", min_length=1, max_length=100)],
) -> ToolDocs:
    """Read one tool's full reference: use cases, parameters, example, errors, related tools.

    The example reply is real, from the demo workspace; errors carry their fix.
    """
    from cuedeck.errors import FileNotFound, did_you_mean, suggestion_text
    from cuedeck.serving.tool_docs import parameters, reference_of

    tools = _tools(workspace)
    found = tools.get(tool)
    if found is None:
        raise FileNotFound(
            f"there is no tool {tool!r} here",
            suggestion=suggestion_text(did_you_mean(tool, tools)),
            help="get_tool_categories lists the tools this server offers",
        )
    reference = reference_of(found)
    example = reference.example
    return {
        "name": found.name,
        "tldr": found.summary,
        "category": found.category,
        "role": found.role,
        "read_only": found.read_only,
        "destructive": found.destructive,
        "use_cases": reference.use_cases,
        "requires": reference.requires,
        "parameters": cast("list[Parameter]", parameters(found)),
        "returns": reference.returns,
        "example": {"arguments": example.arguments, "reply": example.reply} if example else None,
        "errors": [{"code": e.code, "when": e.when, "fix": e.fix} for e in reference.errors],
        "related": reference.related,
    }


def first_time_user_guide(workspace: Workspace) -> Guide:
    """A first-session walkthrough: which tools to call, in what order, with example calls."""
    from cuedeck.errors import FileNotFound
    from cuedeck.scene import find_card
    from cuedeck.serving.tool_docs import reference_of

    tools = _tools(workspace)
    documents = workspace.documents
    cards = [doc for doc in documents.values() if doc.kind == "card"]
    card_ids = {_card_id(doc) for doc in cards}
    try:  # the card build_scene would choose: one rule, in one place
        active: str | None = _card_id(find_card(workspace))
    except FileNotFound:
        active = None
    card = active or next(iter(sorted(card_ids)), None)
    doc = _example_doc(documents.values())
    topic = documents[card_path(card)].title if card else "getting started"

    filled = {"{card}": card, "{topic}": topic, "{doc}": doc}
    references = {name: reference_of(tool) for name, tool in tools.items()}
    plan = sorted(
        (ref.guide.step, name, ref) for name, ref in references.items() if ref.guide is not None
    )
    steps: list[GuideStep] = []
    for _, name, reference in plan:
        hint = reference.guide
        assert hint is not None
        example = hint.example
        if card is None and hint.example_without_card is not None:
            example = hint.example_without_card
        steps.append(
            {
                "tool": name,
                "why": hint.why,
                "example_call": _fill(example, filled),
                "expected_result": reference.returns,
                "common_errors": [
                    {"code": e.code, "when": e.when, "fix": e.fix} for e in reference.errors
                ],
            }
        )
    planned = {name for _, name, _ in plan}
    others = [
        f"{tool.name} ({tool.category}): {tool.summary}"
        for tool in sorted(tools.values(), key=lambda t: t.name)
        if tool.name not in planned and tool.name != "first_time_user_guide"
    ]
    return {
        "active_card": active,
        "cards": len(cards),
        "docs": len(documents) - len(cards),
        "steps": steps,
        "other_tools": others,
        "tips": [
            "Paths are workspace-relative: .cuedeck/docs/auth.md, or docs/auth.md for short.",
            "read_doc pages end on whole lines: call again with next_offset while has_more.",
            "Errors carry codes: 1001 not found (data.suggestion), 1004 bad input "
            "(data.field), 1002 cycle (data.cycle_path), 429 rate limit "
            "(data.retry_after_seconds).",
            "Secrets in replies are masked as [REDACTED:rule#n].",
        ],
    }


def _fill(example: Any, filled: dict[str, Any]) -> Any:
    """``example`` with each placeholder string (``"{card}"``...) replaced by its value."""
    if isinstance(example, str):
        return filled.get(example, example)
    if isinstance(example, dict):
        return {key: _fill(value, filled) for key, value in example.items()}
    if isinstance(example, list):
        return [_fill(value, filled) for value in example]
    return example


def _card_id(document: Document) -> str:
    return document.path.rsplit("/", 1)[-1].removesuffix(".md")


def _example_doc(documents: Any) -> dict[str, Any]:
    """``read_doc`` arguments for a real doc of the workspace (docs before other files)."""
    ranked = sorted(
        (doc for doc in documents if doc.kind != "card"),
        key=lambda doc: (doc.kind != "doc", doc.path),
    )
    if not ranked:
        return {"file_path": f"{DOCS_DIR}/guide.md"}
    doc = ranked[0]
    section = next((h for h in doc.headings if h.level > 1), None)
    found = {"file_path": doc.path}
    return {**found, "anchor": section.text} if section else found


__all__ = [
    "ErrorInfo",
    "Guide",
    "GuideStep",
    "ToolCategories",
    "ToolCategory",
    "ToolInfo",
    "first_time_user_guide",
    "get_tool_categories",
    "get_tool_docs",
]
