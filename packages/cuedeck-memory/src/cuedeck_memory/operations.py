"""What the memory tools do to the store: capture, pin, prune, tasks, snapshots, restore.

Shared by the tools and ``cue memory``; replies are the typed dicts of
:mod:`cuedeck_memory.replies`.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any, cast

from cuedeck import confirmation
from cuedeck.errors import InvalidInput
from cuedeck.layout import CARD_ID, card_path
from cuedeck_memory.replies import page, segment_dict
from cuedeck_memory.segments import Segment, check_project, iso

if TYPE_CHECKING:
    from collections.abc import Sequence

    from cuedeck_memory.replies import (
        CurrentTask,
        ItemError,
        Page,
        Pruned,
        Restored,
        SegmentItem,
        Snapshot,
    )
    from cuedeck_memory.store import MemoryStore


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
    """One page of the segments ``rowids`` as reply dicts; texts are read only for what
    the page can hold."""
    from cuedeck_memory.replies import start_of

    start = start_of(cursor)
    # Items cost at least a few tokens each: never read far past what can fit.
    window = [int(r) for r in rowids[start : start + max(1, max_tokens // 8)]]
    fetched = store.fetch(window)
    counts = store.table.refcounts(window)

    def item(n: int) -> dict[str, Any]:
        rowid = window[n - start]
        made = cast("dict[str, Any]", segment_dict(fetched[rowid], counts.get(rowid, 0)))
        if scores is not None and scores[n] is not None:
            made["score"] = round(float(scores[n] or 0.0), 4)
        return made

    chosen, record = page(
        min(len(rowids), start + len(window)),
        item,
        store.workspace.token_counter.count,
        max_tokens,
        cursor,
        used=used,
    )
    end = start + len(chosen)
    record["total"] = len(rowids)
    record["next_cursor"] = str(end) if end < len(rowids) else None
    return cast("list[SegmentItem]", chosen), record


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


def capture_segments(
    store: MemoryStore, project: str, inputs: Sequence[dict[str, Any]], task_id: str | None
) -> list[Segment]:
    """Write captured segments (the store masks every string); the segments written."""
    check_project(project)
    default_task = task_id or store.current_task(project)
    drafts = []
    for n, raw in enumerate(inputs):
        text = raw.get("text")
        if not isinstance(text, str) or not text.strip():
            raise InvalidInput("a segment needs a non-empty text", field=f"segments.{n}.text")
        line_range = raw.get("line_range")
        drafts.append(
            Segment(
                id="",
                type=str(raw.get("type") or "note"),
                text=text,
                project_id=project,
                created_at=0.0,
                task_id=raw.get("task_id") or default_task,
                tags=tuple(raw.get("tags") or ()),
                file_path=raw.get("file_path"),
                line_range=(int(line_range[0]), int(line_range[1])) if line_range else None,
                topic_id=raw.get("topic_id"),
                refs=tuple(raw.get("refs") or ()),
                pinned=bool(raw.get("pinned", False)),
            )
        )
    return store.add(project, drafts)


def set_pinned(
    store: MemoryStore, project: str, ids: Sequence[str], pinned: bool
) -> tuple[list[str], list[ItemError]]:
    """Pin or unpin segments; the ids done and an error per unknown id."""
    check_project(project)
    done, _, missing = store.set_fields(project, ids, {"pinned": int(pinned)})
    return done, [_unknown(i, project) for i in missing]


def _unknown(segment_id: str, project: str) -> ItemError:
    return {
        "segment_id": segment_id,
        "error": "not_found",
        "message": f"no segment {segment_id!r} in project {project!r}",
    }


def _pinned(segment_id: str) -> ItemError:
    return {
        "segment_id": segment_id,
        "error": "pinned",
        "message": "pinned segments cannot be pruned (context_gc_unpin first)",
    }


def prune(
    store: MemoryStore,
    project: str,
    ids: Sequence[str],
    action: str,
    confirm: bool,
    token: str | None,
) -> Pruned:
    """Stash or delete ``ids`` (see ``context_gc_prune``); counts as one GC run."""
    check_project(project)
    if action == "stash":
        stashed, refused, missing = store.set_fields(
            project,
            ids,
            {"tier": "stashed"},
            allow=lambda pinned, in_stash: not pinned and not in_stash,
        )
        table = store.table
        errors: list[ItemError] = [_unknown(i, project) for i in missing]
        for segment_id in refused:
            rowid = table.rowid(project, segment_id)
            if rowid is not None and table.pinned[rowid]:
                errors.append(_pinned(segment_id))
            else:
                errors.append(
                    {
                        "segment_id": segment_id,
                        "error": "already_stashed",
                        "message": "already stashed",
                    }
                )
        freed = sum(int(table.tokens[table.rowid(project, i) or 0]) for i in stashed)
        store.survived(project)
        return {
            "pruned_segments": stashed,
            "tokens_freed": freed,
            "action": "stashed",
            "errors": errors,
        }
    table = store.table
    errors = []
    allowed: list[tuple[str, int]] = []
    for segment_id in dict.fromkeys(ids):
        rowid = table.rowid(project, segment_id)
        if rowid is None:
            errors.append(_unknown(segment_id, project))
        elif table.pinned[rowid]:
            errors.append(_pinned(segment_id))
        else:
            allowed.append((segment_id, rowid))
    if not confirm:
        raise InvalidInput(
            "delete needs confirm=true (then the confirmation token it returns)", field="confirm"
        )
    allowed.sort()
    chosen = [i for i, _ in allowed]
    state = hashlib.sha256(
        "\n".join(
            f"{i}:{int(table.hash64[r])}:{'stashed' if table.stashed[r] else 'working'}"
            for i, r in allowed
        ).encode()
    ).hexdigest()
    freed = sum(int(table.tokens[r]) for _, r in allowed if not table.stashed[r])
    warning = (
        f"deletes {len(chosen)} segments of project {project!r} ({freed:,} working tokens) "
        "for good; stash them instead to keep them retrievable"
    )
    # Core's confirmation binds the tool and all its arguments; the ids as a set.
    asked = confirmation.confirm(
        store.workspace,
        warning=warning,
        token=token,
        state=state,
        normalised={"segment_ids": sorted(set(ids))},
        resolved={"deleted": chosen},
    )
    if asked is not None:
        return {
            **asked,
            "expires_in_seconds": int(confirmation.TTL_SECONDS),
            "segment_ids": chosen,
            "tokens": freed,
            "pruned_segments": [],
            "tokens_freed": 0,
            "action": "delete",
            "errors": errors,
        }
    removed = store.delete(project, chosen)
    store.survived(project)
    return {
        "pruned_segments": removed,
        "tokens_freed": freed,
        "action": "deleted",
        "errors": errors,
    }


def move_to_working(store: MemoryStore, project: str, ids: Sequence[str]) -> list[str]:
    """Bring stashed segments back to the working tier, touched now; the ids moved."""
    moved, _, _ = store.set_fields(
        project,
        ids,
        {"tier": "working", "last_touched_at": store.clock()},
        allow=lambda pinned, in_stash: in_stash,
    )
    return moved


def set_current_task(store: MemoryStore, project: str, task_id: str | None) -> CurrentTask:
    """Set the current task; a card id also activates the card (scenes and tasks agree)."""
    check_project(project)
    previous = store.set_current_task(project, task_id)
    active = None
    if task_id is not None and CARD_ID.match(task_id):
        active = _activate(store, task_id)
    return {
        "project_id": project,
        "task_id": store.current_task(project),
        "previous_task_id": previous,
        "active_card": active,
    }


def _activate(store: MemoryStore, card_id: str) -> str | None:
    """Activate card ``card_id`` through the card store when cuedeck-tasks is there, else
    directly in core's state; None when no such card exists."""
    from cuedeck.errors import MissingExtra
    from cuedeck.state import set_active_card

    workspace = store.workspace
    workspace.invalidate()
    if card_path(card_id) not in workspace.documents:
        return None
    try:
        cards = workspace.service("cards")
    except MissingExtra:
        set_active_card(store.root, card_id)
        return card_id
    activated = cards.activate(card_id)
    return str(activated.id)


def snapshot(
    store: MemoryStore,
    project: str,
    task_id: str | None,
    name: str | None,
    files: dict[str, str] | None = None,
    commit: str | None = None,
) -> Snapshot:
    """Record a task's segments and pins as a named snapshot, with the hashes of the
    files it touched and the git commit then (cuedeck_memory.touched)."""
    task = task_id or store.current_task(project)
    rows = task_rows(store, project, task, stashed=None, pinned=task is not None)
    table = store.table
    now = store.clock()
    record = store.save_snapshot(
        project,
        {
            "name": name or f"{task or 'all'}-{iso(now)}",
            "task_id": task,
            "segment_ids": [table.segment_id(r) for r in rows],
            "working_ids": [table.segment_id(r) for r in rows if not table.stashed[r]],
            "pinned_ids": [table.segment_id(r) for r in rows if table.pinned[r]],
            "tokens": int(table.tokens[rows].sum()) if rows else 0,
            "files": dict(files or {}),
            "commit": commit,
        },
    )
    return {
        "snapshot_id": record["snapshot_id"],
        "task_id": record["task_id"],
        "name": record["name"],
        "created_at": iso(record["created_at"]),
        "segments_snapshot": len(rows),
        "tokens_snapshot": record["tokens"],
        "files": record["files"],
        "commit": record["commit"],
    }


def list_snapshots(store: MemoryStore, project: str) -> list[Snapshot]:
    """Every snapshot of ``project``, newest first, without its id lists."""
    return [
        {
            "snapshot_id": str(r.get("snapshot_id")),
            "name": str(r.get("name")),
            "task_id": r.get("task_id"),
            "created_at": iso(float(r.get("created_at", 0))),
            "segments_snapshot": len(r.get("segment_ids", [])),
            "tokens_snapshot": int(r.get("tokens", 0)),
            "files": dict(r.get("files") or {}),
            "commit": r.get("commit"),
        }
        for r in reversed(store.snapshots(project))
    ]


def restore(store: MemoryStore, project: str, task_id: str | None, max_tokens: int) -> Restored:
    """Pins, then decisions, then the working set (newest first), then what the task's
    latest snapshot adds, fitted to ``max_tokens``."""
    task = task_id or store.current_task(project)
    table = store.table
    decision = table.kinds.find("decision")
    working = task_rows(store, project, task, stashed=False, pinned=True)
    ordered = sorted(working, key=lambda r: (not table.pinned[r], table.kind[r] != decision))
    latest = next(
        (r for r in reversed(store.snapshots(project)) if task is None or r.get("task_id") == task),
        None,
    )
    seen = set(ordered)
    if latest is not None:
        for segment_id in latest.get("segment_ids", []):
            rowid = table.rowid(project, segment_id) if isinstance(segment_id, str) else None
            if rowid is not None and rowid not in seen:
                seen.add(rowid)
                ordered.append(rowid)
    reply: Restored = {
        "project_id": project,
        "task_id": task,
        "snapshot": None
        if latest is None
        else {
            "snapshot_id": str(latest.get("snapshot_id")),
            "name": str(latest.get("name")),
            "created_at": iso(float(latest.get("created_at", 0))),
        },
        "segments": [],
        "pinned": sum(1 for r in ordered if table.pinned[r]),
        "candidates": len(ordered),
        "tokens": 0,
        "page": {"returned": 0, "total": 0, "offset": 0, "next_cursor": None, "max_tokens": 0},
    }
    from cuedeck_memory.replies import measure

    used = measure(reply, store.workspace.token_counter.count)
    items, record = page_segments(store, ordered, max_tokens, None, used=used)
    reply["segments"] = items
    reply["tokens"] = sum(i["tokens"] for i in items)
    reply["page"] = record
    return reply
