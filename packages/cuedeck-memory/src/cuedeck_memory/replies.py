"""Reply shapes of the memory tools.

Every tool returns one of the typed dicts below, so each publishes its output schema. A
segment is returned in the reference's shape (``segment_id``, ``text``, ``type``, ...).
Lists of segments or candidates are paged (:mod:`cuedeck_memory.fitting`).
"""

from __future__ import annotations

from typing import (
    TYPE_CHECKING,
    Any,
    Literal,
    NotRequired,  # pydantic needs them on Python 3.11
)

from typing_extensions import TypedDict

from cuedeck_memory.database import text_hash
from cuedeck_memory.segments import iso

if TYPE_CHECKING:
    from cuedeck_memory.segments import Segment


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


class StashHit(TypedDict):
    """A stashed segment as a search finds it: what tells it apart, and its text
    (``context_retrieve_stashed`` returns segments whole)."""

    segment_id: str
    text: str
    type: str
    project_id: str
    task_id: str | None
    created_at: str
    tags: list[str]
    file_path: str | None
    tokens: int
    score: NotRequired[float]
    text_truncated: NotRequired[bool]


class RestoredSegment(TypedDict):
    """A segment as ``context_restore`` returns it: what a session resumes from, without
    the bookkeeping (hash, GC counters, tier) the other tools return."""

    segment_id: str
    text: str
    type: str
    task_id: str | None
    created_at: str
    pinned: bool
    tags: list[str]
    file_path: str | None
    tokens: int
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

    segments: list[StashHit]
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
    held_by: Holder | None  # the live claim on the task's card then (None: nobody held it)


class Holder(TypedDict):
    """Who held a task's card when it was snapshot: agent, since and until when."""

    agent: str
    since: str
    until: str


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
    segments: list[RestoredSegment]
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


def restored_dict(segment: Segment) -> RestoredSegment:
    """``segment`` as ``context_restore`` returns it."""
    return {
        "segment_id": segment.id,
        "text": segment.text,
        "type": segment.type,
        "task_id": segment.task_id,
        "created_at": iso(segment.created_at),
        "pinned": segment.pinned,
        "tags": list(segment.tags),
        "file_path": segment.file_path,
        "tokens": segment.tokens,
    }


def hit_dict(segment: Segment) -> StashHit:
    """``segment`` as a stash search returns it."""
    return {
        "segment_id": segment.id,
        "text": segment.text,
        "type": segment.type,
        "project_id": segment.project_id,
        "task_id": segment.task_id,
        "created_at": iso(segment.created_at),
        "tags": list(segment.tags),
        "file_path": segment.file_path,
        "tokens": segment.tokens,
    }
