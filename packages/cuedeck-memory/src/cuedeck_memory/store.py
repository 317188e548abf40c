"""The memory store: segment files under ``.cuedeck/memory/``, kept in step with the index.

One folder per project: ``segments/<id>.md`` (one file per segment, so a change writes
only the files of the segments it changes), ``snapshots/<id>.json`` and
``project.json`` (the current task). Writers of a project take its lock
(``.cuedeck/.cache/locks/memory-<project>.lock``); files are written atomically. Readers
first bring the index in step with the files: a file whose stat changed is read again,
a new one added, a removed one forgotten, and one that cannot be read is skipped and
kept as a problem for ``cue doctor``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import attrs

from cuedeck.errors import FileNotFound, InvalidInput
from cuedeck.files import atomic_write, locked
from cuedeck.layout import MEMORY_DB, MEMORY_DIR, memory_lock
from cuedeck_memory.index import MemoryIndex
from cuedeck_memory.segments import (
    Segment,
    SegmentFileError,
    check_project,
    new_id,
    parse_file,
    render_file,
    valid_segment_id,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from pathlib import Path

    from cuedeck.workspace import Workspace

#: How long a running process trusts its last full look at a project's files; within it,
#: only a change of the folder (a file added, removed or replaced) triggers a new look.
RESCAN_SECONDS = 5.0


class MemoryStore:
    """The segments, current tasks and snapshots of one workspace (``workspace.service
    ("memory")``)."""

    def __init__(self, workspace: Workspace, *, clock: Callable[[], float] = time.time) -> None:
        self.workspace = workspace
        self.root = workspace.root
        self.settings = workspace.config.memory
        self.index = MemoryIndex(workspace.root / MEMORY_DB)
        self.clock = clock
        self._scanned: dict[str, float] = {}

    def __repr__(self) -> str:
        return f"MemoryStore({str(self.root)!r})"

    def close(self) -> None:
        """Close the index connection."""
        self.index.close()

    # -- places ----------------------------------------------------------------------------

    def project_dir(self, project: str) -> Path:
        """The folder of ``project``."""
        return self.root / MEMORY_DIR / check_project(project)

    def segment_file(self, project: str, segment_id: str) -> Path:
        """The file of a segment."""
        return self.project_dir(project) / "segments" / f"{segment_id}.md"

    @contextlib.contextmanager
    def locked(self, project: str) -> Iterator[None]:
        """Hold the write lock of ``project``."""
        with locked(self.root / memory_lock(check_project(project)), display=memory_lock(project)):
            yield

    # -- keeping the index in step -----------------------------------------------------------

    def _folder_stamp(self, project: str) -> str:
        try:
            return str((self.project_dir(project) / "segments").stat().st_mtime_ns)
        except FileNotFoundError:
            return "absent"

    def _recorded_stamp(self, project: str) -> str | None:
        row = self.index.db.execute(
            "SELECT value FROM meta WHERE key = ?", (f"folder:{project}",)
        ).fetchone()
        return None if row is None else str(row[0])

    def _record_stamp(self, project: str, stamp: str) -> None:
        self.index.db.execute(
            "INSERT OR REPLACE INTO meta VALUES (?, ?)", (f"folder:{project}", stamp)
        )

    def refresh(self, project: str, *, full: bool = False) -> None:
        """Bring the index of ``project`` in step with its files (cheap when nothing
        changed; ``full`` looks at every file's stat whatever the folder says)."""
        check_project(project)
        stamp = self._folder_stamp(project)
        last = self._scanned.get(project)
        fresh = last is not None and time.monotonic() - last < RESCAN_SECONDS
        if not full and fresh and stamp == self._recorded_stamp(project):
            return
        with self.locked(project):
            self._scan(project, self._folder_stamp(project))
        self._scanned[project] = time.monotonic()

    def _scan(self, project: str, stamp: str) -> None:
        folder = self.project_dir(project) / "segments"
        known = self.index.stats(project)
        problems_before = self.index.problem_stats(project)
        changed: list[tuple[Segment, int, int]] = []
        problems: list[tuple[str, int, int, int, str]] = []
        seen: set[str] = set()
        try:
            entries = list(os.scandir(folder))
        except FileNotFoundError:
            entries = []
        for entry in entries:
            name = entry.name
            if not name.endswith(".md") or name.startswith("."):
                continue
            segment_id = name[:-3]
            try:
                stat = entry.stat()
            except OSError:
                continue
            key = (stat.st_mtime_ns, stat.st_size)
            if known.get(segment_id) == key:  # the common case: nothing changed
                seen.add(segment_id)
                continue
            rel = f"{MEMORY_DIR}/{project}/segments/{name}"
            if not valid_segment_id(segment_id):
                problems.append((rel, *key, 1, f"{segment_id!r} is not a segment id"))
                continue
            seen.add(segment_id)
            if known.get(segment_id) == key:
                continue
            if problems_before.get(rel) == key:
                old = self.index.db.execute(
                    "SELECT line, message FROM problems WHERE path = ?", (rel,)
                ).fetchone()
                if old is not None:
                    problems.append((rel, *key, old[0], old[1]))
                    seen.discard(segment_id)
                    continue
            try:
                with open(entry.path, encoding="utf-8") as handle:
                    text = handle.read()
                segment = parse_file(text, segment_id=segment_id, project_id=project)
            except UnicodeDecodeError as exc:
                problems.append((rel, *key, 1, f"not UTF-8 text: {exc.reason}"))
                seen.discard(segment_id)
                continue
            except SegmentFileError as exc:
                problems.append((rel, *key, exc.line, exc.message))
                seen.discard(segment_id)
                continue
            except OSError:
                continue
            changed.append((segment, *key))
        removed = [segment_id for segment_id in known if segment_id not in seen]
        if changed:
            counted = self._count([segment for segment, _, _ in changed])
            now = self.clock()
            self.index.upsert(
                (attrs.evolve(s, last_touched_at=s.last_touched_at or now), m, z)
                for s, (_, m, z) in zip(counted, changed, strict=True)
            )
        if removed:
            self.index.delete(project, removed)
        if problems or problems_before:
            self.index.set_problems(project, problems)
        self._record_stamp(project, stamp)

    def _count(self, segments: Sequence[Segment]) -> list[Segment]:
        """Segments with their text hash and token count (counted once per text)."""
        counter = self.workspace.token_counter
        hashed = [
            (s, hashlib.sha256(s.text.encode("utf-8", "surrogatepass")).hexdigest())
            for s in segments
        ]
        known = self.index.cached_tokens(counter.name, list({h for _, h in hashed}))
        fresh: dict[str, int] = {}
        result = []
        for segment, text_hash in hashed:
            tokens = known.get(text_hash)
            if tokens is None:
                tokens = known[text_hash] = fresh[text_hash] = counter.count(segment.text)
            result.append(attrs.evolve(segment, text_hash=text_hash, tokens=tokens))
        if fresh:
            self.index.remember_tokens(counter.name, fresh)
        return result

    # -- writing segments ----------------------------------------------------------------------

    def _write_files(self, project: str, segments: Sequence[Segment]) -> None:
        """Write segment files atomically and index them (the caller holds the lock).

        A batch is written as temporary files, made durable together (their fsyncs run
        side by side, which lets the file system commit them as one), then renamed into
        place, so a crash leaves every file whole or absent.
        """
        folder = self.project_dir(project) / "segments"
        before = self._folder_stamp(project)
        in_step = before == self._recorded_stamp(project)
        folder.mkdir(parents=True, exist_ok=True)
        staged: list[tuple[str, str]] = []
        try:
            for segment in segments:
                fd, tmp = tempfile.mkstemp(prefix=f".{segment.id}.", suffix=".tmp", dir=folder)
                with os.fdopen(fd, "wb") as handle:
                    handle.write(render_file(segment).encode("utf-8"))
                staged.append((tmp, str(folder / f"{segment.id}.md")))
            _sync_all([tmp for tmp, _ in staged])
            for tmp, final in staged:
                os.chmod(tmp, 0o644)
                os.replace(tmp, final)
        except BaseException:
            for tmp, _ in staged:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)
            raise
        _sync_dir(folder)
        stats = [os.stat(final) for _, final in staged]
        self.index.upsert(
            ((s, st.st_mtime_ns, st.st_size) for s, st in zip(segments, stats, strict=True)),
            keep_gc=True,
        )
        if in_step:
            self._record_stamp(project, self._folder_stamp(project))

    def add(
        self, project: str, drafts: Sequence[Segment], *, dedupe: bool = False
    ) -> list[Segment]:
        """Write new segments (ids, times and counts filled in); with ``dedupe``, a draft
        whose text a segment of the same type already has returns that segment instead."""
        self.refresh(project)
        now = self.clock()
        with self.locked(project):
            counted = self._count(drafts)
            existing: dict[tuple[str, str], Segment] = {}
            if dedupe:
                hashes = list({s.text_hash for s in counted})
                for start in range(0, len(hashes), 500):
                    chunk = hashes[start : start + 500]
                    marks = ", ".join("?" * len(chunk))
                    for found in self.index.select(project, f"text_hash IN ({marks})", chunk):
                        existing[(found.type, found.text_hash)] = found
            fresh: list[Segment] = []
            result: list[Segment] = []
            for draft in counted:
                known = existing.get((draft.type, draft.text_hash))
                if known is not None:
                    result.append(known)
                    continue
                segment = attrs.evolve(
                    draft,
                    id=draft.id or new_id(now),
                    project_id=project,
                    created_at=draft.created_at or now,
                    last_touched_at=now,
                )
                if dedupe:
                    existing[(segment.type, segment.text_hash)] = segment
                fresh.append(segment)
                result.append(segment)
            if fresh:
                self._write_files(project, fresh)
        return result

    def change(
        self, project: str, ids: Sequence[str], edit: Callable[[Segment], Segment | None]
    ) -> tuple[list[Segment], list[str]]:
        """Apply ``edit`` to each segment's file as it is on disk now; unchanged ones
        (``edit`` returns None or the same segment) are not written. Returns the segments
        written and the ids that name no segment."""
        self.refresh(project)
        written: list[Segment] = []
        missing: list[str] = []
        with self.locked(project):
            current = self.index.get(project, list(ids))
            for segment_id in dict.fromkeys(ids):
                indexed = current.get(segment_id)
                path = (
                    self.segment_file(project, segment_id) if valid_segment_id(segment_id) else None
                )
                if indexed is None or path is None:
                    missing.append(segment_id)
                    continue
                try:
                    on_disk = parse_file(
                        path.read_text(encoding="utf-8"), segment_id=segment_id, project_id=project
                    )
                except (OSError, UnicodeDecodeError, SegmentFileError):
                    missing.append(segment_id)
                    continue
                base = attrs.evolve(
                    on_disk,
                    tokens=indexed.tokens,
                    text_hash=indexed.text_hash,
                    last_touched_at=indexed.last_touched_at,
                    gc_survival_count=indexed.gc_survival_count,
                )
                edited = edit(base)
                if edited is not None and edited != base:
                    written.append(edited)
            if written:
                self._write_files(project, self._count(written))
        return written, missing

    def delete(self, project: str, ids: Sequence[str]) -> list[str]:
        """Remove segment files and their rows; the ids removed."""
        removed = []
        with self.locked(project):
            before = self._folder_stamp(project)
            in_step = before == self._recorded_stamp(project)
            for segment_id in ids:
                if not valid_segment_id(segment_id):
                    continue
                with contextlib.suppress(FileNotFoundError):
                    self.segment_file(project, segment_id).unlink()
                    removed.append(segment_id)
            self.index.delete(project, removed)
            if in_step:
                self._record_stamp(project, self._folder_stamp(project))
        return removed

    # -- reading -------------------------------------------------------------------------------

    def segments(self, project: str, where: str = "", params: Sequence[Any] = ()) -> list[Segment]:
        """Segments of ``project`` (fresh from the files) matching an SQL condition."""
        self.refresh(project)
        return self.index.select(project, where, params)

    def segment(self, project: str, segment_id: str) -> Segment:
        """One segment, or FileNotFound (1001) with similar ids."""
        from cuedeck.errors import did_you_mean, suggestion_text

        self.refresh(project)
        found = self.index.get(project, [segment_id]).get(segment_id)
        if found is None:
            ids = [row[0] for row in self.index.stats(project).items()]
            matches = did_you_mean(segment_id, ids)
            raise FileNotFound(
                f"no segment {segment_id!r} in project {project!r}",
                path=f"{MEMORY_DIR}/{project}/segments/{segment_id}.md",
                field="segment_id",
                suggestion=suggestion_text(matches),
                candidates=matches,
            )
        return found

    def projects(self) -> list[str]:
        """Projects with a folder or indexed segments, sorted."""
        found = set(self.index.projects())
        base = self.root / MEMORY_DIR
        if base.is_dir():
            for entry in os.scandir(base):
                if entry.is_dir() and not entry.name.startswith("."):
                    with contextlib.suppress(InvalidInput):
                        found.add(check_project(entry.name))
        return sorted(found)

    # -- project state and snapshots -------------------------------------------------------

    def _state(self, project: str) -> dict[str, Any]:
        try:
            data = json.loads((self.project_dir(project) / "project.json").read_text("utf-8"))
        except (FileNotFoundError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def current_task(self, project: str) -> str | None:
        """The project's current task, or None."""
        value = self._state(project).get("current_task")
        return value if isinstance(value, str) and value else None

    def set_current_task(self, project: str, task_id: str | None) -> str | None:
        """Set (None clears) the current task; the previous one."""
        with self.locked(project):
            state = self._state(project)
            previous = state.get("current_task")
            state["current_task"] = task_id
            state["updated_at"] = self.clock()
            path = self.project_dir(project) / "project.json"
            atomic_write(path, json.dumps(state, indent=2, sort_keys=True) + "\n")
        return previous if isinstance(previous, str) else None

    def save_snapshot(self, project: str, record: dict[str, Any]) -> dict[str, Any]:
        """Write a snapshot record (``snapshot_id`` filled in) and return it."""
        now = self.clock()
        record = {**record, "snapshot_id": f"snap-{new_id(now)}", "created_at": now}
        with self.locked(project):
            path = self.project_dir(project) / "snapshots" / f"{record['snapshot_id']}.json"
            atomic_write(path, json.dumps(record, indent=1, sort_keys=True) + "\n")
        return record

    def snapshots(self, project: str) -> list[dict[str, Any]]:
        """Every readable snapshot of ``project``, oldest first."""
        folder = self.project_dir(project) / "snapshots"
        found = []
        if folder.is_dir():
            for path in folder.glob("snap-*.json"):
                try:
                    record = json.loads(path.read_text("utf-8"))
                except (OSError, ValueError):
                    continue
                if isinstance(record, dict) and isinstance(record.get("segment_ids"), list):
                    found.append(record)
        return sorted(found, key=lambda r: (r.get("created_at", 0), r.get("snapshot_id", "")))


def _sync_all(paths: Sequence[str]) -> None:
    """fsync files side by side (fsync releases the GIL; the journal commits them together)."""

    def sync(path: str) -> None:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    if len(paths) <= 2:
        for path in paths:
            sync(path)
        return
    with ThreadPoolExecutor(max_workers=min(16, len(paths))) as pool:
        list(pool.map(sync, paths))


def _sync_dir(folder: Path) -> None:
    """Make renames in ``folder`` durable (where the platform allows opening a folder)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
