"""The task side of memory: a project's current task, task snapshots, and restore.

A card id as current task also activates the card; a restore fits the task's pins,
working set and latest snapshot to a budget.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuedeck.layout import CARD_ID, card_path
from cuedeck_memory.fitting import measure
from cuedeck_memory.listing import page_restored, task_rows
from cuedeck_memory.segments import check_project, iso

if TYPE_CHECKING:
    from cuedeck_memory.replies import CurrentTask, Holder, Restored, Snapshot
    from cuedeck_memory.store import MemoryStore


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
    from cuedeck.plugins.services import CardService
    from cuedeck.state import set_active_card

    workspace = store.workspace
    workspace.invalidate()
    if card_path(card_id) not in workspace.documents:
        return None
    try:
        cards = workspace.service(CardService)
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
    held_by = _holder(store, task)
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
            "held_by": held_by,
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
        "held_by": record["held_by"],
    }


def _holder(store: MemoryStore, task: str | None) -> Holder | None:
    """Who holds card ``task`` now (through core's claims contract), or None."""
    from cuedeck.plugins.claims import holder_of

    if task is None or not CARD_ID.match(task):
        return None
    hold = holder_of(store.workspace, task)
    if hold is None:
        return None
    record = hold.to_record()
    return {"agent": record["agent"], "since": record["since"], "until": record["until"]}


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
            "held_by": r.get("held_by"),
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
    # The page record is part of what page() keeps room for: measured without it.
    frame = {key: value for key, value in reply.items() if key != "page"}
    used = measure(frame, store.workspace.token_counter.count)
    items, record = page_restored(store, ordered, max_tokens, used=used)
    reply["segments"] = items
    reply["tokens"] = sum(i["tokens"] for i in items)
    reply["page"] = record
    return reply
