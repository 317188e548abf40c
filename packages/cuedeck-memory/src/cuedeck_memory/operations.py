"""What the memory tools do to the store: capture, pin, prune, tasks, snapshots, restore.

Shared by the tools and ``cue memory``; replies are plain dicts in the tools' shapes.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

import attrs

from cuedeck import confirmation
from cuedeck.errors import InvalidInput
from cuedeck.layout import CARD_ID, card_path
from cuedeck_memory.replies import page, segment_dict
from cuedeck_memory.segments import Segment, check_project, iso

if TYPE_CHECKING:
    from collections.abc import Sequence

    from cuedeck_memory.store import MemoryStore


def refcounted(
    store: MemoryStore, project: str, segments: Sequence[Segment]
) -> list[dict[str, Any]]:
    """Segments as reply dicts, with their refcounts."""
    counts = store.index.refcounts(project, [s.id for s in segments]) if segments else {}
    return [segment_dict(s, counts.get(s.id, 0)) for s in segments]


def page_segments(
    store: MemoryStore,
    segments: Sequence[Segment],
    max_tokens: int,
    cursor: str | None,
    *,
    scores: Sequence[float | None] | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One page of ``segments`` as reply dicts (refcounts only for the page's items)."""
    from cuedeck_memory.replies import start_of

    start = start_of(cursor)
    # Items cost at least a few tokens each: never build dicts far past what can fit.
    window = list(segments[start : start + max(1, max_tokens // 8)])
    by_project: dict[str, list[Segment]] = {}
    for segment in window:
        by_project.setdefault(segment.project_id, []).append(segment)
    counts: dict[tuple[str, str], int] = {}
    for project, members in by_project.items():
        for key, value in store.index.refcounts(project, [s.id for s in members]).items():
            counts[(project, key)] = value
    items = []
    for n, segment in enumerate(window):
        item = segment_dict(segment, counts.get((segment.project_id, segment.id), 0))
        if scores is not None and scores[start + n] is not None:
            item["score"] = round(float(scores[start + n] or 0.0), 4)
        items.append(item)
    chosen, record = page(items, store.workspace.token_counter.count, max_tokens, None)
    end = start + len(chosen)
    record.update(
        offset=start,
        total=len(segments),
        next_cursor=str(end) if end < len(segments) else None,
    )
    return chosen, record


def task_segments(
    store: MemoryStore,
    project: str,
    task: str | None,
    *,
    tiers: Sequence[str],
    pinned: bool = False,
) -> list[Segment]:
    """Segments of ``task`` in ``tiers`` (every one when task is None), with the pinned
    working ones when ``pinned``; newest first."""
    marks = ", ".join("?" * len(tiers))
    if task is None:
        found = store.segments(project, f"tier IN ({marks})", tiers)
    elif pinned:
        found = store.segments(
            project, f"tier IN ({marks}) AND (task_id = ? OR pinned = 1)", (*tiers, task)
        )
    else:
        found = store.segments(project, f"tier IN ({marks}) AND task_id = ?", (*tiers, task))
    found.sort(key=lambda s: (s.created_at, s.id), reverse=True)
    return found


def capture_segments(
    store: MemoryStore, project: str, inputs: Sequence[dict[str, Any]], task_id: str | None
) -> list[Segment]:
    """Write captured segments (masked when configured); the segments written."""
    check_project(project)
    default_task = task_id or store.current_task(project)
    session = store.workspace.mask_session() if store.settings.mask_on_capture else None

    # Every string that lands in the file, not only the text: a key pasted as a tag or
    # a path must not reach the disk either.
    def masked(value: Any) -> Any:
        return session.mask(value) if session is not None and isinstance(value, str) else value

    drafts = []
    for n, raw in enumerate(inputs):
        text = raw.get("text")
        if not isinstance(text, str) or not text.strip():
            raise InvalidInput("a segment needs a non-empty text", field=f"segments.{n}.text")
        line_range = raw.get("line_range")
        drafts.append(
            Segment(
                id="",
                type=masked(str(raw.get("type") or "note")),
                text=masked(text),
                project_id=project,
                created_at=0.0,
                task_id=masked(raw.get("task_id") or default_task),
                tags=tuple(masked(tag) for tag in raw.get("tags") or ()),
                file_path=masked(raw.get("file_path")),
                line_range=(int(line_range[0]), int(line_range[1])) if line_range else None,
                topic_id=masked(raw.get("topic_id")),
                refs=tuple(masked(ref) for ref in raw.get("refs") or ()),
                pinned=bool(raw.get("pinned", False)),
            )
        )
    return store.add(project, drafts)


def set_pinned(
    store: MemoryStore, project: str, ids: Sequence[str], pinned: bool
) -> tuple[list[str], list[dict[str, str]]]:
    """Pin or unpin segments; the ids done and an error per unknown id."""
    _, missing = store.change(project, ids, lambda s: attrs.evolve(s, pinned=pinned))
    done = [i for i in dict.fromkeys(ids) if i not in missing]
    return done, [_unknown(i, project) for i in missing]


def _unknown(segment_id: str, project: str) -> dict[str, str]:
    return {
        "segment_id": segment_id,
        "error": "not_found",
        "message": f"no segment {segment_id!r} in project {project!r}",
    }


def _pinned(segment_id: str) -> dict[str, str]:
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
) -> dict[str, Any]:
    """Stash or delete ``ids`` (see ``context_gc_prune``); counts as one GC run."""
    check_project(project)
    store.refresh(project, settled=True)  # a pin made by hand must hold
    unique = list(dict.fromkeys(ids))
    found = store.index.get(project, unique)
    errors: list[dict[str, str]] = []
    allowed: list[Segment] = []
    for segment_id in unique:
        segment = found.get(segment_id)
        if segment is None:
            errors.append(_unknown(segment_id, project))
        elif segment.pinned:
            errors.append(_pinned(segment_id))
        else:
            allowed.append(segment)
    if action == "stash":
        targets = [s for s in allowed if s.tier == "working"]
        for segment in allowed:
            if segment.tier != "working":
                errors.append(
                    {
                        "segment_id": segment.id,
                        "error": "already_stashed",
                        "message": "already stashed",
                    }
                )
        # The edit sees the file as it is now: one pinned since the index looked stays.
        written, _ = store.change(
            project,
            [s.id for s in targets],
            lambda s: None if s.pinned else attrs.evolve(s, tier="stashed"),
        )
        stashed = {s.id for s in written}
        for segment in targets:
            if segment.id not in stashed:
                errors.append(_pinned(segment.id))
        store.index.survived(project)
        return {
            "pruned_segments": [s.id for s in targets if s.id in stashed],
            "tokens_freed": sum(s.tokens for s in targets if s.id in stashed),
            "action": "stashed",
            "errors": errors,
        }
    if not confirm:
        raise InvalidInput(
            "delete needs confirm=true (then the confirmation token it returns)", field="confirm"
        )
    chosen = sorted(s.id for s in allowed)
    state = hashlib.sha256(
        "\n".join(
            f"{s.id}:{s.text_hash}:{s.tier}" for s in sorted(allowed, key=lambda s: s.id)
        ).encode()
    ).hexdigest()
    freed = sum(s.tokens for s in allowed if s.tier == "working")
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
    store.index.survived(project)
    return {
        "pruned_segments": removed,
        "tokens_freed": freed,
        "action": "deleted",
        "errors": errors,
    }


def move_to_working(store: MemoryStore, project: str, ids: Sequence[str]) -> list[str]:
    """Bring stashed segments back to the working tier, touched now; the ids moved."""
    written, _ = store.change(
        project, ids, lambda s: attrs.evolve(s, tier="working") if s.tier == "stashed" else None
    )
    store.index.touch(project, [s.id for s in written], store.clock())
    return [s.id for s in written]


def set_current_task(store: MemoryStore, project: str, task_id: str | None) -> dict[str, Any]:
    """Set the current task; a card id also activates the card (scenes and tasks agree)."""
    check_project(project)
    previous = store.set_current_task(project, task_id)
    active = None
    if task_id is not None and CARD_ID.match(task_id):
        active = _activate(store, task_id)
    return {
        "project_id": project,
        "task_id": task_id,
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
) -> dict[str, Any]:
    """Record a task's segments and pins as a named snapshot, with the hashes of the
    files it touched and the git commit then (cuedeck_memory.touched)."""
    task = task_id or store.current_task(project)
    found = task_segments(
        store, project, task, tiers=("working", "stashed"), pinned=task is not None
    )
    now = store.clock()
    record = store.save_snapshot(
        project,
        {
            "name": name or f"{task or 'all'}-{iso(now)}",
            "task_id": task,
            "segment_ids": [s.id for s in found],
            "working_ids": [s.id for s in found if s.tier == "working"],
            "pinned_ids": [s.id for s in found if s.pinned],
            "tokens": sum(s.tokens for s in found),
            "files": dict(files or {}),
            "commit": commit,
        },
    )
    return {
        "snapshot_id": record["snapshot_id"],
        "task_id": task,
        "name": record["name"],
        "created_at": iso(record["created_at"]),
        "segments_snapshot": len(found),
        "tokens_snapshot": record["tokens"],
        "files": dict(files or {}),
        "commit": commit,
    }


def list_snapshots(store: MemoryStore, project: str) -> list[dict[str, Any]]:
    """Every snapshot of ``project``, newest first, without its id lists."""
    return [
        {
            "snapshot_id": r.get("snapshot_id"),
            "name": r.get("name"),
            "task_id": r.get("task_id"),
            "created_at": iso(float(r.get("created_at", 0))),
            "segments_snapshot": len(r.get("segment_ids", [])),
            "tokens_snapshot": r.get("tokens", 0),
        }
        for r in reversed(store.snapshots(project))
    ]


def restore(
    store: MemoryStore, project: str, task_id: str | None, max_tokens: int
) -> dict[str, Any]:
    """Pins, then decisions, then the working set (newest first), then what the task's
    latest snapshot adds, fitted to ``max_tokens``."""
    task = task_id or store.current_task(project)
    working = task_segments(store, project, task, tiers=("working",), pinned=True)
    latest = next(
        (r for r in reversed(store.snapshots(project)) if task is None or r.get("task_id") == task),
        None,
    )
    ordered = sorted(working, key=lambda s: (not s.pinned, s.type != "decision"))
    seen = {s.id for s in ordered}
    if latest is not None:
        extra = [i for i in latest.get("segment_ids", []) if isinstance(i, str) and i not in seen]
        from_snapshot = store.index.get(project, extra)
        ordered.extend(from_snapshot[i] for i in extra if i in from_snapshot)
    items, record = page_segments(store, ordered, max_tokens, None)
    return {
        "project_id": project,
        "task_id": task,
        "snapshot": None
        if latest is None
        else {
            "snapshot_id": latest.get("snapshot_id"),
            "name": latest.get("name"),
            "created_at": iso(float(latest.get("created_at", 0))),
        },
        "segments": items,
        "pinned": sum(1 for s in ordered if s.pinned),
        "candidates": len(ordered),
        "tokens": sum(item["tokens"] for item in items),
        "page": record,
    }
