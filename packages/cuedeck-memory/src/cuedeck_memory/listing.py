"""Lists of segments for replies: a task's rows newest first, and pages of segments.

Shared by the tools and ``cue memory``; items are :class:`~cuedeck_memory.replies.SegmentItem`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from cuedeck_memory.fitting import page, start_of
from cuedeck_memory.replies import hit_dict, restored_dict, segment_dict
from cuedeck_memory.segments import check_project

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from cuedeck_memory.replies import Page, RestoredSegment, SegmentItem, StashHit
    from cuedeck_memory.segments import Segment
    from cuedeck_memory.store import MemoryStore


#: Counters that never count more tokens than a text has UTF-8 bytes: o200k_base works
#: on bytes (a token is at least one), core's estimate gives under one per character.
BYTES_BOUND = frozenset({"o200k", "estimate"})


def segment_items(
    store: MemoryStore, segments: Sequence[Segment], rowids: Sequence[int] | None = None
) -> list[SegmentItem]:
    """Segments as reply dicts, with their refcounts."""
    table = store.table
    if rowids is None:
        rowids = [table.rowid(s.project_id, s.id) or -1 for s in segments]
    counts = table.refcounts([int(r) for r in rowids])
    return [segment_dict(s, counts.get(int(r), 0)) for s, r in zip(segments, rowids, strict=True)]


def page_segments(
    store: MemoryStore,
    rowids: Sequence[int],
    max_tokens: int,
    cursor: str | None,
    *,
    scores: Sequence[float | None] | None = None,
    used: int = 0,
) -> tuple[list[SegmentItem], Page]:
    """One page of the segments ``rowids`` as reply dicts, with their refcounts; texts
    are read only for what the page can hold."""

    def whole(segments: dict[int, Segment], window: list[int]) -> Callable[[int], Any]:
        counts = store.table.refcounts(window)
        return lambda rowid: segment_dict(segments[rowid], counts.get(rowid, 0))

    chosen, record = _page(store, rowids, max_tokens, cursor, scores, used, whole)
    return cast("list[SegmentItem]", chosen), record


def page_hits(
    store: MemoryStore,
    rowids: Sequence[int],
    max_tokens: int,
    cursor: str | None,
    *,
    scores: Sequence[float | None],
    used: int = 0,
) -> tuple[list[StashHit], Page]:
    """One page of a stash search's hits ``rowids`` (best first, with their scores)."""

    def hit(segments: dict[int, Segment], window: list[int]) -> Callable[[int], Any]:
        return lambda rowid: hit_dict(segments[rowid])

    chosen, record = _page(store, rowids, max_tokens, cursor, scores, used, hit)
    return cast("list[StashHit]", chosen), record


def page_restored(
    store: MemoryStore, rowids: Sequence[int], max_tokens: int, *, used: int = 0
) -> tuple[list[RestoredSegment], Page]:
    """The first page of the segments ``rowids`` as ``context_restore`` shows them."""

    def lean(segments: dict[int, Segment], window: list[int]) -> Callable[[int], Any]:
        return lambda rowid: restored_dict(segments[rowid])

    chosen, record = _page(store, rowids, max_tokens, None, None, used, lean)
    return cast("list[RestoredSegment]", chosen), record


def _page(
    store: MemoryStore,
    rowids: Sequence[int],
    max_tokens: int,
    cursor: str | None,
    scores: Sequence[float | None] | None,
    used: int,
    shape: Callable[[dict[int, Segment], list[int]], Callable[[int], Any]],
) -> tuple[list[dict[str, Any]], Page]:
    """A page of ``rowids``, each made by what ``shape`` returns for the window read."""
    start = start_of(cursor)
    # Items cost at least a few tokens each: never read far past what can fit.
    window = [int(r) for r in rowids[start : start + max(1, max_tokens // 8)]]
    make = shape(store.fetch(window), window)

    def item(n: int) -> dict[str, Any]:
        made = cast("dict[str, Any]", make(window[n - start]))
        if scores is not None and scores[n] is not None:
            made["score"] = round(float(scores[n] or 0.0), 4)
        return made

    counter = store.workspace.token_counter
    chosen, record = page(
        min(len(rowids), start + len(window)),
        item,
        counter.count,
        max_tokens,
        cursor,
        used=used,
        bytes_bound=getattr(counter, "name", None) in BYTES_BOUND,
    )
    end = start + len(chosen)
    record["total"] = len(rowids)
    record["next_cursor"] = str(end) if end < len(rowids) else None
    return chosen, record


def task_rows(
    store: MemoryStore,
    project: str,
    task: str | None,
    *,
    stashed: bool | None,
    pinned: bool = False,
) -> list[int]:
    """Rowids of ``task``'s segments in a tier (both when ``stashed`` is None; every
    task's when ``task`` is None), with the pinned working ones when ``pinned``; newest
    first."""
    import numpy as np

    from cuedeck_memory.ranking import newest_first

    check_project(project)
    table = store.table
    rows = table.rows(project, stashed=stashed)
    if task is not None:
        mine = table.task[rows] == table.values.find(task)
        if pinned:
            mine |= table.pinned[rows] & ~table.stashed[rows]
        rows = rows[mine]
    return [int(r) for r in newest_first(table, np.asarray(rows, np.int64))]
