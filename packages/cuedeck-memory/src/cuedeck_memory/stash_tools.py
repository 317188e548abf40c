"""The stash's tools: set segments aside, search them, and bring them back.

Served like every memory tool (:mod:`cuedeck_memory.tools`, whose argument types and
reply budget they share).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from pydantic import Field

from cuedeck.errors import InvalidInput
from cuedeck.serving.reply import fit_reply
from cuedeck_memory import ranking, replies
from cuedeck_memory.listing import page_hits, page_segments
from cuedeck_memory.pruning import prune
from cuedeck_memory.segments import PROJECT_PATTERN, check_project
from cuedeck_memory.tools import (
    Cursor,
    FiltersArg,
    MaxTokens,
    ProjectId,
    reply_budget,
    store_of,
)

if TYPE_CHECKING:
    # cuedeck.plugins.tools.Tool supplies Workspace when it reads the signatures.
    from cuedeck.workspace import Workspace
    from cuedeck_memory.replies import ItemError


def context_stash(
    workspace: Workspace,
    project_id: ProjectId = None,
    query: Annotated[str | None, Field(description="Ranked match on segment text")] = None,
    filters: FiltersArg = None,
) -> replies.Stashed:
    """Move working segments matching a query and filters to the stash (pinned ones stay)."""
    store = store_of(workspace)
    project = store.project(project_id)
    parsed = ranking.parse_filters(filters)
    if not query and not parsed.given:
        raise InvalidInput(
            "give a query or filters: stashing everything is not a filter", field="query"
        )
    # Every match is stashed, not a page of them.
    found = ranking.find(store, project, query, parsed, stashed=False, limit=2**31)
    table = store.table
    pinned = [table.segment_id(r) for r in found.rowids if table.pinned[r]]
    wanted = [table.segment_id(r) for r in found.rowids if not table.pinned[r]]
    reply = prune(store, project, wanted, "stash", False, None) if wanted else None
    errors: list[ItemError] = [
        {"segment_id": i, "error": "pinned", "message": "pinned segments are not stashed"}
        for i in pinned
    ]
    return {
        "stashed_segments": reply["pruned_segments"] if reply else [],
        "tokens_stashed": reply["tokens_freed"] if reply else 0,
        "segments_matched": found.total,
        "errors": errors + (reply["errors"] if reply else []),
    }


def context_search_stashed(
    workspace: Workspace,
    project_id: Annotated[str | None, Field(pattern=PROJECT_PATTERN)] = None,
    query: Annotated[str | None, Field(description="Ranked search of segment text")] = None,
    filters: FiltersArg = None,
    limit: Annotated[int, Field(ge=1, le=1000)] = 50,
    max_tokens: MaxTokens = None,
    cursor: Cursor = None,
) -> replies.StashSearch:
    """Search stashed segments (read-only), ranked by query through the searchers.

    Without project_id every project is searched. total_matches counts every match;
    at most limit come back, paged to max_tokens. A hit carries its id, text, type,
    project, task, creation time, tags, file, tokens and score; context_retrieve_stashed
    returns segments whole.
    """
    store = store_of(workspace)
    parsed = ranking.parse_filters(filters)
    project = check_project(project_id) if project_id else None
    found = ranking.find(store, project, query, parsed, stashed=True, limit=limit)

    def made(budget: int) -> replies.StashSearch:
        segments, page = page_hits(
            store, found.rowids, budget, cursor, scores=found.scores, used=40
        )
        return {
            "segments": segments,
            "total_matches": found.total,
            "query": query,
            "ranking": found.ranking,
            "filters_applied": parsed.given,
            "page": page,
        }

    return fit_reply(workspace, reply_budget(store, max_tokens), made)


def context_retrieve_stashed(
    workspace: Workspace,
    project_id: ProjectId = None,
    query: Annotated[str | None, Field(description="Ranked search of segment text")] = None,
    filters: FiltersArg = None,
    move_to_active: bool = False,
    max_tokens: MaxTokens = None,
    cursor: Cursor = None,
) -> replies.Retrieved:
    """Fetch stashed segments by query and filters; move_to_active restores them."""
    store = store_of(workspace)
    project = store.project(project_id)
    parsed = ranking.parse_filters(filters)
    found = ranking.find(store, project, query, parsed, stashed=True, limit=1000)
    table = store.table
    ids = [table.segment_id(r) for r in found.rowids] if move_to_active else []

    def made(budget: int) -> replies.Retrieved:
        items, page = page_segments(
            store, found.rowids, budget, cursor, scores=found.scores, used=40
        )
        reply: replies.Retrieved = {
            "retrieved_segments": items,
            "segments_found": found.total,
            "ranking": found.ranking,
            "page": page,
        }
        if move_to_active:
            reply["moved_to_active"] = ids  # room for all of them; those moved, below
        return reply

    fitted = fit_reply(workspace, reply_budget(store, max_tokens), made)
    if move_to_active:
        from cuedeck_memory.pruning import move_to_working

        fitted["moved_to_active"] = move_to_working(store, project, ids)
    return fitted


# --- tasks -------------------------------------------------------------------------------
