"""The memory store on disk: one SQLite file, ``.cuedeck/memory/memory.sqlite3``.

Every segment is one row: its fields, and its text stored once, as it is. A contentless
full-text table indexes the texts for keyword ranking (the text is not kept twice; the
tables are :mod:`cuedeck_memory.schema`), merged by a thread after commits rather than
inside them (:mod:`cuedeck_memory.upkeep`). Projects' current tasks and task snapshots
are rows too.
WAL with ``synchronous = NORMAL``: a write acknowledged to a caller is in the log, so a
process killed or crashed mid-write loses only the transaction it had not committed
(a power loss may also take the last commits before a checkpoint synced them). Writers take
SQLite's write lock (``BEGIN IMMEDIATE``), so two processes capturing at once queue
rather than lose anything; readers never wait for writers.

Every write transaction takes the next ``version`` and stamps the rows it writes (and
the ids it removes) with it, so a process that keeps the fields in memory
(:class:`~cuedeck_memory.table.SegmentTable`) reads only what changed since it last looked.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import re
import sqlite3
import zlib
from typing import TYPE_CHECKING, Any, TypeVar

from cuedeck.system.databases import open_db
from cuedeck_memory.schema import SCHEMA_VERSION, prepare, schema_of
from cuedeck_memory.segments import Segment
from cuedeck_memory.upkeep import Upkeep, defer_merges

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from pathlib import Path

T = TypeVar("T")
#: The full-text index of the texts (FTS5), merged after commits (:mod:`.upkeep`).
INDEX_TABLE = "segments_fts"

#: The GC runs of a row's project (schema.py: a run is counted per project, not per row).
_RUNS = "COALESCE((SELECT runs FROM gc_runs WHERE gc_runs.project = segments.project), 0)"
#: A row's survival count: what it stores, plus the runs since it last did while working.
SURVIVED = f"gc_survival_count + CASE WHEN tier = 'working' THEN {_RUNS} - runs_seen ELSE 0 END"
#: The fields of a row other than its text, in this order.
LIGHT_COLUMNS = (
    "rowid", "project", "id", "type", "task_id", "file_path", "topic_id", "tags", "refs",
    "pinned", "tier", "tokens", "created_at", "last_touched_at", SURVIVED, "hash64",
)  # fmt: skip
LIGHT = ", ".join(LIGHT_COLUMNS)
_FULL = LIGHT + ", line_range, body"
#: A word as the index's tokenizer (unicode61) sees one: letters and digits; "_" and
#: every other character part words (the index keeps no positions, so a query term
#: must be one token, never a phrase).
_WORD = re.compile(r"[^\W_]+")


def chunks(values: Sequence[T], size: int = 500) -> Iterator[list[T]]:
    """``values`` in lists of at most ``size`` (SQLite caps the parameters of a statement)."""
    for start in range(0, len(values), size):
        yield list(values[start : start + size])


def text_hash(text: str) -> str:
    """The sha256 of a segment's text (hex), as replies show it."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def hash64(digest: str) -> int:
    """The first 8 bytes of a hex sha256 as a signed 64-bit integer (for deduplication)."""
    return int.from_bytes(bytes.fromhex(digest[:16]), "big", signed=True)


def unpack(body: str | bytes) -> str:
    """The text a stored body holds (texts are stored as they are; an older CueDeck
    zlib-compressed some, stored as bytes)."""
    if isinstance(body, bytes):
        return zlib.decompress(body).decode("utf-8", "surrogatepass")
    return body


def fts_query(query: str) -> str:
    """``query`` as an FTS5 expression: any of its words (quoted, so no syntax leaks)."""
    words = dict.fromkeys(w.lower() for w in _WORD.findall(query))
    return " OR ".join(f'"{w}"' for w in words)


def segment_of(row: Sequence[Any]) -> Segment:
    """The segment a row of ``SELECT {_FULL}`` holds."""
    line_range = json.loads(row[16]) if row[16] else None
    return Segment(
        id=row[2],
        type=row[3],
        text=unpack(row[17]),
        project_id=row[1],
        created_at=row[12],
        task_id=row[4],
        tags=tuple(json.loads(row[7])) if row[7] != "[]" else (),
        file_path=row[5],
        line_range=(line_range[0], line_range[1]) if line_range else None,
        topic_id=row[6],
        refs=tuple(json.loads(row[8])) if row[8] != "[]" else (),
        pinned=bool(row[9]),
        tier=row[10],
        tokens=row[11],
        last_touched_at=row[13],
        gc_survival_count=row[14],
    )


class MemoryDatabase:
    """The SQLite side of memory: segment rows, the text index, projects and snapshots."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._connection: sqlite3.Connection | None = None
        self._upkeep = Upkeep(path, INDEX_TABLE)
        self._merges_deferred = False

    @property
    def db(self) -> sqlite3.Connection:
        """The open connection (created with the schema on first use)."""
        if self._connection is None:
            try:
                self._connection = self._open()
            except sqlite3.DatabaseError as exc:
                from cuedeck_memory.errors import StoreUnreadable

                raise StoreUnreadable(
                    f"the memory store cannot be read: {exc}",
                    path=self.path.name,
                    help="move the file aside (cue memory export needs a readable store); "
                    "a new empty store is made in its place",
                ) from None
        return self._connection

    def _open(self) -> sqlite3.Connection:
        # A commit is in the log, which the OS holds for us: a process that dies (killed,
        # crashed) loses nothing it acknowledged. The log is synced at checkpoints, not
        # at every commit (synchronous NORMAL): only losing power can take the last
        # commits (docs/memory.md).
        connection = open_db(self.path, threads=True)
        # After a checkpoint the log shrinks back to 1 MB rather than keeping its peak.
        connection.execute("PRAGMA journal_size_limit = 1048576")
        # The log is emptied into the store by a thread of ours (see _committed), not by
        # whichever commit crosses the limit, which would wait for it.
        connection.execute("PRAGMA wal_autocheckpoint = 0")
        # A store that exists is only read here: a new process never waits for a writer.
        if schema_of(connection) != SCHEMA_VERSION:
            with _transaction(connection):
                prepare(connection, self.path, unpack)
        return connection

    def close(self) -> None:
        """Close the connection (it reopens on next use), emptying the write-ahead log
        into the store when no other process reads it."""
        self._upkeep.stop()
        if self._connection is not None:
            with contextlib.suppress(sqlite3.Error):
                self._connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._connection.close()
            self._connection = None

    def settle(self) -> None:
        """Wait until the index is merged and the log emptied as far as they will be."""
        self._upkeep.settle()

    @contextlib.contextmanager
    def writing(self) -> Iterator[int]:
        """A write transaction (SQLite's write lock held); yields its version."""
        db = self.db
        with self._upkeep.writing(), _transaction(db):
            if not self._merges_deferred:  # the first write of this process
                defer_merges(db, INDEX_TABLE)
                self._merges_deferred = True
            # Stamped at the end: a table brought in step inside the transaction reads
            # the last version, so it reads this transaction's rows at its next look.
            version = self.version() + 1
            yield version
            db.execute("UPDATE meta SET value = ? WHERE key = 'version'", (str(version),))
        # The index merged and the log emptied in a thread, beside the next calls.
        self._upkeep.after_commit()

    def store_id(self) -> str:
        """The store's identity, made with it: a copy of another store's table is not
        this one's."""
        return self.meta("store_id") or ""

    def version(self) -> int:
        """The version of the last committed write."""
        return int(self.db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()[0])

    def meta(self, key: str) -> str | None:
        """A value kept in the meta table."""
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        """Keep a value in the meta table (inside the caller's transaction)."""
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    # -- writes (inside :meth:`writing`) -------------------------------------------------

    def insert(
        self, segments: Sequence[Segment], hashes: Sequence[str], version: int
    ) -> list[tuple[Any, ...]]:
        """Insert new segments (ids unique per project), and their texts in the index;
        the rows' fields of :data:`LIGHT`, for a table to take without reading them back."""
        db = self.db
        first = db.execute("SELECT COALESCE(MAX(rowid), 0) FROM segments").fetchone()[0] + 1
        seq = db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'segments'").fetchone()
        first = max(first, (seq[0] + 1) if seq else 1)
        runs = {p: self.runs_of(p) for p in {s.project_id for s in segments}}
        rows = [
            (first + n, s.project_id, s.id, *_fields(s, d), s.text, version, runs[s.project_id])
            for n, (s, d) in enumerate(zip(segments, hashes, strict=True))
        ]
        db.executemany(
            "INSERT INTO segments (rowid, project, id, type, task_id, file_path, topic_id, "
            "tags, refs, pinned, tier, tokens, created_at, last_touched_at, gc_survival_count, "
            f"hash64, line_range, body, version, runs_seen) VALUES (?, {', '.join('?' * 19)})",
            rows,
        )
        db.executemany(
            "INSERT INTO segments_fts (rowid, text) VALUES (?, ?)",
            [(first + n, s.text) for n, s in enumerate(segments)],
        )
        return [row[: len(LIGHT_COLUMNS)] for row in rows]

    def update(self, segments: Sequence[Segment], version: int) -> None:
        """Rewrite the fields of existing segments; a changed text is re-indexed."""
        db = self.db
        for segment in segments:
            found = db.execute(
                "SELECT rowid, body FROM segments WHERE project = ? AND id = ?",
                (segment.project_id, segment.id),
            ).fetchone()
            if found is None:
                continue
            rowid, body = found
            old_text = unpack(body)
            digest = text_hash(segment.text)
            db.execute(
                "UPDATE segments SET type = ?, task_id = ?, file_path = ?, topic_id = ?, "
                "tags = ?, refs = ?, pinned = ?, tier = ?, tokens = ?, created_at = ?, "
                "last_touched_at = ?, gc_survival_count = ?, hash64 = ?, line_range = ?, "
                f"body = ?, version = ?, runs_seen = {_RUNS} WHERE rowid = ?",
                (
                    *_fields(segment, digest),
                    body if old_text == segment.text else segment.text,
                    version,
                    rowid,
                ),
            )
            if old_text != segment.text:
                db.execute(
                    "INSERT INTO segments_fts (segments_fts, rowid, text) VALUES ('delete', ?, ?)",
                    (rowid, old_text),
                )
                db.execute(
                    "INSERT INTO segments_fts (rowid, text) VALUES (?, ?)", (rowid, segment.text)
                )

    def set_fields(self, rowids: Sequence[int], version: int, **fields: Any) -> None:
        """Set plain fields (tier, pinned, last_touched_at...) of rows by rowid."""
        assignments = ", ".join(f"{name} = ?" for name in fields)
        # The survival count is brought up to date first (SQLite reads the old tier).
        self.db.executemany(
            f"UPDATE segments SET gc_survival_count = {SURVIVED}, runs_seen = {_RUNS}, "
            f"{assignments}, version = ? WHERE rowid = ?",
            [(*fields.values(), version, rowid) for rowid in rowids],
        )

    def survived(self, project: str, version: int) -> None:
        """One more GC run survived by every working segment of ``project``: one more
        run of the project, which their counts add."""
        self.db.execute(
            "INSERT INTO gc_runs VALUES (?, 1, ?) "
            "ON CONFLICT (project) DO UPDATE SET runs = runs + 1, version = excluded.version",
            (project, version),
        )

    def runs_of(self, project: str) -> int:
        """The GC runs of ``project`` so far."""
        row = self.db.execute("SELECT runs FROM gc_runs WHERE project = ?", (project,)).fetchone()
        return 0 if row is None else int(row[0])

    def runs_since(self, version: int) -> dict[str, int]:
        """The GC runs of every project that ran one after ``version``."""
        rows = self.db.execute("SELECT project, runs FROM gc_runs WHERE version > ?", (version,))
        return {project: int(runs) for project, runs in rows}

    def remove(self, rowids: Sequence[int], version: int) -> None:
        """Delete rows and their texts from the index."""
        db = self.db
        for chunk in chunks(rowids):
            marks = ", ".join("?" * len(chunk))
            rows = db.execute(
                f"SELECT rowid, body FROM segments WHERE rowid IN ({marks})", chunk
            ).fetchall()
            db.executemany(
                "INSERT INTO segments_fts (segments_fts, rowid, text) VALUES ('delete', ?, ?)",
                [(rowid, unpack(body)) for rowid, body in rows],
            )
            db.execute(f"DELETE FROM segments WHERE rowid IN ({marks})", chunk)
            db.executemany(
                "INSERT INTO removed VALUES (?, ?)", [(rowid, version) for rowid, _ in rows]
            )

    # -- reads -------------------------------------------------------------------------

    def light_since(self, version: int, size: int = 10_000) -> Iterator[list[tuple[Any, ...]]]:
        """Rows (:data:`LIGHT`, no text) written after ``version``, ``size`` at a time
        (a reader of 100,000 rows never holds them all)."""
        if version == 0:
            cursor = self.db.execute(f"SELECT {LIGHT} FROM segments")
        else:
            cursor = self.db.execute(f"SELECT {LIGHT} FROM segments WHERE version > ?", (version,))
        while chunk := cursor.fetchmany(size):
            yield chunk

    def removed_since(self, version: int) -> list[int]:
        """Rowids removed after ``version``."""
        rows = self.db.execute("SELECT rowid FROM removed WHERE version > ?", (version,))
        return [row[0] for row in rows]

    def by_rowids(self, rowids: Sequence[int]) -> dict[int, Segment]:
        """Whole segments (text included) by rowid."""
        found: dict[int, Segment] = {}
        for chunk in chunks(rowids):
            marks = ", ".join("?" * len(chunk))
            for row in self.db.execute(
                f"SELECT {_FULL} FROM segments WHERE rowid IN ({marks})", chunk
            ):
                found[row[0]] = segment_of(row)
        return found

    def term_rows(self, query: str) -> list[Any]:
        """For each distinct word of ``query``, the rowids of every text holding it
        (stemmed as the index stems it). Rowids only: a word in every other segment
        costs a walk of its list, not a score per segment."""
        import numpy as np

        rows: list[np.ndarray[Any, Any]] = []
        for word in dict.fromkeys(w.lower() for w in _WORD.findall(query)):
            # One string from SQLite rather than a Python tuple per segment.
            try:
                (joined,) = self.db.execute(
                    "SELECT group_concat(rowid) FROM segments_fts WHERE segments_fts MATCH ?",
                    (f'"{word}"',),
                ).fetchone()
            except sqlite3.OperationalError:
                # A character the tokenizer splits on that the pattern above keeps
                # makes the word a phrase, which an index without positions refuses.
                joined = None
            rows.append(
                np.fromstring(joined, dtype=np.int64, sep=",") if joined else np.zeros(0, np.int64)
            )
        return rows

    def projects(self) -> list[str]:
        """Projects with a segment or a recorded current task."""
        # One step of the (project, id) index per project, not a walk of every row.
        rows = self.db.execute(
            "WITH RECURSIVE found (project) AS ("
            " SELECT MIN(project) FROM segments"
            " UNION ALL SELECT (SELECT MIN(project) FROM segments WHERE project > found.project)"
            " FROM found WHERE found.project IS NOT NULL)"
            " SELECT project FROM found WHERE project IS NOT NULL"
            " UNION SELECT project FROM projects"
        )
        return sorted(row[0] for row in rows)

    # -- projects and snapshots --------------------------------------------------------

    def current_task(self, project: str) -> str | None:
        """The recorded current task of ``project``."""
        row = self.db.execute(
            "SELECT current_task FROM projects WHERE project = ?", (project,)
        ).fetchone()
        return None if row is None else row[0]

    def set_current_task(self, project: str, task_id: str | None, now: float) -> None:
        """Record the current task (inside the caller's transaction)."""
        self.db.execute("INSERT OR REPLACE INTO projects VALUES (?, ?, ?)", (project, task_id, now))

    def add_snapshot(self, project: str, record: dict[str, Any]) -> None:
        """Keep a snapshot record (inside the caller's transaction)."""
        self.db.execute(
            "INSERT INTO snapshots VALUES (?, ?, ?, ?)",
            (project, record["snapshot_id"], record["created_at"], json.dumps(record)),
        )

    def snapshot(self, snapshot_id: str) -> dict[str, Any] | None:
        """The snapshot record ``snapshot_id``, in whichever project, or None."""
        row = self.db.execute(
            "SELECT record FROM snapshots WHERE snapshot_id = ?", (snapshot_id,)
        ).fetchone()
        return json.loads(row[0]) if row is not None else None

    def snapshots(self, project: str) -> list[dict[str, Any]]:
        """Every snapshot record of ``project``, oldest first."""
        rows = self.db.execute(
            "SELECT record FROM snapshots WHERE project = ? ORDER BY created_at, snapshot_id",
            (project,),
        )
        return [json.loads(row[0]) for row in rows]


def _fields(segment: Segment, digest: str) -> tuple[Any, ...]:
    """A segment's columns from ``type`` to ``line_range``, in the table's order (what an
    insert and an update both write)."""
    return (
        segment.type,
        segment.task_id,
        segment.file_path,
        segment.topic_id,
        _json_list(segment.tags) if segment.tags else "[]",
        json.dumps(list(segment.refs)) if segment.refs else "[]",
        int(segment.pinned),
        segment.tier,
        segment.tokens,
        segment.created_at,
        segment.last_touched_at,
        segment.gc_survival_count,
        hash64(digest),
        json.dumps(list(segment.line_range)) if segment.line_range else None,
    )


@functools.lru_cache(maxsize=1024)
def _json_list(values: tuple[str, ...]) -> str:
    """``values`` as a JSON list (tag lists repeat through a batch: made once each)."""
    return json.dumps(list(values))


@contextlib.contextmanager
def _transaction(db: sqlite3.Connection) -> Iterator[None]:
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
