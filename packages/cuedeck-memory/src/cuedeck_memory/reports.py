"""Memory seen from the rest of CueDeck: doctor problems and a card's scene extras."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, cast

from cuedeck_memory.gc import card_of

if TYPE_CHECKING:
    from cuedeck.models import Problem, SceneExtra
    from cuedeck.workspace import Workspace
    from cuedeck_memory.store import MemoryStore


def _store(workspace: Workspace) -> MemoryStore:
    return cast("MemoryStore", workspace.service("memory"))


def segment_problems(workspace: Workspace) -> list[Problem]:
    """Every segment file that cannot be read (after a full look at every project), as
    errors with the file and line; such files are skipped by everything else."""
    from cuedeck.models import Problem

    store = _store(workspace)
    for project in store.projects():
        store.refresh(project, full=True)
    return [
        Problem(
            "error",
            1004,
            path,
            line,
            f"memory segment skipped: {message}",
            "fix the frontmatter (docs/memory.md shows the format) or delete the file",
        )
        for path, line, message in store.index.problems()
    ]


def scene_extras(workspace: Workspace, card_id: str) -> list[SceneExtra]:
    """The pinned segments and working decisions tied to card ``card_id`` (by task id or
    a reference), pinned first, oldest first within each."""
    from cuedeck.models import SceneExtra

    store = _store(workspace)
    found = []
    for project in store.projects():
        # settled: the text placed and the file hash in the manifest must agree.
        store.refresh(project, settled=True)
        for segment in store.index.select(
            project, "(pinned = 1 OR (type = 'decision' AND tier = 'working'))"
        ):
            if segment.task_id == card_id or any(card_of(r) == card_id for r in segment.refs):
                found.append(segment)
    found.sort(key=lambda s: (not s.pinned, s.created_at, s.id))
    extras = []
    for segment in found:
        try:
            data = (workspace.root / segment.path).read_bytes()
        except OSError:
            continue
        extras.append(
            SceneExtra(
                segment.path,
                f"{segment.type} {segment.id}" + (" (pinned)" if segment.pinned else ""),
                segment.text,
                hashlib.sha256(data).hexdigest(),
            )
        )
    return extras
