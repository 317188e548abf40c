"""The ``read_context`` tool: search the workspace, for agents (MCP) and Python alike."""

from __future__ import annotations

from typing import Annotated, Literal

import pydantic
from typing_extensions import TypedDict  # pydantic needs it on Python < 3.12

# Imported at run time: pydantic resolves the tool's annotations from this module.
from cuedeck.workspace import Workspace  # noqa: TC001


class ContextFilters(pydantic.BaseModel):
    """Frontmatter filters: any of the tags; priority and assignee ignore case."""

    model_config = pydantic.ConfigDict(extra="forbid")

    tags: list[Annotated[str, pydantic.Field(min_length=1)]] = pydantic.Field(
        default_factory=list, description="Filter by tags (ANY match logic)"
    )
    priority: str | None = pydantic.Field(
        default=None, description="Filter by priority (case-insensitive)"
    )
    assignee: str | None = pydantic.Field(
        default=None, description="Filter by assignee (case-insensitive)"
    )


class ContextResult(TypedDict):
    """One file found: where, how big, which sections matched, and why it ranks here."""

    path: str
    title: str
    hash: str
    tokens: int
    anchors: list[str]
    line: int | None
    score: float
    keyword_score: float | None
    semantic_score: float | None


def read_context(
    workspace: Workspace,
    query: Annotated[
        str,
        pydantic.Field(
            min_length=1, max_length=200, description="Keywords to match (e.g. 'auth flow')"
        ),
    ],
    limit: Annotated[int, pydantic.Field(ge=1, le=50, description="Results wanted")] = 5,
    mode: Annotated[
        Literal["keyword", "semantic", "hybrid"] | None,
        pydantic.Field(description="Search algorithm selection; default hybrid ([search] mode)"),
    ] = None,
    semantic: Annotated[
        bool,
        pydantic.Field(
            description="DEPRECATED: Use mode='semantic' instead. Kept for backward "
            "compatibility; mode wins when both are given.",
            json_schema_extra={"deprecated": True},
        ),
    ] = False,
    filters: Annotated[
        ContextFilters | None, pydantic.Field(description="Frontmatter filters")
    ] = None,
) -> list[ContextResult]:
    """Search the workspace's docs, cards and markdown files; best files first.

    Keyword (BM25 with stemming, headings and file names weighted), semantic
    (all-MiniLM-L6-v2, offline) or hybrid (both fused, the default). Each result names
    the file, its sha256 and token count, the best-matching sections (anchors, best
    first, with the line of the best), the score and how much of it came from each side.
    Use it to find what to read, then read_doc the top results.
    """
    from cuedeck.models import SearchFilters

    chosen = mode if mode is not None else ("semantic" if semantic else None)
    wanted = SearchFilters()
    if filters is not None:
        wanted = SearchFilters(
            tags=tuple(filters.tags), priority=filters.priority, assignee=filters.assignee
        )
    results = workspace.search(query, mode=chosen, limit=limit, filters=wanted)
    return [
        ContextResult(
            path=r.path,
            title=r.title,
            hash=r.hash,
            tokens=r.tokens,
            anchors=list(r.anchors),
            line=r.line,
            score=r.score,
            keyword_score=r.keyword_score,
            semantic_score=r.semantic_score,
        )
        for r in results
    ]
