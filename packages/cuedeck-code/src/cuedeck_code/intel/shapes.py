"""The arguments and replies of the code-intelligence tools (:mod:`.tools`,
:mod:`.overview`): each reply's fields, typed, as ``get_tool_docs`` and
``replies = "spec"`` publish them."""

# The tools' annotations are read at run time (their schemas): imported, not type-only.
# ruff: noqa: TC001

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from typing_extensions import TypedDict  # pydantic needs it for TypedDicts on 3.11

from cuedeck.watch.reflects import Reflects

if TYPE_CHECKING:
    import pydantic
else:
    from cuedeck.plugins.tools import lazy_pydantic as pydantic

SymbolName = Annotated[
    str,
    pydantic.Field(
        description="A name (send), qualified (Client.send), path#Name or mod/Class#method()",
        min_length=1,
        max_length=500,
    ),
]
Exact = Annotated[bool, pydantic.Field(description="Only this exact name, not names holding it")]
Limit = Annotated[int, pydantic.Field(description="Most results in this page", ge=1, le=500)]
Offset = Annotated[int, pydantic.Field(description="Results to skip (next_offset)", ge=0)]


class Location(TypedDict):
    """A definition: its symbol, file and lines."""

    symbol: str
    name: str
    kind: str
    file_path: str
    line: int
    end_line: int
    column: int


class Definitions(TypedDict):
    """What ``scip_definition`` returns."""

    symbol: str
    total_results: int
    results: list[Location]
    has_more: bool
    next_offset: int | None
    text: str
    reflects: Reflects


class ReferenceSite(TypedDict):
    """One place that references a symbol."""

    symbol: str
    file_path: str
    line: int
    column: int
    kind: str
    relationship: str
    context: str
    from_symbol: str
    source: str


class References(TypedDict):
    """What ``scip_references`` returns."""

    symbol: str
    matched: list[str]
    total_results: int
    results: list[ReferenceSite]
    has_more: bool
    next_offset: int | None
    text: str
    reflects: Reflects


class Related(TypedDict):
    """A symbol related to the one asked about."""

    symbol: str
    name: str
    kind: str
    file_path: str
    line: int
    column: int
    relationship: str
    depth: int
    source: str


class RelatedSymbols(TypedDict):
    """What ``scip_dependencies`` and ``scip_dependents`` return."""

    symbol: str
    matched: list[str]
    total_results: int
    results: list[Related]
    has_more: bool
    next_offset: int | None
    text: str
    reflects: Reflects


class Affected(TypedDict):
    """A symbol an impact analysis reached."""

    symbol: str
    file_path: str
    line: int
    column: int
    depth: int
    relationship: str
    chain: list[str]


class AffectedFile(TypedDict):
    """One file's share of an impact."""

    path: str
    affected_symbol_count: int
    min_depth: int
    max_depth: int


class Impact(TypedDict):
    """What ``scip_impact`` returns."""

    target_symbol: str
    matched: list[str]
    depth_analyzed: int
    total_affected: int
    truncated: bool
    affected_symbols: list[Affected]
    affected_files: list[AffectedFile]
    text: str
    reflects: Reflects


class Step(TypedDict):
    """One step of a call chain."""

    symbol: str
    file_path: str
    line: int
    column: int
    call_type: str


class Chain(TypedDict):
    """One call chain."""

    length: int
    path: list[Step]


class CallChains(TypedDict):
    """What ``scip_callchain`` returns."""

    from_symbol: str
    to_symbol: str
    total_chains_found: int
    truncated: bool
    max_depth_reached: bool
    chains: list[Chain]
    text: str
    reflects: Reflects


class ContextSymbol(TypedDict):
    """A symbol of a file of ``scip_context``."""

    name: str
    kind: str
    relationship: str
    line: int
    column: int
    relevance: float


class ContextFile(TypedDict):
    """A file worth reading to understand a symbol."""

    path: str
    relevance_score: float
    read_priority: int
    symbols: list[ContextSymbol]


class Context(TypedDict):
    """What ``scip_context`` returns."""

    target_symbol: str
    summary: str
    total_files: int
    total_symbols: int
    avg_relevance: float
    files: list[ContextFile]
    text: str
    reflects: Reflects


class CallNode(TypedDict):
    """A symbol of a call graph, with its own callers or callees below it."""

    symbol: str
    file_path: str
    line: int
    children: list[CallNode]


class CallGraph(TypedDict):
    """What ``scip_call_graph`` returns."""

    symbol: str
    matched: list[str]
    depth: int
    callers: list[CallNode]
    callees: list[CallNode]
    truncated: bool
    text: str
    reflects: Reflects


class GraphStatus(TypedDict):
    """What ``scip_status`` returns."""

    files: int
    symbols: int
    edges: dict[str, int]
    by_language: dict[str, int]
    precise_files: int
    indexers: list[dict[str, Any]]
    run: dict[str, Any]
    text: str
    reflects: Reflects


class GenerateStatus(TypedDict):
    """What ``scip_generate`` returns."""

    state: str
    indexers: list[dict[str, Any]]
    text: str
