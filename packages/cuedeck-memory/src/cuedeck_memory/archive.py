"""Memory as plain files: export and import (an older store moves in by :mod:`.legacy`).

``cue memory export`` writes one markdown file per segment (the format of
:mod:`cuedeck_memory.segments`: a frontmatter of JSON values, then the text) under
``.cuedeck/memory/export/<project>/``, for reading, diffing and editing; ``cue memory
import`` reads such files back: a segment whose id exists takes the file's fields and
text, a new id is added.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import attrs

from cuedeck.progress import report
from cuedeck_memory.paths import MEMORY_DIR
from cuedeck_memory.segments import (
    Segment,
    check_project,
    iso,
    read_folder,
    render_file,
)

if TYPE_CHECKING:
    from pathlib import Path

    from cuedeck_memory.store import MemoryStore

EXPORT_DIR = f"{MEMORY_DIR}/export"


def export_project(store: MemoryStore, project: str, folder: Path | None = None) -> Path:
    """Write every segment of ``project`` as a file under ``folder`` (default
    ``.cuedeck/memory/export/<project>``) through core's write path; files of segments
    no longer stored are removed. The folder written."""
    from cuedeck.errors import InvalidInput
    from cuedeck.writes import remove_file, write_files

    check_project(project)
    target = folder or store.root / EXPORT_DIR / project
    root = os.path.realpath(store.root)
    if not os.path.realpath(target).startswith(root.rstrip(os.sep) + os.sep):
        raise InvalidInput(f"{target} resolves outside the workspace", field="folder")
    target.mkdir(parents=True, exist_ok=True)
    table = store.table
    rows = [int(r) for r in table.rows(project)]
    names: set[str] = set()
    for start in range(0, len(rows), 1000):
        report(start, len(rows), "Exporting memory segments")
        batch = store.fetch(rows[start : start + 1000])
        files = [(f"{s.id}.md", render_file(s).encode("utf-8")) for s in batch.values()]
        names.update(name for name, _ in files)
        write_files(store.root, target, files)
    for name in os.listdir(target):
        if name.endswith(".md") and name not in names:
            remove_file(store.root, target / name)
    report(len(rows), len(rows), "Exporting memory segments")
    return target


def import_project(store: MemoryStore, project: str, folder: Path) -> dict[str, object]:
    """Read segment files back into ``project``: known ids take the file's fields and
    text (GC counters kept), new ids are added. What was done, and what could not be read."""
    check_project(project)
    segments, problems = read_folder(folder, project)
    known = store.get(project, [s.id for s in segments])
    by_id = {s.id: s for s in segments}

    def edited(old: Segment) -> Segment:
        new = by_id[old.id]
        return attrs.evolve(
            new,
            # The file keeps milliseconds: the same time written is the same time.
            created_at=old.created_at
            if iso(old.created_at) == iso(new.created_at)
            else new.created_at,
            last_touched_at=old.last_touched_at,
            gc_survival_count=old.gc_survival_count,
            tokens=old.tokens if new.text == old.text else 0,
        )

    changed, _ = store.change(project, list(known), edited)
    fresh = [s for s in segments if s.id not in known]
    added = store.add(project, fresh) if fresh else []
    return {
        "project_id": project,
        "updated": [s.id for s in changed],
        "added": [s.id for s in added],
        "problems": [{"path": p, "line": line, "message": m} for p, line, m in problems],
    }
