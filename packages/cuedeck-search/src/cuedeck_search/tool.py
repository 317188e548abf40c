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
        default_factory=list, description="Any of these tags"
    )
    priority: str | None = None
    assignee: str | None = None


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
    semantic_coverage: float | None


def read_context(
    workspace: Workspace,
    query: Annotated[
        str,
        pydantic.Field(
            min_length=1, max_length=200, description="Words or a question, e.g. 'auth flow'"
        ),
    ],
    limit: Annotated[int, pydantic.Field(ge=1, le=50)] = 5,
    mode: Annotated[
        Literal["keyword", "semantic", "hybrid"] | None,
        pydantic.Field(description="Default hybrid"),
    ] = None,
    semantic: Annotated[
        bool,
        pydantic.Field(
            description="Deprecated: use mode='semantic'",
            json_schema_extra={"deprecated": True},
        ),
    ] = False,
    filters: Annotated[
        ContextFilters | None, pydantic.Field(description="Frontmatter filters")
    ] = None,
) -> list[ContextResult]:
    """Search docs, cards and markdown by keyword, meaning or both; best files first.

    Each result has the file's hash and tokens, its best sections (anchors, best first;
    line of the best) and the keyword and semantic parts of its score. semantic_coverage
    below 1 means sections are still being embedded: the answer used the vectors there
    were (keyword alone at 0). Then read_doc the top results. Filters match frontmatter
    (any tag; priority and assignee ignore case).
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
            semantic_coverage=r.semantic_coverage,
        )
        for r in results
    ]
