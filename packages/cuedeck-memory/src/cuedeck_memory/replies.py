"""Reply shapes of the memory tools, and fitting them to a token budget (pages, id lists).

Every tool returns one of the typed dicts below, so each publishes its output schema. A
segment is returned in the reference's shape (``segment_id``, ``text``, ``type``, ...).
Lists of segments or candidates are paged: items are taken in order while the reply fits
``max_tokens`` (by the workspace's counter, the rest of the reply measured, not guessed);
``page.next_cursor`` is where the next call starts. A single item longer than the whole
budget is returned with its text cut to fit and ``text_truncated: true`` (``cue memory
show`` prints it whole).
"""

from __future__ import annotations

import json
from typing import (
    TYPE_CHECKING,
    Any,
    Literal,
    NotRequired,  # pydantic needs them on Python 3.11
)

from typing_extensions import TypedDict

from cuedeck.errors import InvalidInput
from cuedeck_memory.database import text_hash
from cuedeck_memory.segments import iso

if TYPE_CHECKING:
    from collections.abc import Callable

    from cuedeck_memory.segments import Segment

#: Tokens kept for the page record and the list's own syntax (measured: about 40).
FRAME_TOKENS = 60


class SegmentItem(TypedDict):
    """A segment as the memory tools return it."""

    segment_id: str
    text: str
    type: str
    project_id: str
    task_id: str | None
    created_at: str
    last_touched_at: str
    pinned: bool
    generation: str
    gc_survival_count: int
    refcount: int
    file_path: str | None
    line_range: list[int] | None
    tags: list[str]
    topic_id: str | None
    refs: list[str]
    tokens: int
    text_hash: str
    tier: str
    score: NotRequired[float]
    text_truncated: NotRequired[bool]


class Page(TypedDict):
    """Where a page of a list starts and ends; ``next_cursor`` is None on the last."""

    returned: int
    total: int
    offset: int
    next_cursor: str | None
    max_tokens: int


class ItemError(TypedDict):
    """Why one id of a call was not done (``not_found``, ``pinned``, ``already_stashed``)."""

    segment_id: str
    error: str
    message: str


class Candidate(TypedDict):
    """A segment GC may prune, with its score in [0, 1] and the factors behind it."""

    segment_id: str
    score: float
    tokens: int
    reason: str
    segment_type: str
    age_hours: float
    factors: dict[str, float]


class UsageMetrics(TypedDict):
    """What the working set holds."""

    total_tokens: int
    measured_tokens: int
    total_segments: int
    tokens_by_type: dict[str, int]
    segments_by_type: dict[str, int]
    tokens_by_task: dict[str, int]
    oldest_segment_age_hours: float
    newest_segment_age_hours: float
    pinned_segments_count: int
    pinned_tokens: int
    usage_percent: float
    token_limit: int
    estimated_remaining_tokens: int


class HealthScore(TypedDict):
    """``100 · (0.5 · usage + 0.25 · distribution + 0.25 · age)``, factors in [0, 1]."""

    score: float
    usage_percent: float
    factors: dict[str, float]
    weights: dict[str, float]


class PruneArguments(TypedDict):
    """The arguments of the suggested context_gc_prune call."""

    project_id: str
    segment_ids: list[str]
    action: str


class SuggestedAction(TypedDict):
    """The call a warning suggests, and its measured effect."""

    tool: str
    arguments: PruneArguments
    segments: int
    tokens_freed: int
    usage_percent_after: float
    complete: NotRequired[bool]
    segments_in_plan: NotRequired[int]
    rest: NotRequired[str]


class Recommendation(TypedDict):
    """Advice with a priority (``low``, ``warning``, ``high``, ``urgent``)."""

    priority: str
    message: str
    action: SuggestedAction | None


class UsageWarning(TypedDict):
    """A usage threshold crossed (60, 80, 90 %)."""

    level: str
    usage_percent: float
    message: str


class ImpactSummary(TypedDict):
    """What stashing every candidate would do."""

    pruning_candidates_count: int
    estimated_tokens_freed: int
    estimated_usage_after_pruning: float


class UsageReport(TypedDict):
    """The reply of ``context_analyze_usage``."""

    project_id: str
    task_id: str | None
    usage_metrics: UsageMetrics
    health_score: HealthScore
    recommendations: list[Recommendation]
    warnings: list[UsageWarning]
    suggested_actions: list[SuggestedAction]
    impact_summary: ImpactSummary
    pruning_candidates_count: int
    captured_segments: NotRequired[list[str]]


class WorkingSetInfo(TypedDict):
    """The working set's project, task and size."""

    project_id: str
    task_id: str | None
    total_tokens: int
    last_updated: str | None


class WorkingSet(TypedDict):
    """The reply of ``context_get_working_set``."""

    working_set: WorkingSetInfo
    segments: list[SegmentItem]
    total_tokens: int
    segment_count: int
    page: Page


class TaskContext(TypedDict):
    """The reply of ``context_get_task_context``."""

    task_id: str
    segments: list[SegmentItem]
    total_tokens: int
    segment_count: int
    page: Page
    snapshot_id: str | None  # the task's latest snapshot: files and delta come from it
    files: dict[str, str]
    delta: list[dict[str, Any]]  # what changed in those files since, as hunks (page 1)
    delta_truncated: bool


class Projects(TypedDict):
    """The reply of ``context_list_projects``."""

    projects: list[str]


class PruningPlan(TypedDict):
    """The best-scored candidates that free the target: the first ``candidates_count``."""

    candidates_count: int
    total_tokens_freed: int
    target_tokens: int
    target_met: bool
    stash_segments: list[str]
    delete_segments: list[str]
    reason: str
    stash_segments_complete: NotRequired[bool]


class GcAnalysis(TypedDict):
    """The reply of ``context_gc_analyze``."""

    total_candidates: int
    estimated_tokens_freed: int
    roots: int
    reachable: int
    working_tokens: int
    pruning_candidates: list[Candidate]
    page: Page
    pruning_plan: NotRequired[PruningPlan]


class Pruned(TypedDict):
    """The reply of ``context_gc_prune``; a first delete asks for confirmation."""

    pruned_segments: list[str]
    tokens_freed: int
    action: str
    errors: list[ItemError]
    requires_confirmation: NotRequired[bool]
    confirmation_token: NotRequired[str]
    expires_in_seconds: NotRequired[int]
    segment_ids: NotRequired[list[str]]
    tokens: NotRequired[int]
    warning_message: NotRequired[str]


class Pinned(TypedDict):
    """The reply of ``context_gc_pin``."""

    pinned_segments: list[str]
    errors: list[ItemError]


class Unpinned(TypedDict):
    """The reply of ``context_gc_unpin``."""

    unpinned_segments: list[str]
    errors: list[ItemError]


class Stashed(TypedDict):
    """The reply of ``context_stash``."""

    stashed_segments: list[str]
    tokens_stashed: int
    segments_matched: int
    errors: list[ItemError]


class StashSearch(TypedDict):
    """The reply of ``context_search_stashed``: ``total_matches`` counts every match."""

    segments: list[SegmentItem]
    total_matches: int
    query: str | None
    ranking: str
    filters_applied: dict[str, Any]
    page: Page


class Retrieved(TypedDict):
    """The reply of ``context_retrieve_stashed``."""

    retrieved_segments: list[SegmentItem]
    segments_found: int
    ranking: str
    page: Page
    moved_to_active: NotRequired[list[str]]


class CurrentTask(TypedDict):
    """The reply of ``context_set_current_task``."""

    project_id: str
    task_id: str | None
    previous_task_id: str | None
    active_card: str | None


class Snapshot(TypedDict):
    """A task snapshot (``context_create_task_snapshot``'s reply, a listing's row)."""

    snapshot_id: str
    task_id: str | None
    name: str
    created_at: str
    segments_snapshot: int
    tokens_snapshot: int
    files: dict[str, str]  # the files the task touched then (masked path: sha256)
    commit: str | None  # git's HEAD then (None outside git)


class Captured(TypedDict):
    """The reply of ``context_capture``: every new id, and the usage after."""

    segment_ids: list[str]
    captured: int
    tokens: int
    usage_metrics: UsageMetrics
    health_score: HealthScore
    warnings: list[UsageWarning]
    suggested_actions: list[SuggestedAction]


class SnapshotRef(TypedDict):
    """The snapshot a restore drew on."""

    snapshot_id: str
    name: str
    created_at: str


class Restored(TypedDict):
    """The reply of ``context_restore``."""

    project_id: str
    task_id: str | None
    snapshot: SnapshotRef | None
    segments: list[SegmentItem]
    pinned: int
    candidates: int
    tokens: int
    page: Page


Action = Literal["stash", "delete"]


def segment_dict(segment: Segment, refcount: int = 0) -> SegmentItem:
    """``segment`` as the memory tools return it."""
    return {
        "segment_id": segment.id,
        "text": segment.text,
        "type": segment.type,
        "project_id": segment.project_id,
        "task_id": segment.task_id,
        "created_at": iso(segment.created_at),
        "last_touched_at": iso(segment.last_touched_at or segment.created_at),
        "pinned": segment.pinned,
        "generation": segment.generation,
        "gc_survival_count": segment.gc_survival_count,
        "refcount": refcount,
        "file_path": segment.file_path,
        "line_range": list(segment.line_range) if segment.line_range else None,
        "tags": list(segment.tags),
        "topic_id": segment.topic_id,
        "refs": list(segment.refs),
        "tokens": segment.tokens,
        "text_hash": text_hash(segment.text),
        "tier": segment.tier,
    }


def start_of(cursor: str | None) -> int:
    """The offset a cursor names (None: the start)."""
    if cursor is None or cursor == "":
        return 0
    if not cursor.isdigit():
        raise InvalidInput(f"{cursor!r} is not a cursor this tool returned", field="cursor")
    return int(cursor)


def page(
    total: int,
    item: Callable[[int], dict[str, Any]],
    count: Callable[[str], int],
    max_tokens: int,
    cursor: str | None = None,
    *,
    used: int = 0,
) -> tuple[list[dict[str, Any]], Page]:
    """Items ``item(n)`` from ``cursor`` on (of ``total``) that fit ``max_tokens``,
    ``used`` of them measured for the rest of the reply; and the page record. Items are
    made only as far as they fit."""
    start = start_of(cursor)
    budget = max(1, max_tokens - FRAME_TOKENS - used)
    chosen: list[dict[str, Any]] = []
    spent = 0
    for n in range(start, total):
        current = item(n)
        cost = count(json.dumps(current, ensure_ascii=False)) + 1  # and its comma
        if spent + cost > budget:
            if not chosen:
                chosen.append(_cut(current, count, budget, max_tokens - budget))
            break
        chosen.append(current)
        spent += cost
    end = start + len(chosen)
    record: Page = {
        "returned": len(chosen),
        "total": total,
        "offset": start,
        "next_cursor": str(end) if end < total else None,
        "max_tokens": max_tokens,
    }
    return chosen, record


def measure(reply: Any, count: Callable[[str], int]) -> int:
    """Tokens of a reply as it is sent (unescaped JSON)."""
    return count(json.dumps(reply, ensure_ascii=False))


def fit_ids(
    reply: Any,
    ids: list[str],
    max_tokens: int,
    count: Callable[[str], int],
    *,
    copies: int = 1,
) -> int:
    """Cut ``ids`` (a list inside ``reply``, best first) in place until ``reply`` fits
    ``max_tokens``; how many were kept. ``copies``: how often the list is in the reply.

    Counts the reply without the ids, a sample of them and the result, never the whole
    long reply (counting is the cost here).
    """
    if not ids:
        return 0
    whole = list(ids)
    ids.clear()
    frame = measure(reply, count)
    sample = whole[:64]
    per_id = max(1.0, count(json.dumps(sample)) / len(sample))
    keep = max(0, min(len(whole), int((max_tokens - frame) / (per_id * copies))))
    ids.extend(whole[:keep])
    while keep and measure(reply, count) > max_tokens:
        keep = keep * 9 // 10
        del ids[keep:]
    return keep


#: The least of a text a cut item shows: fewer characters say nothing.
MIN_TEXT = 40


def _cut(
    item: dict[str, Any], count: Callable[[str], int], budget: int, rest: int
) -> dict[str, Any]:
    """``item`` with its text shortened until it fits ``budget`` (marked as cut); a
    budget that cannot hold the item's fields and a little of its text is refused with
    the smallest that can (``rest``: what the reply spends besides its items)."""
    text = item.get("text")
    if not isinstance(text, str):
        return item
    shorter = dict(item, text_truncated=True)
    least = text[:MIN_TEXT]
    shorter["text"] = least
    needed = count(json.dumps(shorter, ensure_ascii=False))
    if needed > budget:
        raise InvalidInput(
            f"max_tokens {budget + rest} cannot hold one segment: its fields and the start "
            f"of its text need {needed + rest}; ask for at least that",
            field="max_tokens",
            needed=needed + rest,
        )
    low, high = len(least), len(text)
    while low < high:  # the longest prefix that fits
        middle = (low + high + 1) // 2
        shorter["text"] = text[:middle]
        if count(json.dumps(shorter, ensure_ascii=False)) <= budget:
            low = middle
        else:
            high = middle - 1
    shorter["text"] = text[:low]
    return shorter
