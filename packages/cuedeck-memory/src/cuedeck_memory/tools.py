"""The memory tools: the reference API (same names and parameters) plus capture and restore.

Typed functions served to MCP, the CLI and Python alike. Lists of segments page to
``max_tokens`` (``[memory] max_tokens`` by default) with ``cursor``. Errors are CueErrors:
1004 bad input, 1001 unknown segment, 1009 a delete without a valid confirmation token.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any, Literal, cast

from pydantic import Field
from typing_extensions import TypedDict  # pydantic needs it on Python 3.11

from cuedeck.errors import InvalidInput
from cuedeck.serving.reply import fit_reply
from cuedeck_memory import gc, replies, usage
from cuedeck_memory.capture import capture_segments
from cuedeck_memory.listing import page_segments, task_rows
from cuedeck_memory.pruning import prune, set_pinned
from cuedeck_memory.segments import PROJECT_PATTERN
from cuedeck_memory.task_state import restore, set_current_task, snapshot

if TYPE_CHECKING:
    # cuedeck.plugins.tools.Tool supplies Workspace when it reads the signatures.
    from cuedeck.workspace import Workspace
    from cuedeck_memory.store import MemoryStore

ProjectId = Annotated[
    str | None,
    Field(pattern=PROJECT_PATTERN, description="Project identifier"),
]
OptionalTask = Annotated[str | None, Field(max_length=200, description="Default: the current task")]
Descriptors = Annotated[
    dict[str, Any] | str | None,
    Field(description="recent_messages, current_file, token_usage"),
]
FiltersArg = Annotated[
    dict[str, Any] | str | None,
    Field(description="file_path, task_id, tags, type, created_after, created_before"),
]
#: Replies are paged, never unbounded: a budget above the cap is refused (1004; checked
#: in :func:`reply_budget` rather than published, as every guard cap).
MAX_REPLY_TOKENS = 100_000
MaxTokens = Annotated[int | None, Field(ge=100, description="Reply budget in tokens")]
Cursor = Annotated[str | None, Field(description="next_cursor of the previous page")]
SegmentIds = Annotated[list[str], Field(min_length=1, max_length=10_000)]


class SegmentInput(TypedDict, total=False):
    """A segment; only text is required."""

    text: Annotated[str, Field(min_length=1)]
    type: Annotated[str, Field(description="message, code, log, decision, note, summary")]
    task_id: str | None
    tags: list[str]
    file_path: str | None
    line_range: Annotated[list[int] | None, Field(min_length=2, max_length=2)]
    topic_id: str | None
    refs: Annotated[list[str], Field(description="Segment, card or doc ids")]
    pinned: bool


def store_of(workspace: Workspace) -> MemoryStore:
    return cast("MemoryStore", workspace.service("context"))


def reply_budget(store: MemoryStore, max_tokens: int | None) -> int:
    if max_tokens is not None and max_tokens > MAX_REPLY_TOKENS:
        raise InvalidInput(
            f"max_tokens is at most {MAX_REPLY_TOKENS:,}: replies are paged (pass cursor)",
            field="max_tokens",
        )
    return max_tokens or store.settings.max_tokens


# --- monitoring --------------------------------------------------------------------------


def context_analyze_usage(
    workspace: Workspace,
    project_id: ProjectId = None,
    context_descriptors: Descriptors = None,
    task_id: OptionalTask = None,
    token_limit: Annotated[int | None, Field(ge=1)] = None,
    max_tokens: MaxTokens = None,
) -> replies.UsageReport:
    """Analyze context usage: metrics, health score, recommendations and warnings.

    Warnings at 60/80/90% name the call to make and its measured effect. Descriptors'
    recent_messages are captured (deduplicated), current_file becomes a GC root and
    token_usage overrides the measured usage. token_limit defaults to [memory] token_limit.
    """
    store = store_of(workspace)
    project = store.project(project_id)
    described = usage.ingest(store, project, context_descriptors, task_id)

    def made(budget: int) -> replies.UsageReport:
        reply = usage.report(
            store,
            project,
            task_id=task_id,
            token_limit=token_limit,
            descriptors=described,
            max_tokens=budget,
            reserved=8 * len(described.captured),  # their ids are added below
        )
        if described.captured:
            reply["captured_segments"] = list(described.captured)
        return cast("replies.UsageReport", reply)

    # What was captured is always said: its ids come whole, beyond max_tokens if need be.
    return fit_reply(workspace, reply_budget(store, max_tokens), made, written=True)


def context_get_working_set(
    workspace: Workspace,
    project_id: ProjectId = None,
    task_id: OptionalTask = None,
    max_tokens: MaxTokens = None,
    cursor: Cursor = None,
) -> replies.WorkingSet:
    """Get the working set: the current task's working segments (and pinned ones)."""
    store = store_of(workspace)
    project = store.project(project_id)
    task = task_id or store.current_task(project)
    found = task_rows(store, project, task, stashed=False, pinned=True)
    table = store.table
    total = int(table.tokens[found].sum()) if found else 0
    last = float(table.touched[found].max()) if found else None
    from cuedeck_memory.segments import iso

    def made(budget: int) -> replies.WorkingSet:
        segments, page = page_segments(store, found, budget, cursor, used=60)
        return {
            "working_set": {
                "project_id": project,
                "task_id": task,
                "total_tokens": total,
                "last_updated": iso(last) if last else None,
            },
            "segments": segments,
            "total_tokens": total,
            "segment_count": len(found),
            "page": page,
        }

    return fit_reply(workspace, reply_budget(store, max_tokens), made)


def context_get_task_context(
    workspace: Workspace,
    project_id: ProjectId = None,
    task_id: OptionalTask = None,
    max_tokens: MaxTokens = None,
    cursor: Cursor = None,
) -> replies.TaskContext:
    """Get every segment of a task, from both tiers (working and stashed).

    With a snapshot of the task: the hashes of the files it touched then, and what
    changed in them since, as hunks (delta).
    """
    store = store_of(workspace)
    project = store.project(project_id)
    task = task_id or store.current_task(project)
    if task is None:
        raise InvalidInput("no task_id given and the project has no current task", field="task_id")
    found = task_rows(store, project, task, stashed=None)
    from cuedeck_memory.touched import delta_since

    latest = next((r for r in reversed(store.snapshots(project)) if r.get("task_id") == task), None)
    files: dict[str, str] = dict((latest or {}).get("files") or {})

    def made(budget: int) -> replies.TaskContext:
        segments, page = page_segments(store, found, budget, cursor, used=30)
        delta: list[dict[str, Any]] = []
        left_out = False
        if latest is not None and files and cursor is None:
            # What changed in the task's files since its latest snapshot, in what the
            # segments leave of the budget.
            used = sum(workspace.count_tokens(json.dumps(s, ensure_ascii=False)) for s in segments)
            delta, left_out = delta_since(workspace, latest, max(budget - used, 0))
        return {
            "task_id": task,
            "segments": segments,
            "total_tokens": int(store.table.tokens[found].sum()) if found else 0,
            "segment_count": len(found),
            "page": page,
            "snapshot_id": latest.get("snapshot_id") if latest is not None else None,
            "files": files,
            "delta": delta,
            "delta_truncated": left_out,
        }

    return fit_reply(workspace, reply_budget(store, max_tokens), made)


def context_list_projects(workspace: Workspace) -> replies.Projects:
    """List every project id with memory in this workspace."""
    return {"projects": store_of(workspace).projects()}


# --- pruning -----------------------------------------------------------------------------


def context_gc_analyze(
    workspace: Workspace,
    project_id: ProjectId = None,
    context_descriptors: Descriptors = None,
    task_id: OptionalTask = None,
    target_tokens: Annotated[int | None, Field(ge=1)] = None,
    max_tokens: MaxTokens = None,
    cursor: Cursor = None,
) -> replies.GcAnalysis:
    """Find pruning candidates (score, tokens, age, reason); with target_tokens, a plan.

    Roots (recent messages and decisions of the current task, the current file's
    segments, pinned ones, the active card's and its dependencies') and what they reach
    are never candidates. The plan says whether the target is met or only partly.
    """
    store = store_of(workspace)
    project = store.project(project_id)
    described = usage.ingest(store, project, context_descriptors, task_id)
    analysis = gc.analyze(store, project, task_id=task_id, current_file=described.current_file)
    count = store.workspace.token_counter.count
    from cuedeck_memory.fitting import fit_ids, measure, page

    def made(budget: int) -> replies.GcAnalysis:
        reply: dict[str, Any] = {
            "total_candidates": len(analysis.candidates),
            "estimated_tokens_freed": int(analysis.candidate_tokens.sum()),
            "roots": len(analysis.roots),
            "reachable": len(analysis.reached),
            "working_tokens": analysis.working_tokens,
        }
        if target_tokens is not None:
            proposal = gc.plan(analysis, target_tokens, ids_at_most=budget)
            reply["pruning_plan"] = proposal
            # The plan's ids are its first candidates_count candidates, best first: when
            # they do not all fit (half the budget), the pages of candidates hold the rest.
            kept = fit_ids(reply, proposal["stash_segments"], budget // 2, count)
            if kept < proposal["candidates_count"]:
                proposal["stash_segments_complete"] = False
        reply["page"] = {
            "returned": 0, "total": 0, "offset": 0, "next_cursor": None, "max_tokens": 0
        }  # fmt: skip
        reply["pruning_candidates"], reply["page"] = page(
            len(analysis.candidates),
            analysis.candidate,
            count,
            budget,
            cursor,
            used=measure(reply, count),
        )
        return cast("replies.GcAnalysis", reply)

    return fit_reply(workspace, reply_budget(store, max_tokens), made)


def context_gc_prune(
    workspace: Workspace,
    segment_ids: SegmentIds,
    action: Literal["stash", "delete"],
    project_id: ProjectId = None,
    confirm: bool = False,
    confirmation_token: Annotated[
        str | None, Field(description="The token a first delete call returned")
    ] = None,
) -> replies.Pruned:
    """Stash (reversible) or delete segments; pinned or unknown ids are listed in errors.

    Delete takes two calls: with confirm=true the first answers requires_confirmation
    and a single-use token (5 minutes, bound to the project, action and these exact
    ids); the second, with that token, deletes. Each prune counts as a GC run.
    """
    store = store_of(workspace)
    project = store.project(project_id)
    return prune(store, project, segment_ids, action, confirm, confirmation_token)


def context_gc_pin(
    workspace: Workspace, segment_ids: SegmentIds, project_id: ProjectId = None
) -> replies.Pinned:
    """Pin segments: GC never prunes them, and a card's pinned segments join its scene."""
    store = store_of(workspace)
    done, errors = set_pinned(store, store.project(project_id), segment_ids, True)
    return {"pinned_segments": done, "errors": errors}


def context_gc_unpin(
    workspace: Workspace, segment_ids: SegmentIds, project_id: ProjectId = None
) -> replies.Unpinned:
    """Unpin segments so that GC may prune them again."""
    store = store_of(workspace)
    done, errors = set_pinned(store, store.project(project_id), segment_ids, False)
    return {"unpinned_segments": done, "errors": errors}


# --- stashing ----------------------------------------------------------------------------


def context_set_current_task(
    workspace: Workspace,
    project_id: ProjectId = None,
    task_id: Annotated[str | None, Field(max_length=200, description="None clears it")] = None,
) -> replies.CurrentTask:
    """Set the project's current task; a card id also activates that card (cue card activate)."""
    store = store_of(workspace)
    return set_current_task(store, store.project(project_id), task_id)


def context_create_task_snapshot(
    workspace: Workspace,
    project_id: ProjectId = None,
    task_id: OptionalTask = None,
    name: Annotated[str | None, Field(max_length=200)] = None,
    files: Annotated[
        list[str] | None,
        Field(
            max_length=500,
            description="Files the task touched (default: those that differ from git's "
            "HEAD and those its card cites); their hashes are recorded",
        ),
    ] = None,
) -> replies.Snapshot:
    """Snapshot a task's segments and pins under a name, persisted and listable.

    It records the hashes of the files the task touched: build_scene(since=snapshot_id)
    and context_get_task_context then show what changed since, as hunks.
    """
    from cuedeck_memory.touched import touched_files

    store = store_of(workspace)
    project = store.project(project_id)
    task = task_id or store.current_task(project)
    hashes, commit = touched_files(workspace, task, files)
    return snapshot(store, project, task_id, name, hashes, commit)


def context_capture(
    workspace: Workspace,
    segments: Annotated[list[SegmentInput], Field(min_length=1, max_length=10_000)],
    project_id: ProjectId = None,
    task_id: OptionalTask = None,
    token_limit: Annotated[int | None, Field(ge=1)] = None,
    max_tokens: MaxTokens = None,
) -> replies.Captured:
    """Capture segments: their ids, and the usage after with its advice.

    Secrets are masked before anything is written ([memory] mask_on_capture).
    """
    store = store_of(workspace)
    project = store.project(project_id)
    captured = capture_segments(store, project, cast("list[dict[str, Any]]", segments), task_id)

    def made(budget: int) -> replies.Captured:
        # Every new id is returned; the advice gets what the budget leaves.
        after = usage.report(
            store,
            project,
            task_id=task_id,
            token_limit=token_limit,
            max_tokens=budget,
            reserved=8 * len(captured),
        )
        return {
            "segment_ids": [s.id for s in captured],
            "captured": len(captured),
            "tokens": sum(s.tokens for s in captured),
            "usage_metrics": after["usage_metrics"],
            "health_score": after["health_score"],
            "warnings": after["warnings"],
            "suggested_actions": after["suggested_actions"],
        }

    # What was captured is always said: its ids come whole, beyond max_tokens if need be.
    return fit_reply(workspace, reply_budget(store, max_tokens), made, written=True)


def context_restore(
    workspace: Workspace,
    project_id: ProjectId = None,
    task_id: OptionalTask = None,
    max_tokens: MaxTokens = None,
) -> replies.Restored:
    """The current task's pins, working set and latest snapshot, fitted to max_tokens.

    What to call at session start or when the working set is empty.
    """
    store = store_of(workspace)
    project = store.project(project_id)
    return fit_reply(
        workspace,
        reply_budget(store, max_tokens),
        lambda budget: restore(store, project, task_id, budget),
    )


__all__ = [
    "context_analyze_usage",
    "context_capture",
    "context_create_task_snapshot",
    "context_gc_analyze",
    "context_gc_pin",
    "context_gc_prune",
    "context_gc_unpin",
    "context_get_task_context",
    "context_get_working_set",
    "context_list_projects",
    "context_restore",
    "context_set_current_task",
]
