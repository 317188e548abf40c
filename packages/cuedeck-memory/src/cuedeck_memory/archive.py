"""Memory as plain files: export, import, and the move of an older store into SQLite.

``cue memory export`` writes one markdown file per segment (the format of
:mod:`cuedeck_memory.segments`: a frontmatter of JSON values, then the text) under
``.cuedeck/memory/export/<project>/``, for reading, diffing and editing; ``cue memory
import`` reads such files back: a segment whose id exists takes the file's fields and
text, a new id is added. An older CueDeck kept exactly those files as its store
(``.cuedeck/memory/<project>/segments/``, ``snapshots/``, ``project.json``): the first
open moves them into the store, keeping ids, texts, pins, tiers, current tasks,
snapshots and the GC counters its index held, and then moves the folder to
``.cuedeck/memory/.legacy/<project>``.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from typing import TYPE_CHECKING

import attrs

from cuedeck.layout import MEMORY_DB, MEMORY_DIR
from cuedeck.progress import report
from cuedeck_memory.database import text_hash
from cuedeck_memory.segments import (
    Segment,
    SegmentFileError,
    check_project,
    iso,
    parse_file,
    render_file,
    valid_segment_id,
)

if TYPE_CHECKING:
    from pathlib import Path

    from cuedeck_memory.store import MemoryStore

EXPORT_DIR = f"{MEMORY_DIR}/export"
LEGACY_DIR = f"{MEMORY_DIR}/.legacy"


def read_segment_file(path: Path, *, segment_id: str, project: str) -> Segment:
    """The segment a file holds (line ends kept as written); SegmentFileError if bad."""
    with open(path, encoding="utf-8", newline="") as handle:
        return parse_file(handle.read(), segment_id=segment_id, project_id=project)


def read_folder(folder: Path, project: str) -> tuple[list[Segment], list[tuple[str, int, str]]]:
    """Every segment file of ``folder`` (``<id>.md``), and the (path, line, message) of
    those that cannot be read."""
    segments: list[Segment] = []
    problems: list[tuple[str, int, str]] = []
    names = sorted(n for n in os.listdir(folder) if n.endswith(".md") and not n.startswith("."))
    for n, name in enumerate(names):
        if n % 1000 == 0:
            report(n, len(names), "Reading memory segment files")
        segment_id = name[:-3]
        where = str(folder / name)
        if not (folder / name).resolve().is_relative_to(folder.resolve()):
            problems.append((where, 1, "a link that leaves the folder: not read"))
            continue
        if not valid_segment_id(segment_id):
            problems.append((where, 1, f"{segment_id!r} is not a segment id"))
            continue
        try:
            segments.append(
                read_segment_file(folder / name, segment_id=segment_id, project=project)
            )
        except UnicodeDecodeError as exc:
            problems.append((where, 1, f"not UTF-8 text: {exc.reason}"))
        except SegmentFileError as exc:
            problems.append((where, exc.line, exc.message))
    report(len(names), len(names), "Reading memory segment files")
    return segments, problems


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


def has_legacy(root: Path) -> bool:
    """Whether ``root`` holds segment files of an older CueDeck still to move in."""
    return bool(_legacy_projects(root))


def _legacy_projects(root: Path) -> list[str]:
    base = root / MEMORY_DIR
    if not base.is_dir():
        return []
    found = []
    for entry in os.scandir(base):
        if entry.is_dir() and not entry.name.startswith(".") and entry.name != "export":
            inside = os.listdir(entry.path)
            if {"segments", "snapshots", "project.json"} & set(inside):
                with contextlib.suppress(Exception):
                    found.append(check_project(entry.name))
    return sorted(found)


def _legacy_counters(store: MemoryStore) -> dict[tuple[str, str], tuple[float, int]]:
    """(project, id) -> (last touch, GC runs survived) from an older CueDeck's index."""
    path = store.root / MEMORY_DB
    if not path.is_file():
        return {}
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            rows = db.execute(
                "SELECT project, id, last_touched_at, gc_survival_count FROM segments"
            )
            return {(r[0], r[1]): (float(r[2]), int(r[3])) for r in rows}
    except sqlite3.Error:
        return {}


def migrate_legacy(store: MemoryStore) -> list[str]:
    """Move the segment files of an older CueDeck into the store (once per project);
    the projects moved."""
    projects = _legacy_projects(store.root)
    if not projects:
        return []
    counters = _legacy_counters(store)
    database = store.database
    for project in projects:
        folder = store.root / MEMORY_DIR / project
        with database.writing() as version:
            if database.meta(f"migrated:{project}") is None:
                _migrate(store, project, folder, counters, version)
                database.set_meta(f"migrated:{project}", str(version))
        legacy = store.root / LEGACY_DIR / project
        legacy.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            os.replace(folder, legacy if not legacy.exists() else f"{legacy}-{version}")
    return projects


def _migrate(
    store: MemoryStore,
    project: str,
    folder: Path,
    counters: dict[tuple[str, str], tuple[float, int]],
    version: int,
) -> None:
    database = store.database
    segments: list[Segment] = []
    if (folder / "segments").is_dir():
        segments, problems = read_folder(folder / "segments", project)
        # Files that cannot be read stay in the moved folder; cue doctor names them.
        moved = f"{LEGACY_DIR}/{project}/segments"
        database.set_meta(
            f"legacy-problems:{project}",
            json.dumps([[f"{moved}/{os.path.basename(p)}", n, m] for p, n, m in problems]),
        )
    count = store.workspace.token_counter.count
    now = store.clock()
    ready = []
    for segment in segments:
        touched, survived = counters.get((project, segment.id), (now, 0))
        ready.append(
            attrs.evolve(
                segment,
                tokens=count(segment.text),
                last_touched_at=touched,
                gc_survival_count=survived,
            )
        )
    if ready:
        database.insert(ready, [text_hash(s.text) for s in ready], version)
    try:
        state = json.loads((folder / "project.json").read_text("utf-8"))
    except (OSError, ValueError):
        state = {}
    task = state.get("current_task") if isinstance(state, dict) else None
    if isinstance(task, str) and task:
        database.set_current_task(project, store.masker()(task), now)
    if (folder / "snapshots").is_dir():
        for path in sorted((folder / "snapshots").glob("snap-*.json")):
            try:
                record = json.loads(path.read_text("utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(record, dict) and isinstance(record.get("snapshot_id"), str):
                record.setdefault("created_at", now)
                database.add_snapshot(project, record)
