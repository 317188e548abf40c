"""Pinning, pruning (stash or delete) and moving stashed segments back to work.

What ``context_gc_pin``/``unpin``/``prune``, ``context_stash`` and
``context_retrieve_stashed`` do to the store; a delete asks for core's confirmation token.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from cuedeck.errors import InvalidInput
from cuedeck.serving import confirmation
from cuedeck_memory.segments import check_project

if TYPE_CHECKING:
    from collections.abc import Sequence

    from cuedeck_memory.replies import ItemError, Pruned
    from cuedeck_memory.store import MemoryStore


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
