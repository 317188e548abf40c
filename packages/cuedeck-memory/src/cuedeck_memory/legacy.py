"""An older CueDeck's memory, moved into the store on its first open.

An older CueDeck kept one markdown file per segment as its store
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

from cuedeck_memory.database import text_hash
from cuedeck_memory.paths import LEGACY_INDEX, MEMORY_DIR
from cuedeck_memory.segments import Segment, check_project, read_folder

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from cuedeck_memory.database import MemoryDatabase
    from cuedeck_memory.masker import Masker

LEGACY_DIR = f"{MEMORY_DIR}/.legacy"


@attrs.frozen
class Mover:
    """What moving a project in takes from the store: its token count, clock and masker."""

    count: Callable[[str], int]
    clock: Callable[[], float]
    masker: Callable[[], Masker]


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


def _legacy_counters(root: Path) -> dict[tuple[str, str], tuple[float, int]]:
    """(project, id) -> (last touch, GC runs survived) from an older CueDeck's index."""
    path = root / LEGACY_INDEX
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


def migrate_legacy(root: Path, database: MemoryDatabase, mover: Mover) -> list[str]:
    """Move the segment files of an older CueDeck under ``root`` into ``database`` (once
    per project); the projects moved."""
    projects = _legacy_projects(root)
    if not projects:
        return []
    counters = _legacy_counters(root)
    for project in projects:
        folder = root / MEMORY_DIR / project
        with database.writing() as version:
            if database.meta(f"migrated:{project}") is None:
                _migrate(database, mover, project, folder, counters, version)
                database.set_meta(f"migrated:{project}", str(version))
        legacy = root / LEGACY_DIR / project
        legacy.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            os.replace(folder, legacy if not legacy.exists() else f"{legacy}-{version}")
    return projects


def _migrate(
    database: MemoryDatabase,
    mover: Mover,
    project: str,
    folder: Path,
    counters: dict[tuple[str, str], tuple[float, int]],
    version: int,
) -> None:
    segments: list[Segment] = []
    if (folder / "segments").is_dir():
        segments, problems = read_folder(folder / "segments", project)
        # Files that cannot be read stay in the moved folder; cue doctor names them.
        moved = f"{LEGACY_DIR}/{project}/segments"
        database.set_meta(
            f"legacy-problems:{project}",
            json.dumps([[f"{moved}/{os.path.basename(p)}", n, m] for p, n, m in problems]),
        )
    count = mover.count
    now = mover.clock()
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
        database.set_current_task(project, mover.masker()(task), now)
    if (folder / "snapshots").is_dir():
        for path in sorted((folder / "snapshots").glob("snap-*.json")):
            try:
                record = json.loads(path.read_text("utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(record, dict) and isinstance(record.get("snapshot_id"), str):
                record.setdefault("created_at", now)
                database.add_snapshot(project, record)
