"""Memory seen from the rest of CueDeck: doctor problems and a card's scene extras."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, cast

from cuedeck_memory.segments import card_of

if TYPE_CHECKING:
    from cuedeck.models import Problem, SceneExtra
    from cuedeck.workspace import Workspace
    from cuedeck_memory.store import MemoryStore


#: Where memory sits in a scene: between the card's direct references (50) and the
#: indirect ones (25), after deltas (45).
SCENE_PRIORITY = 40


def _store(workspace: Workspace) -> MemoryStore:
    return cast("MemoryStore", workspace.service("context"))


def segment_problems(workspace: Workspace) -> list[Problem]:
    """Segment files of an older CueDeck that could not be moved into the store (they
    stay in ``.cuedeck/memory/.legacy/``), as errors with the file and line."""
    from cuedeck.models import Problem

    store = _store(workspace)
    found: list[Problem] = []
    for project in store.projects():  # no store, no projects: nothing is opened
        recorded = store.database.meta(f"legacy-problems:{project}")
        for path, line, message in json.loads(recorded) if recorded else []:
            found.append(
                Problem(
                    "error",
                    1004,
                    path,
                    line,
                    f"memory segment not moved into the store: {message}",
                    "fix the frontmatter (docs/memory.md shows the format), then "
                    f"cue memory import -p {project} {path.rsplit('/', 1)[0]}",
                )
            )
    return found


def scene_extras(workspace: Workspace, card_id: str) -> list[SceneExtra]:
    """The pinned segments and working decisions tied to card ``card_id`` (by task id or
    a reference), pinned first, oldest first within each. Each is named
    ``.cuedeck/memory/<project>/<id>`` and hashed by its text (it is no file)."""
    import numpy as np

    from cuedeck.models import SceneExtra
    from cuedeck_memory.paths import MEMORY_DIR

    store = _store(workspace)
    table = store.table
    rows = table.rows(None)
    decision = table.kinds.find("decision")
    keep = table.pinned[rows] | ((table.kind[rows] == decision) & ~table.stashed[rows])
    card_code = table.values.find(card_id)
    chosen = []
    for rowid in rows[keep].tolist():
        refs = table.refs.get(rowid, ())
        if table.task[rowid] == card_code or any(card_of(r) == card_id for r in refs):
            chosen.append(rowid)
    chosen.sort(key=lambda r: (not table.pinned[r], table.created[r], r))
    segments = store.fetch(np.asarray(chosen, np.int64).tolist())
    extras = []
    for rowid in chosen:
        segment = segments[rowid]
        extras.append(
            SceneExtra(
                f"{MEMORY_DIR}/{segment.project_id}/{segment.id}",
                f"{segment.type} {segment.id}" + (" (pinned)" if segment.pinned else ""),
                segment.text,
                hashlib.sha256(segment.text.encode("utf-8", "surrogatepass")).hexdigest(),
                priority=SCENE_PRIORITY,
                role="memory",
            )
        )
    return extras
