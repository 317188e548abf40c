"""Reply shapes of the memory tools, and fitting them to a token budget (pages, id lists).

A segment is returned in the reference's shape (``segment_id``, ``text``, ``type``,
...). Lists of segments or candidates are paged: items are taken in order while the
reply fits ``max_tokens`` (by the workspace's counter); ``page.next_cursor`` is where
the next call starts. A single item longer than the whole budget is returned with its
text cut to fit and ``text_truncated: true`` (``cue memory show`` prints it whole).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from cuedeck.errors import InvalidInput
from cuedeck_memory.segments import iso

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from cuedeck_memory.segments import Segment

#: Tokens kept for the reply around a page (keys, counts, cursor).
FRAME_TOKENS = 200


def segment_dict(segment: Segment, refcount: int = 0) -> dict[str, Any]:
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
        "text_hash": segment.text_hash,
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
    items: Sequence[dict[str, Any]],
    count: Callable[[str], int],
    max_tokens: int,
    cursor: str | None = None,
    *,
    used: int = 0,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The items from ``cursor`` on that fit ``max_tokens`` (``used`` already spent by
    the rest of the reply), and the page record for the reply."""
    start = start_of(cursor)
    budget = max(1, max_tokens - FRAME_TOKENS - used)
    chosen: list[dict[str, Any]] = []
    spent = 0
    for item in items[start:]:
        cost = count(json.dumps(item, ensure_ascii=False))
        if spent + cost > budget:
            if not chosen:
                chosen.append(_cut(item, count, budget))
                spent = budget
            break
        chosen.append(item)
        spent += cost
    end = start + len(chosen)
    record = {
        "returned": len(chosen),
        "total": len(items),
        "offset": start,
        "next_cursor": str(end) if end < len(items) else None,
        "max_tokens": max_tokens,
    }
    return chosen, record


def fit_ids(
    reply: dict[str, Any],
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
    frame = count(json.dumps(reply, ensure_ascii=False))
    sample = whole[:64]
    per_id = max(1.0, count(json.dumps(sample)) / len(sample))
    keep = max(0, min(len(whole), int((max_tokens - frame) / (per_id * copies))))
    ids.extend(whole[:keep])
    while keep and count(json.dumps(reply, ensure_ascii=False)) > max_tokens:
        keep = keep * 9 // 10
        del ids[keep:]
    return keep


def _cut(item: dict[str, Any], count: Callable[[str], int], budget: int) -> dict[str, Any]:
    """``item`` with its text shortened until it fits ``budget`` (marked as cut)."""
    text = item.get("text")
    if not isinstance(text, str):
        return item
    shorter = dict(item, text_truncated=True)
    low, high = 0, len(text)
    while low < high:  # the longest prefix that fits
        middle = (low + high + 1) // 2
        shorter["text"] = text[:middle]
        if count(json.dumps(shorter, ensure_ascii=False)) <= budget:
            low = middle
        else:
            high = middle - 1
    shorter["text"] = text[:low]
    return shorter
