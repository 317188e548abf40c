"""Every segment's fields but its text, in memory, as columns indexed by rowid.

What usage, GC and the stash filters read for every segment of a project, read once
from the store and then kept in step: before each use the table asks the store for the
version of its last write and reads only the rows written (and the rowids removed)
since. A long-lived server thus reads nothing when nothing changed, a few rows after a
capture, and every row once after a restart. Numbers are numpy arrays (so a usage
report over 100,000 segments is a few vector operations); strings are interned codes.
"""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from cuedeck_memory.segments import card_of

if TYPE_CHECKING:
    from collections.abc import Iterable

    from cuedeck_memory.database import MemoryDatabase

#: Code 0 of every interned column means "none".
NONE = 0
_NO_ROWS = np.zeros(0, np.int64)
#: Fields a write may set that the table takes as they are (see took_fields).
_PLAIN_FIELDS = frozenset({"tier", "pinned", "last_touched_at"})


class Interned:
    """Strings and their codes (0 is None)."""

    def __init__(self) -> None:
        self.strings: list[str | None] = [None]
        self.codes: dict[str | None, int] = {None: NONE}

    def code(self, value: str | None) -> int:
        """The code of ``value``, made on first sight."""
        found = self.codes.get(value)
        if found is None:
            found = self.codes[value] = len(self.strings)
            self.strings.append(value)
        return found

    def codes_of(self, values: Iterable[str | None]) -> list[int]:
        """The code of each of ``values`` (made on first sight)."""
        get, code = self.codes.get, self.code
        return [found if (found := get(value)) is not None else code(value) for value in values]

    def find(self, value: str | None) -> int:
        """The code of ``value``, or -1 when never seen (matches no row)."""
        return self.codes.get(value, -1)


@attrs.frozen(eq=False)
class Links:
    """References as rowid pairs (``sources[n]`` refers to ``targets[n]``), and the
    (rowid, card id) of every reference to a card."""

    sources: np.ndarray[Any, Any]
    targets: np.ndarray[Any, Any]
    cards: list[tuple[int, str]]


class SegmentTable:
    """The light fields of every segment in the store, by rowid."""

    NUMERIC = (
        ("alive", np.bool_),
        ("project", np.int32),
        ("kind", np.int32),
        ("task", np.int32),
        ("file", np.int32),
        ("topic", np.int32),
        ("pinned", np.bool_),
        ("stashed", np.bool_),
        ("tokens", np.int64),
        ("created", np.float64),
        ("touched", np.float64),
        ("survived", np.int32),
        ("hash64", np.int64),
        ("tagset", np.int32),
    )

    def __init__(self) -> None:
        self.version = -1
        self.lock = threading.RLock()
        self.projects = Interned()
        self.kinds = Interned()
        self.values = Interned()  # task ids, file paths, topics
        #: Tag lists as their JSON text ("[]" is none): rows share few distinct ones.
        self.tagsets = Interned()
        self.capacity = 0
        self.alive = np.zeros(0, np.bool_)
        self.project = np.zeros(0, np.int32)
        self.kind = np.zeros(0, np.int32)
        self.task = np.zeros(0, np.int32)
        self.file = np.zeros(0, np.int32)
        self.topic = np.zeros(0, np.int32)
        self.pinned = np.zeros(0, np.bool_)
        self.stashed = np.zeros(0, np.bool_)
        self.tokens = np.zeros(0, np.int64)
        self.created = np.zeros(0, np.float64)
        self.touched = np.zeros(0, np.float64)
        self.survived = np.zeros(0, np.int32)
        self.hash64 = np.zeros(0, np.int64)
        self.tagset = np.zeros(0, np.int32)
        self._ids: np.ndarray[Any, Any] = np.empty(0, object)
        #: Ids not made into strings yet (a table read from its copy): the copy's block
        #: of ids, and where each row's starts and ends in it.
        self._id_block: tuple[bytes, np.ndarray[Any, Any], np.ndarray[Any, Any]] | None = None
        self._ids_read = 0
        #: Rows with references only (most have none).
        self.refs: dict[int, tuple[str, ...]] = {}
        #: Project code -> segment id -> rowid, of live rows (made on first use).
        self._by_id: dict[int, dict[str, int]] = {}
        #: Project code -> GC runs, as of this version.
        self.runs: dict[int, int] = {}
        self._links: Links | None = None
        self._links_version = -2
        #: Rows inserted since the links were worked out (None: rows were rewritten or
        #: removed, so the links are worked out again), and the references that named
        #: no segment then (a row inserted later may be what one names).
        self._inserted: list[int] | None = None
        self.unresolved: set[tuple[int, str]] = set()
        self._lengths = (1, 1.0)
        self._lengths_version = -2

    # -- keeping in step ---------------------------------------------------------------

    def sync(self, database: MemoryDatabase) -> int:
        """Read what was written since the last look (everything the first time); how
        many rows were read."""
        with self.lock:
            version = database.version()
            if version == self.version:
                return 0
            since = max(self.version, 0)
            removed = database.removed_since(since) if since else []
            self._apply([], removed)
            read = len(removed)
            # A GC run writes no row: a working row that is not read again below kept its
            # tier since the last look, so it survived every run since; one read again
            # comes with its count up to date.
            for project, runs in database.runs_since(since).items():
                code = self.projects.code(project)
                self._survive(code, runs - self.runs.get(code, 0))
            for rows in database.light_since(since):
                self._apply(rows, [])
                read += len(rows)
            self.version = version
            return read

    def took(self, rows: list[tuple[Any, ...]], version: int) -> bool:
        """Take the rows (:data:`~cuedeck_memory.database.LIGHT`) that the write of
        ``version`` inserted, when the table is in step with the version before it;
        whether it was (else :meth:`sync` reads them later)."""
        with self.lock:
            if self.version != version - 1:
                return False
            self._apply(rows, [])
            self.version = version
            return True

    def took_fields(self, rowids: list[int], fields: dict[str, Any], version: int) -> bool:
        """Set ``fields`` (``tier``, ``pinned``, ``last_touched_at``) of ``rowids`` as
        the write of ``version`` set them in the store, when the table is in step with the
        version before it; whether it was (else :meth:`sync` reads the rows later)."""
        with self.lock:
            if self.version != version - 1 or not fields.keys() <= _PLAIN_FIELDS:
                return False
            at = np.asarray(rowids, np.int64)
            for name, value in fields.items():
                if name == "tier":
                    self.stashed[at] = value == "stashed"
                elif name == "pinned":
                    self.pinned[at] = bool(value)
                else:
                    self.touched[at] = value
            self.version = version
            return True

    def took_survived(self, project: str, version: int) -> int | None:
        """Count one more GC run survived by every working row of ``project``, as the
        write of ``version`` did in the store, when the table is in step with the version
        before it; how many rows that was (None: not in step, :meth:`sync` reads them)."""
        with self.lock:
            if self.version != version - 1:
                return None
            working = self._survive(self.projects.code(project), 1)
            self.version = version
            return working

    def _survive(self, code: int, runs: int) -> int:
        """Count ``runs`` more GC runs of project ``code`` for its working rows; how
        many rows those are."""
        self.runs[code] = self.runs.get(code, 0) + runs
        top = self.capacity
        working = self.alive[:top] & (self.project[:top] == code) & ~self.stashed[:top]
        if runs:
            self.survived[:top][working] += runs
        return int(working.sum())

    @property
    def ids(self) -> np.ndarray[Any, Any]:
        """Segment ids by rowid (None where no live row is)."""
        if self._id_block is not None:
            block, starts, _ = self._id_block
            self._id_block = None
            top = len(starts)
            made = np.array(block.decode("utf-8").split("\n") if top else [], dtype=object)
            made[~self.alive[:top]] = None
            self._ids[:top] = made
        return self._ids

    def took_id_block(self, block: bytes, top: int) -> None:
        """Take the ids of rows ``0..top`` as one block, a line each, made into strings
        when first needed (a restarted server's first answer names a few of them)."""
        if not top:
            if block:
                raise ValueError("ids for no rows")
            return
        lines = np.flatnonzero(np.frombuffer(block, np.uint8) == ord("\n"))
        ends = np.append(lines, len(block))
        if len(ends) != top:
            raise ValueError("the block does not hold one id per row")
        self._id_block = (block, np.concatenate([[0], lines + 1]), ends)

    def segment_ids(self, rowids: np.ndarray[Any, Any]) -> list[str]:
        """The ids of live rows."""
        if self._id_block is None:
            found: list[str] = self._ids[rowids].tolist()
            return found
        block, starts, ends = self._id_block
        # Once replies have asked for a quarter of them, making them all is cheaper.
        self._ids_read += len(rowids)
        if self._ids_read > len(starts) // 4:
            found = self.ids[rowids].tolist()
            return found
        return [
            block[a:b].decode("utf-8")
            for a, b in zip(starts[rowids].tolist(), ends[rowids].tolist(), strict=True)
        ]

    def grow(self, top: int) -> None:
        """Make room for rowids up to ``top``."""
        if top < self.capacity:
            return
        size = max(1024, top + 1, self.capacity * 2)
        for name, dtype in self.NUMERIC:
            old = getattr(self, name)
            new = np.zeros(size, dtype)
            new[: len(old)] = old
            setattr(self, name, new)
        ids = np.empty(size, object)
        ids[: len(self._ids)] = self._ids
        self._ids = ids
        self.capacity = size

    def _apply(self, rows: list[tuple[Any, ...]], removed: list[int]) -> None:
        for rowid in removed:
            if rowid < self.capacity and self.alive[rowid]:
                self._forget(rowid)
        if not rows:
            return
        (
            rowids,
            projects,
            ids,
            kinds,
            tasks,
            files,
            topics,
            tags,
            refs,
            pinned,
            tiers,
            tokens,
            created,
            touched,
            survived,
            hashes,
        ) = zip(*rows, strict=True)
        self.grow(max(rowids))
        at = np.fromiter(rowids, np.int64, len(rowids))
        fresh = ~self.alive[at]
        if self._inserted is not None:
            if fresh.all():
                self._inserted.extend(rowids)
            else:
                self._inserted = None
        project_codes = self.projects.codes_of(projects)
        self.alive[at] = True
        self.project[at] = project_codes
        self.kind[at] = self.kinds.codes_of(kinds)
        self.task[at] = self.values.codes_of(tasks)
        self.file[at] = self.values.codes_of(files)
        self.topic[at] = self.values.codes_of(topics)
        self.pinned[at] = pinned
        self.stashed[at] = [tier == "stashed" for tier in tiers]
        self.tokens[at] = tokens
        self.created[at] = created
        self.touched[at] = touched
        self.survived[at] = survived
        self.hash64[at] = hashes
        # "[]" (no tags) is code 0, as None is.
        self.tagset[at] = self.tagsets.codes_of(None if t == "[]" else t for t in tags)
        # A row keeps its project and id for life: only new rows are indexed by id (a row
        # read again keeps the id strings it has, rather than holding two copies).
        for n in np.flatnonzero(fresh).tolist():
            self.ids[rowids[n]] = ids[n]
            if (known := self._by_id.get(project_codes[n])) is not None:
                known[ids[n]] = rowids[n]
        for rowid, ref_json in zip(rowids, refs, strict=True):
            if ref_json != "[]":
                self.refs[rowid] = tuple(json.loads(ref_json))
            else:
                self.refs.pop(rowid, None)

    def _forget(self, rowid: int) -> None:
        self._inserted = None
        self.alive[rowid] = False
        segment_id = self.ids[rowid]
        if segment_id is not None:
            self._by_id.get(int(self.project[rowid]), {}).pop(segment_id, None)
        self.ids[rowid] = None
        self.refs.pop(rowid, None)

    # -- reading -----------------------------------------------------------------------

    def rows(self, project: str | None, *, stashed: bool | None = None) -> np.ndarray[Any, Any]:
        """Rowids of live segments of ``project`` (every project when None), in one tier
        (``stashed`` True or False) or both."""
        top = self.capacity
        mask = self.alive[:top].copy()
        if project is not None:
            mask &= self.project[:top] == self.projects.find(project)
        if stashed is not None:
            mask &= self.stashed[:top] == stashed
        return np.flatnonzero(mask)

    def rowid(self, project: str, segment_id: str) -> int | None:
        """The rowid of a segment, or None."""
        return self.ids_of(self.projects.find(project)).get(segment_id)

    def ids_of(self, code: int) -> dict[str, int]:
        """Segment id -> rowid of the live rows of project ``code`` (worked out on first
        use, then kept in step: a table read from its copy answers before making any)."""
        with self.lock:
            found = self._by_id.get(code)
            if found is None:
                if code < 0:
                    return {}
                top = self.capacity
                rows = np.flatnonzero(self.alive[:top] & (self.project[:top] == code))
                found = dict(zip(self.ids[rows].tolist(), rows.tolist(), strict=True))
                self._by_id[code] = found
            return found

    def __len__(self) -> int:
        """How many live rows the table holds."""
        return int(self.alive[: self.capacity].sum())

    def length_stats(self) -> tuple[int, float]:
        """How many live segments there are, and their mean length in tokens."""
        with self.lock:
            if self._lengths_version != self.version:
                live = self.alive[: self.capacity]
                count = int(live.sum())
                mean = float(self.tokens[: self.capacity][live].mean()) if count else 1.0
                self._lengths = (max(1, count), max(1.0, mean))
                self._lengths_version = self.version
            return self._lengths

    def with_any_tag(self, rows: np.ndarray[Any, Any], tags: set[str]) -> np.ndarray[Any, Any]:
        """The ``rows`` that have at least one of ``tags``."""
        codes = [
            code
            for code, text in enumerate(self.tagsets.strings)
            if text is not None and tags.intersection(json.loads(text))
        ]
        return rows[np.isin(self.tagset[rows], codes)]

    def segment_id(self, rowid: int) -> str:
        """The id of a live row."""
        return self.segment_ids(np.array([rowid]))[0]

    def project_of(self, rowid: int) -> str:
        """The project of a live row."""
        return str(self.projects.strings[int(self.project[rowid])])

    def links(self) -> Links:
        """Every reference between live segments of one project, and every reference to
        a card, as of this version (worked out once per version; after inserts only,
        only the new rows' references are read)."""
        with self.lock:
            if self._links is not None and self._links_version == self.version:
                return self._links
            inserted = self._inserted
            if (
                self._links is None
                or inserted is None
                or any((int(self.project[r]), self.ids[r]) in self.unresolved for r in inserted)
            ):
                self.unresolved = set()
                self._links = self._resolve(self.refs, Links(_NO_ROWS, _NO_ROWS, []))
            else:
                new = {r: self.refs[r] for r in inserted if r in self.refs}
                self._links = self._resolve(new, self._links)
            self._inserted = []
            self._links_version = self.version
            return self._links

    def took_links(self, links: Links, unresolved: set[tuple[int, str]]) -> None:
        """Take ``links`` as those of this version, with the references that named no
        segment then (a table read from its copy on disk)."""
        with self.lock:
            self._links, self.unresolved = links, unresolved
            self._links_version = self.version
            self._inserted = []

    def _resolve(self, refs: dict[int, tuple[str, ...]], links: Links) -> Links:
        """``links`` with the references ``refs`` adds (rowid -> the ids it names)."""
        sources: list[int] = []
        targets: list[int] = []
        cards = list(links.cards)
        for source, named in refs.items():
            project = int(self.project[source])
            of_project = self.ids_of(project)
            for ref in dict.fromkeys(named):
                target = of_project.get(ref)
                if target is None:
                    self.unresolved.add((project, ref))
                    card = card_of(ref)
                    if card is not None:
                        cards.append((source, card))
                elif target != source:
                    sources.append(source)
                    targets.append(target)
        return Links(
            np.concatenate([links.sources, np.asarray(sources, np.int64)]),
            np.concatenate([links.targets, np.asarray(targets, np.int64)]),
            cards,
        )

    def refcounts(self, rowids: list[int]) -> dict[int, int]:
        """How many live segments of the same project refer to each of ``rowids``."""
        links = self.links()
        wanted = np.asarray(rowids, np.int64)
        counts = np.bincount(links.targets, minlength=self.capacity)
        return {int(r): int(counts[r]) for r in wanted if 0 <= r < len(counts)}
