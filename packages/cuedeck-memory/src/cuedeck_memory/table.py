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
    from collections.abc import Callable

    from cuedeck_memory.database import MemoryDatabase

#: Code 0 of every interned column means "none".
NONE = 0


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

    _NUMERIC = (
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
        self.ids: np.ndarray[Any, Any] = np.empty(0, object)
        #: Rows with references only (most have none).
        self.refs: dict[int, tuple[str, ...]] = {}
        #: (project code, segment id) -> rowid.
        self.rowid_of: dict[tuple[int, str], int] = {}
        self._links: Links | None = None
        self._links_version = -2
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
            for rows in database.light_since(since):
                self._apply(rows, [])
                read += len(rows)
            self.version = version
            return read

    # -- a copy on disk, so that a new process need not read every row ------------------

    def dump(self, store_id: str) -> Callable[[], bytes]:
        """The table as it is now, as a function that makes its bytes (an uncompressed
        numpy archive stamped with the store's id and the version it is in step with):
        the copy is taken here, the slow encoding left to whoever calls it."""
        with self.lock:
            top = int(np.flatnonzero(self.alive).max()) + 1 if self.alive.any() else 0
            # Prefixed: numpy's savez has an argument named "file".
            arrays = {f"c_{name}": getattr(self, name)[:top].copy() for name, _ in self._NUMERIC}
            ids = self.ids[:top].copy()
            header = {
                "store_id": store_id,
                "version": self.version,
                "projects": list(self.projects.strings),
                "kinds": list(self.kinds.strings),
                "values": list(self.values.strings),
                "tagsets": list(self.tagsets.strings),
            }
            refs = dict(self.refs)

        def encode() -> bytes:
            import io

            arrays["ids"] = np.array(["" if i is None else i for i in ids.tolist()], dtype=str)
            header["refs"] = {str(k): v for k, v in refs.items()}
            arrays["header"] = np.array(json.dumps(header))
            buffer = io.BytesIO()
            np.savez(buffer, **arrays)
            return buffer.getvalue()

        return encode

    @classmethod
    def load(cls, data: bytes, store_id: str, newest: int) -> SegmentTable | None:
        """A table from :meth:`dump`'s bytes, or None when they are of another store,
        ahead of it (``newest``: its version), or unreadable."""
        import io

        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as archive:
                header = json.loads(str(archive["header"]))
                if header["store_id"] != store_id or header["version"] > newest:
                    return None
                table = cls()
                top = len(archive["ids"])
                table._grow(top)
                for name, dtype in cls._NUMERIC:
                    getattr(table, name)[:top] = archive[f"c_{name}"].astype(dtype, copy=False)
                ids = archive["ids"].astype(object)
        except (OSError, ValueError, KeyError, TypeError):
            return None
        ids[ids == ""] = None
        table.ids[:top] = ids
        for interned, strings in (
            (table.projects, header["projects"]),
            (table.kinds, header["kinds"]),
            (table.values, header["values"]),
            (table.tagsets, header["tagsets"]),
        ):
            interned.strings = list(strings)
            interned.codes = {value: code for code, value in enumerate(strings)}
        table.refs = {int(k): tuple(v) for k, v in header["refs"].items()}
        live = np.flatnonzero(table.alive[:top])
        table.rowid_of = dict(
            zip(
                zip(table.project[live].tolist(), ids[live].tolist(), strict=True),
                live.tolist(),
                strict=True,
            )
        )
        table.version = int(header["version"])
        return table

    def _grow(self, top: int) -> None:
        if top < self.capacity:
            return
        size = max(1024, top + 1, self.capacity * 2)
        for name, dtype in self._NUMERIC:
            old = getattr(self, name)
            new = np.zeros(size, dtype)
            new[: len(old)] = old
            setattr(self, name, new)
        ids = np.empty(size, object)
        ids[: len(self.ids)] = self.ids
        self.ids = ids
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
        self._grow(max(rowids))
        at = np.fromiter(rowids, np.int64, len(rowids))
        project_codes = [self.projects.code(p) for p in projects]
        self.alive[at] = True
        self.project[at] = project_codes
        self.kind[at] = [self.kinds.code(k) for k in kinds]
        code = self.values.code
        self.task[at] = [code(t) for t in tasks]
        self.file[at] = [code(f) for f in files]
        self.topic[at] = [code(t) for t in topics]
        self.pinned[at] = pinned
        self.stashed[at] = [tier == "stashed" for tier in tiers]
        self.tokens[at] = tokens
        self.created[at] = created
        self.touched[at] = touched
        self.survived[at] = survived
        self.hash64[at] = hashes
        tagset = self.tagsets.code
        self.tagset[at] = [0 if t == "[]" else tagset(t) for t in tags]
        self.ids[at] = ids
        self.rowid_of.update(zip(zip(project_codes, ids, strict=True), rowids, strict=True))
        for rowid, ref_json in zip(rowids, refs, strict=True):
            if ref_json != "[]":
                self.refs[rowid] = tuple(json.loads(ref_json))
            else:
                self.refs.pop(rowid, None)

    def _forget(self, rowid: int) -> None:
        self.alive[rowid] = False
        segment_id = self.ids[rowid]
        if segment_id is not None:
            self.rowid_of.pop((int(self.project[rowid]), segment_id), None)
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
        return self.rowid_of.get((self.projects.find(project), segment_id))

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
        return str(self.ids[rowid])

    def project_of(self, rowid: int) -> str:
        """The project of a live row."""
        return str(self.projects.strings[int(self.project[rowid])])

    def links(self) -> Links:
        """Every reference between live segments of one project, and every reference to
        a card, as of this version (worked out once per version)."""
        with self.lock:
            if self._links is None or self._links_version != self.version:
                sources: list[int] = []
                targets: list[int] = []
                cards: list[tuple[int, str]] = []
                rowid_of = self.rowid_of
                for source, refs in self.refs.items():
                    project = int(self.project[source])
                    for ref in dict.fromkeys(refs):
                        target = rowid_of.get((project, ref))
                        if target is None:
                            card = card_of(ref)
                            if card is not None:
                                cards.append((source, card))
                        elif target != source:
                            sources.append(source)
                            targets.append(target)
                self._links = Links(
                    np.asarray(sources, np.int64), np.asarray(targets, np.int64), cards
                )
                self._links_version = self.version
            return self._links

    def refcounts(self, rowids: list[int]) -> dict[int, int]:
        """How many live segments of the same project refer to each of ``rowids``."""
        links = self.links()
        wanted = np.asarray(rowids, np.int64)
        counts = np.bincount(links.targets, minlength=self.capacity)
        return {int(r): int(counts[r]) for r in wanted if 0 <= r < len(counts)}
