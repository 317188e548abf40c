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
import threading
import time
from typing import TYPE_CHECKING, Any

import attrs

from cuedeck.errors import FileNotFound, InvalidInput
from cuedeck.files import atomic_write, locked
from cuedeck.layout import MEMORY_DB, MEMORY_DIR, memory_lock
from cuedeck_memory.durable import read_text, write_batch
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
        #: Whether a first read may answer from the index and leave the look at every
        #: file to a thread; a process that ends with its answer (the CLI) sets it off.
        self.background = True
        self._scanned: dict[str, float] = {}
        self._background: dict[str, threading.Thread] = {}
        self._background_lock = threading.Lock()
        #: Why the last background look failed, if it did (the next read looks again).
        self._background_error: Exception | None = None

    def __repr__(self) -> str:
        return f"MemoryStore({str(self.root)!r})"

    def close(self) -> None:
        """Wait for background looks at the files, then close the index connection."""
        for thread in list(self._background.values()):
            thread.join()
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

    def refresh(self, project: str, *, full: bool = False, settled: bool = False) -> None:
        """Bring the index of ``project`` in step with its files (cheap when nothing
        changed; ``full`` looks at every file's stat whatever the folder says).

        The first look of a process trusts an index whose recorded folder stamp still
        matches (no file added, removed or replaced since) and answers at once; the stat
        of every file, which catches edits made in place, is then looked at in a
        background thread (:meth:`wait_for_scan`). ``settled`` (for a change about to
        be written: a pin made by hand must hold), or ``background`` off, waits for that
        look, or makes it.
        """
        check_project(project)
        stamp = self._folder_stamp(project)
        if not full and stamp == self.index.recorded_stamp(project):
            if project not in self._scanned:
                if not settled and self.background:
                    self._scan_in_background(project)
                    return
                self.wait_for_scan(project)
            last = self._scanned.get(project)
            if last is not None and time.monotonic() - last < RESCAN_SECONDS:
                return
        with self.locked(project):
            self._scan(self.index, project, self._folder_stamp(project))
        self._scanned[project] = time.monotonic()

    def _scan_in_background(self, project: str) -> None:
        with self._background_lock:
            running = self._background.get(project)
            if running is not None and running.is_alive():
                return
            thread = threading.Thread(
                target=self._background_scan,
                args=(project,),
                name=f"cuedeck-memory-scan-{project}",
                # Not a daemon: a short process finishes the look before it exits, so
                # the next one finds the index in step.
                daemon=False,
            )
            self._background[project] = thread
            thread.start()

    def _background_scan(self, project: str) -> None:
        # Its own connection: the caller's may be inside a transaction of its own.
        index = MemoryIndex(self.index.path)
        try:
            with self.locked(project):
                if project not in self._scanned:
                    self._scan(index, project, self._folder_stamp(project))
                    self._scanned[project] = time.monotonic()
        except Exception as exc:  # a failed look is retried by the next read
            self._background_error = exc
        finally:
            index.close()

    def wait_for_scan(self, project: str, timeout: float | None = None) -> bool:
        """Wait for the background look at ``project``'s files; whether none is running."""
        thread = self._background.get(project)
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    def _scan(self, index: MemoryIndex, project: str, stamp: str) -> None:
        folder = self.project_dir(project) / "segments"
        known = index.stats(project)
        problems_before = index.problem_stats(project)
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
                old = index.db.execute(
                    "SELECT line, message FROM problems WHERE path = ?", (rel,)
                ).fetchone()
                if old is not None:
                    problems.append((rel, *key, old[0], old[1]))
                    seen.discard(segment_id)
                    continue
            try:
                segment = parse_file(
                    read_text(folder / name), segment_id=segment_id, project_id=project
                )
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
            counted = self._count([segment for segment, _, _ in changed], index)
            now = self.clock()
            index.upsert(
                (attrs.evolve(s, last_touched_at=s.last_touched_at or now), m, z)
                for s, (_, m, z) in zip(counted, changed, strict=True)
            )
        if removed:
            index.delete(project, removed)
        if problems or problems_before:
            index.set_problems(project, problems)
        index.record_stamp(project, stamp)

    def _count(
        self, segments: Sequence[Segment], index: MemoryIndex | None = None
    ) -> list[Segment]:
        """Segments with their text hash and token count (counted once per text)."""
        return [
            attrs.evolve(segment, text_hash=text_hash, tokens=tokens)
            for segment, (text_hash, tokens) in zip(
                segments, self._counts(segments, index), strict=True
            )
        ]

    def _counts(
        self, segments: Sequence[Segment], index: MemoryIndex | None = None
    ) -> list[tuple[str, int]]:
        """(text hash, tokens) of each segment; each text counted once, ever (the counts
        are kept by hash)."""
        index = index or self.index
        counter = self.workspace.token_counter
        hashes = [
            hashlib.sha256(s.text.encode("utf-8", "surrogatepass")).hexdigest() for s in segments
        ]
        known = index.cached_tokens(counter.name, list(set(hashes)))
        fresh: dict[str, int] = {}
        result = []
        for segment, text_hash in zip(segments, hashes, strict=True):
            tokens = known.get(text_hash)
            if tokens is None:
                tokens = known[text_hash] = fresh[text_hash] = counter.count(segment.text)
            result.append((text_hash, tokens))
        if fresh:
            index.remember_tokens(counter.name, fresh)
        return result

    # -- writing segments ----------------------------------------------------------------------

    def _write_files(self, project: str, segments: Sequence[Segment]) -> None:
        """Write segment files atomically and index them (the caller holds the lock).

        The batch is written as :func:`~cuedeck_memory.durable.write_batch` writes: a
        crash leaves every file whole or absent.
        """
        folder = self.project_dir(project) / "segments"
        before = self._folder_stamp(project)
        in_step = before == self.index.recorded_stamp(project)
        folder.mkdir(parents=True, exist_ok=True)
        files = [(f"{s.id}.md", render_file(s).encode("utf-8")) for s in segments]
        stats = write_batch(folder, files)
        self.index.upsert(
            ((s, st.st_mtime_ns, st.st_size) for s, st in zip(segments, stats, strict=True)),
            keep_gc=True,
        )
        if in_step:
            self.index.record_stamp(project, self._folder_stamp(project))

    def add(
        self, project: str, drafts: Sequence[Segment], *, dedupe: bool = False
    ) -> list[Segment]:
        """Write new segments (ids, times and counts filled in); with ``dedupe``, a draft
        whose text a segment of the same type already has returns that segment instead."""
        if dedupe:  # new files need no look at the old ones, only a comparison does
            self.refresh(project)
        now = self.clock()
        with self.locked(project):
            counts = self._counts(drafts)
            existing: dict[tuple[str, str], Segment] = {}
            if dedupe:
                hashes = list({text_hash for text_hash, _ in counts})
                for found in self.index.with_hashes(project, hashes):
                    existing[(found.type, found.text_hash)] = found
            fresh: list[Segment] = []
            result: list[Segment] = []
            for draft, (text_hash, tokens) in zip(drafts, counts, strict=True):
                known = existing.get((draft.type, text_hash))
                if known is not None:
                    result.append(known)
                    continue
                segment = attrs.evolve(
                    draft,
                    id=draft.id or new_id(now),
                    project_id=project,
                    created_at=draft.created_at or now,
                    last_touched_at=now,
                    text_hash=text_hash,
                    tokens=tokens,
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
        self.refresh(project, settled=True)
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
                    on_disk = parse_file(read_text(path), segment_id=segment_id, project_id=project)
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
            in_step = before == self.index.recorded_stamp(project)
            for segment_id in ids:
                if not valid_segment_id(segment_id):
                    continue
                with contextlib.suppress(FileNotFoundError):
                    self.segment_file(project, segment_id).unlink()
                    removed.append(segment_id)
            self.index.delete(project, removed)
            if in_step:
                self.index.record_stamp(project, self._folder_stamp(project))
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
