"""The ``read_context`` tool: search the workspace, for agents (MCP) and Python alike."""

from __future__ import annotations

from typing import Annotated, Literal

import pydantic
from typing_extensions import TypedDict  # pydantic needs it on Python < 3.12

# Imported at run time: pydantic resolves the tool's annotations from this module.
from cuedeck.watch.reflects import Reflects  # noqa: TC001
from cuedeck.workspace import Workspace  # noqa: TC001
from cuedeck_search.settings import MAX_LIMIT


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


class Embedding(TypedDict):
    """Sections still without a vector, and about how long embedding them takes."""

    missing_sections: int
    seconds_left: float
    embedder: str


class ContextReply(TypedDict):
    """The results, the side that ranked them, and what embedding is still to do."""

    results: list[ContextResult]
    mode: str
    answered_by: str
    semantic_coverage: float | None
    embedding: Embedding | None
    note: str | None
    reflects: Reflects


def read_context(
    workspace: Workspace,
    query: Annotated[
        str,
        pydantic.Field(
            min_length=1, max_length=200, description="Words or a question, e.g. 'auth flow'"
        ),
    ],
    limit: Annotated[
        int | None, pydantic.Field(ge=1, le=MAX_LIMIT, description="Default [search] limit, 5")
    ] = None,
    mode: Annotated[
        Literal["keyword", "semantic", "hybrid"] | None,
        pydantic.Field(description="Default [search] mode, hybrid"),
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
) -> ContextReply:
    """Search docs, cards, markdown and code by keyword, meaning or both; best files first.

    Each result has the file's hash and tokens, its best sections (anchors, best first;
    line of the best) and the keyword and semantic parts of its score. answered_by says
    which side ranked them: keyword for hybrid until every section is embedded (semantic
    ranks the embedded files). embedding says what is still being embedded and about how
    long it takes. Then read_doc the top results.
    """
    from cuedeck.models import SearchFilters
    from cuedeck.watch.reflects import reflects
    from cuedeck_search.detached import embedding_note
    from cuedeck_search.searchers import answer as search

    chosen = mode if mode is not None else ("semantic" if semantic else None)
    wanted = SearchFilters()
    if filters is not None:
        wanted = SearchFilters(
            tags=tuple(filters.tags), priority=filters.priority, assignee=filters.assignee
        )
    answer = search(workspace, query, mode=chosen, limit=limit, filters=wanted)
    embedding: Embedding | None = None
    note = None
    if answer.missing:  # only the engine's answers miss vectors
        estimate = workspace.service("search").estimate(answer.missing)
        embedding = Embedding(
            missing_sections=answer.missing,
            seconds_left=round(estimate.seconds, 1),
            embedder=estimate.model_id,
        )
        note = embedding_note(answer, estimate, where="in the background of this server")
    return ContextReply(
        results=[
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
            for r in answer.results
        ],
        mode=answer.mode,
        answered_by=answer.answered_by,
        semantic_coverage=answer.semantic_coverage,
        embedding=embedding,
        note=note,
        reflects=reflects(workspace),
    )
