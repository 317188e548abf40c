"""The memory store: segments, current tasks and snapshots of one workspace.

Everything lives in one SQLite file (:mod:`cuedeck_memory.database`); the light fields
of every segment are kept in memory as columns (:mod:`cuedeck_memory.table`) in step
with it. Everything the store writes passes the workspace's maskers first (``[memory]
mask_on_capture``): every string of a segment, a current task, a snapshot's name and
task. Plain files come out through ``cue memory export`` and go back in through ``cue
memory import`` (:mod:`cuedeck_memory.archive`); the segment files an older CueDeck
wrote are moved in once, on first open.
"""

from __future__ import annotations

import atexit
import contextlib
import threading
import time
from typing import TYPE_CHECKING, Any

import attrs

from cuedeck.errors import FileNotFound, InvalidInput
from cuedeck.layout import CACHE_DIR
from cuedeck_memory.database import MemoryDatabase, hash64, text_hash
from cuedeck_memory.masker import Masker, store_masker
from cuedeck_memory.paths import MEMORY_DIR
from cuedeck_memory.segments import Segment, check_project, new_id, new_ids
from cuedeck_memory.settings import MemorySettings
from cuedeck_memory.table import SegmentTable

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from cuedeck.workspace import Workspace

#: The store, relative to the workspace.
STORE_PATH = f"{MEMORY_DIR}/memory.sqlite3"
#: A copy of the in-memory table (rebuildable), so that a restart reads only what
#: changed since it was written.
TABLE_PATH = f"{CACHE_DIR}/memory-table.bin"
#: Where an older CueDeck kept that copy (a numpy archive); removed by the next write.
OLD_TABLE_PATH = f"{CACHE_DIR}/memory-table.npz"
#: Rows changed since the copy was written that make it worth writing again (or half
#: the table, when that is more: a bulk write is not slowed by copy after copy).
RESAVE_ROWS = 5000
#: Rows changed that make a closing process write the copy, so that the next one reads
#: only what other processes wrote since.
CLOSE_RESAVE_ROWS = 1000


class MemoryStore:
    """The memory of one workspace (``workspace.service("context")``)."""

    def __init__(self, workspace: Workspace, *, clock: Callable[[], float] = time.time) -> None:
        self.workspace = workspace
        self.root = workspace.root
        self.settings = workspace.config.section("memory", MemorySettings)
        self.database = MemoryDatabase(workspace.root / STORE_PATH)
        self.clock = clock
        self._table = SegmentTable()
        self._opened = False
        self._loaded = False  # the table: read from its copy on first use
        self._open_lock = threading.Lock()
        #: Rows read since the table's copy on disk was last written or read.
        self._unsaved = 0
        self._saver: threading.Thread | None = None

    def __repr__(self) -> str:
        return f"MemoryStore({str(self.root)!r})"

    def close(self) -> None:
        """Bring the table's copy up to date (when it lags by :data:`CLOSE_RESAVE_ROWS`),
        then close the store's connection."""
        if self._saver is not None:
            self._saver.join()
        if self._loaded and self._unsaved >= CLOSE_RESAVE_ROWS:
            self._save_table()
            if self._saver is not None:
                self._saver.join()
        self.database.close()

    def _open(self) -> MemoryDatabase:
        """The database, with an older CueDeck's segment files moved in (once)."""
        if not self._opened:
            with self._open_lock:
                if not self._opened:
                    from cuedeck_memory.legacy import Mover, migrate_legacy

                    mover = Mover(self.workspace.token_counter.count, self.clock, self.masker)
                    migrate_legacy(self.root, self.database, mover)
                    # A server that ends by its stdin closing still empties its log.
                    atexit.register(self.close)
                    self._opened = True
        return self.database

    def _load(self) -> None:
        """The table from its copy on disk when that copy is of this store (once, on the
        table's first use: a call that reads no segment fields never loads it)."""
        with self._open_lock:
            if self._loaded:
                return
            from cuedeck_memory.table_copy import load

            try:
                data = (self.root / TABLE_PATH).read_bytes()
            except OSError:
                data = b""
            loaded = data and load(data, self.database.store_id(), self.database.version())
            if loaded:
                self._table = loaded
            self._loaded = True

    def _present(self) -> bool:
        """Whether there is a store to read (reading never creates one: a scene or a
        doctor run in a workspace without memory leaves no file behind)."""
        if self._opened or self.database.path.is_file():
            return True
        from cuedeck_memory.legacy import has_legacy

        return has_legacy(self.root)

    @property
    def table(self) -> SegmentTable:
        """Every segment's light fields, in step with the store."""
        if not self._present():
            return self._table
        database = self._open()
        if not self._loaded:
            self._load()
        self._changed(self._table.sync(database))
        return self._table

    def _took(self, rows: list[tuple[Any, ...]], version: int) -> None:
        """Bring the table in step with the write of ``version`` this process just
        committed (``rows``: the light fields it inserted) without reading them back; a
        table further behind reads from the store at its next use."""
        if self._loaded and self._table.took(rows, version):
            self._changed(len(rows))

    def _changed(self, count: int) -> None:
        """Count rows the table took since its copy on disk was written; write a new copy
        when they are many."""
        if count:
            self._unsaved += count
            if self._unsaved >= max(RESAVE_ROWS, len(self._table) // 2):
                self._save_table()

    def _save_table(self) -> None:
        """Write the table's copy in a thread (not a daemon: a short process finishes it
        before it exits)."""
        if self._saver is not None and self._saver.is_alive():
            return
        from cuedeck_memory.table_copy import dump

        self._unsaved = 0
        write_copy = dump(self._table, self.database.store_id())

        def write() -> None:
            # A copy that cannot be written is read from the store next time: no failure.
            with contextlib.suppress(OSError):
                write_copy(self.root / TABLE_PATH)
                (self.root / OLD_TABLE_PATH).unlink(missing_ok=True)

        self._saver = threading.Thread(target=write, name="cuedeck-memory-table", daemon=False)
        self._saver.start()

    # -- masking: everything written passes here ---------------------------------------

    def masker(self) -> Masker:
        """What every string the store writes passes (identity with masking off)."""
        return store_masker(self.workspace, self.settings.mask_on_capture)

    def _masked(self, segment: Segment, mask: Masker, **fields: Any) -> Segment:
        """``segment`` with every string masked (and ``fields`` set)."""
        if "text" not in fields:
            fields["text"] = mask(segment.text) or ""
        return attrs.evolve(
            segment,
            type=mask(segment.type) or "note",
            task_id=mask(segment.task_id),
            tags=tuple(mask(t) or "" for t in segment.tags),
            file_path=mask(segment.file_path),
            topic_id=mask(segment.topic_id),
            refs=tuple(mask(r) or "" for r in segment.refs),
            **fields,
        )

    # -- writing segments --------------------------------------------------------------

    def add(
        self, project: str, drafts: Sequence[Segment], *, dedupe: bool = False
    ) -> list[Segment]:
        """Write new segments (masked; ids, times and counts filled in); with ``dedupe``,
        a draft whose text a segment of the same type already has returns that one."""
        check_project(project)
        database = self._open()
        now = self.clock()
        count = self.workspace.token_counter.count
        ids = iter(new_ids(now, len(drafts)))
        texts, masked = self.masker().batch(
            [d.text for d in drafts],
            (
                value
                for d in drafts
                for value in (d.type, d.task_id, d.file_path, d.topic_id, *d.tags, *d.refs)
            ),
        )

        def mask(value: str | None) -> str | None:
            return masked.get(value, value)

        # Built whole, not evolved from the draft: this runs for every captured segment.
        counted = [
            Segment(
                id=draft.id or next(ids),
                type=mask(draft.type) or "note",
                text=text,
                project_id=project,
                created_at=draft.created_at or now,
                task_id=mask(draft.task_id),
                tags=tuple(mask(t) or "" for t in draft.tags) if draft.tags else (),
                file_path=mask(draft.file_path),
                line_range=draft.line_range,
                topic_id=mask(draft.topic_id),
                refs=tuple(mask(r) or "" for r in draft.refs) if draft.refs else (),
                pinned=draft.pinned,
                tier=draft.tier,
                tokens=draft.tokens or count(text),
                text_hash=draft.text_hash,
                last_touched_at=draft.last_touched_at or now,
                gc_survival_count=draft.gc_survival_count,
            )
            for draft, text in zip(drafts, texts, strict=True)
        ]
        hashes = [text_hash(s.text) for s in counted]
        with database.writing() as version:
            table = self.table
            existing: dict[tuple[str, int], int] = {}
            if dedupe:
                import numpy as np

                rows = table.rows(project)
                wanted = np.array([hash64(d) for d in hashes], np.int64)
                for rowid in rows[np.isin(table.hash64[rows], wanted)]:
                    kind = table.kinds.strings[int(table.kind[rowid])] or ""
                    existing[(kind, int(table.hash64[rowid]))] = int(rowid)
            fresh: list[Segment] = []
            fresh_hashes: list[str] = []
            result: list[Segment | int] = []
            for segment, digest in zip(counted, hashes, strict=True):
                key = (segment.type, hash64(digest))
                if dedupe and key in existing:
                    result.append(existing[key])
                    continue
                if dedupe:
                    existing[key] = -1 - len(fresh)
                    result.append(existing[key])
                else:
                    result.append(segment)
                fresh.append(segment)
                fresh_hashes.append(digest)
            light = database.insert(fresh, fresh_hashes, version) if fresh else []
            known = database.by_rowids([r for r in result if isinstance(r, int) and r >= 0])
        self._took(light, version)
        out: list[Segment] = []
        for item in result:
            if isinstance(item, Segment):
                out.append(item)
            elif item < 0:
                out.append(fresh[-1 - item])
            else:
                out.append(known[item])
        return out

    def change(
        self, project: str, ids: Sequence[str], edit: Callable[[Segment], Segment | None]
    ) -> tuple[list[Segment], list[str]]:
        """Apply ``edit`` to each segment as stored now (inside the write lock); unchanged
        ones are not written. The segments written, and the ids that name none."""
        database = self._open()
        mask = self.masker()
        with database.writing() as version:
            table = self.table
            wanted = list(dict.fromkeys(ids))
            rowids = {i: table.rowid(project, i) for i in wanted}
            current = database.by_rowids([r for r in rowids.values() if r is not None])
            written: list[Segment] = []
            missing: list[str] = []
            for segment_id in wanted:
                rowid = rowids[segment_id]
                segment = current.get(rowid) if rowid is not None else None
                if segment is None:
                    missing.append(segment_id)
                    continue
                edited = edit(segment)
                if edited is not None and edited != segment:
                    edited = self._masked(edited, mask)
                    if edited.text != segment.text:
                        edited = attrs.evolve(
                            edited, tokens=self.workspace.token_counter.count(edited.text)
                        )
                    written.append(edited)
            database.update(written, version)
        return written, missing

    def set_fields(
        self,
        project: str,
        ids: Sequence[str],
        fields: dict[str, Any],
        *,
        allow: Callable[[bool, bool], bool] = lambda pinned, stashed: True,
    ) -> tuple[list[str], list[str], list[str]]:
        """Set plain fields (``tier``, ``pinned``) of segments, as they are stored now:
        ``allow(pinned, stashed)`` decides per segment. The ids changed, refused and
        unknown."""
        database = self._open()
        with database.writing() as version:
            table = self.table
            changed: list[str] = []
            refused: list[str] = []
            missing: list[str] = []
            rowids: list[int] = []
            for segment_id in dict.fromkeys(ids):
                rowid = table.rowid(project, segment_id)
                if rowid is None:
                    missing.append(segment_id)
                elif allow(bool(table.pinned[rowid]), bool(table.stashed[rowid])):
                    changed.append(segment_id)
                    rowids.append(rowid)
                else:
                    refused.append(segment_id)
            if rowids:
                database.set_fields(rowids, version, **fields)
        if self._loaded and self._table.took_fields(rowids, fields, version):
            self._changed(len(rowids))
        return changed, refused, missing

    def touch(self, project: str, ids: Sequence[str], now: float) -> None:
        """Set the last touch of segments to ``now``."""
        self.set_fields(project, ids, {"last_touched_at": now})

    def survived(self, project: str) -> None:
        """Count one more GC run survived by every working segment of ``project``."""
        database = self._open()
        with database.writing() as version:
            table = self.table  # in step before this write, so that it takes it after
            database.survived(project, version)
        # No row changed: the copy on disk stays good (a new process adds the runs).
        table.took_survived(project, version)

    def delete(self, project: str, ids: Sequence[str]) -> list[str]:
        """Remove segments; the ids removed."""
        database = self._open()
        with database.writing() as version:
            table = self.table
            found = [(i, table.rowid(project, i)) for i in dict.fromkeys(ids)]
            present = [(i, r) for i, r in found if r is not None]
            database.remove([r for _, r in present], version)
        return [i for i, _ in present]

    # -- reading -----------------------------------------------------------------------

    def fetch(self, rowids: Sequence[int]) -> dict[int, Segment]:
        """Whole segments (text included) by rowid."""
        if not rowids or not self._present():
            return {}
        return self._open().by_rowids([int(r) for r in rowids])

    def get(self, project: str, ids: Sequence[str]) -> dict[str, Segment]:
        """The segments of ``ids`` that exist, by id."""
        table = self.table
        rowids = [r for r in (table.rowid(project, i) for i in ids) if r is not None]
        return {s.id: s for s in self.fetch(rowids).values()}

    def segment(self, project: str, segment_id: str) -> Segment:
        """One segment, or FileNotFound (1001) with similar ids."""
        from cuedeck.errors import did_you_mean, suggestion_text

        check_project(project)
        found = self.get(project, [segment_id]).get(segment_id)
        if found is None:
            table = self.table
            ids = [table.segment_id(int(r)) for r in table.rows(project)]
            matches = did_you_mean(segment_id, ids)
            raise FileNotFound(
                f"no segment {segment_id!r} in project {project!r}",
                field="segment_id",
                suggestion=suggestion_text(matches),
                candidates=matches,
            )
        return found

    def projects(self) -> list[str]:
        """Projects with a segment or a current task, sorted."""
        return self._open().projects() if self._present() else []

    # -- project state and snapshots ---------------------------------------------------

    def project(self, project_id: str | None) -> str:
        """``project_id`` checked, or the workspace's project (``[memory] project``)
        when None."""
        if project_id is not None:
            return check_project(project_id)
        try:
            return check_project(self.settings.project)
        except InvalidInput as exc:
            raise InvalidInput(f"[memory] project: {exc.message}", field="project") from None

    def current_task(self, project: str) -> str | None:
        """The project's current task: the one set (context_set_current_task), else the
        workspace's active card (the one a scene is built for), else None."""
        check_project(project)
        chosen = self._open().current_task(project) if self._present() else None
        return chosen or self._active_card()

    def _active_card(self) -> str | None:
        """The id of the card ``cue scene`` would pack, or None when there is none."""
        from cuedeck.errors import CueError
        from cuedeck.scene.selection import find_card

        try:
            card = find_card(self.workspace)
        except CueError:
            return None
        return card.path.rsplit("/", 1)[-1].removesuffix(".md")

    def set_current_task(self, project: str, task_id: str | None) -> str | None:
        """Set (None clears) the current task, masked; the previous one."""
        check_project(project)
        database = self._open()
        task = self.masker()(task_id) if task_id else None
        with database.writing():
            previous = database.current_task(project)
            database.set_current_task(project, task, self.clock())
        return previous

    def save_snapshot(self, project: str, record: dict[str, Any]) -> dict[str, Any]:
        """Keep a snapshot record (name and task masked, ``snapshot_id`` filled in)."""
        check_project(project)
        mask = self.masker()
        now = self.clock()
        record = {
            **record,
            "name": mask(record.get("name")),
            "task_id": mask(record.get("task_id")),
            "files": {mask(path): digest for path, digest in (record.get("files") or {}).items()},
            "commit": record.get("commit"),
            "snapshot_id": f"snap-{new_id(now)}",
            "created_at": now,
        }
        database = self._open()
        with database.writing():
            database.add_snapshot(project, record)
        return record

    def snapshot(self, snapshot_id: str) -> dict[str, Any] | None:
        """The snapshot ``snapshot_id`` names, in any project, or None."""
        return self._open().snapshot(snapshot_id) if self._present() else None

    def snapshots(self, project: str) -> list[dict[str, Any]]:
        """Every snapshot of ``project``, oldest first."""
        check_project(project)
        return self._open().snapshots(project) if self._present() else []
