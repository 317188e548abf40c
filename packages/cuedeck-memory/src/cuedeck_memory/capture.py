"""Capturing segments: a tool's raw segment objects checked and written to the store."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cuedeck.errors import InvalidInput
from cuedeck_memory.segments import Segment, check_project

if TYPE_CHECKING:
    from collections.abc import Sequence

    from cuedeck_memory.store import MemoryStore


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
