"""The memory index: every segment file's fields in the workspace's SQLite cache.

``.cuedeck/.cache/memory.sqlite3`` holds one row per segment file (its stat, so a
changed file is re-read, and its fields), a full-text index of the texts for keyword
ranking, token counts by text hash, and the files that could not be read. The rows are
rebuilt from the files when the cache is lost; only the GC counters (last touch,
survival count) then start over. WAL: readers never block, writers wait their turn.
"""

from __future__ import annotations

import json
import re
import sqlite3
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import attrs

from cuedeck_memory.segments import Segment

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence
    from pathlib import Path

SCHEMA_VERSION = "1"
T = TypeVar("T")

_COLUMNS = (
    "id, project, type, text, created_at, task_id, tags, file_path, line_range, topic_id, "
    "refs, pinned, tier, tokens, text_hash, last_touched_at, gc_survival_count"
)
_WORD = re.compile(r"\w+", re.UNICODE)
_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS segments (
        rowid INTEGER PRIMARY KEY,
        id TEXT NOT NULL, project TEXT NOT NULL, type TEXT NOT NULL,
        text TEXT NOT NULL, created_at REAL NOT NULL, task_id TEXT,
        tags TEXT NOT NULL, file_path TEXT, line_range TEXT, topic_id TEXT,
        refs TEXT NOT NULL, pinned INTEGER NOT NULL, tier TEXT NOT NULL,
        tokens INTEGER NOT NULL, text_hash TEXT NOT NULL,
        last_touched_at REAL NOT NULL, gc_survival_count INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL DEFAULT 0, size INTEGER NOT NULL DEFAULT 0,
        UNIQUE (project, id))""",
    "CREATE INDEX IF NOT EXISTS segments_by_tier ON segments (project, tier)",
    "CREATE INDEX IF NOT EXISTS segments_by_hash ON segments (project, text_hash)",
    # Covers the look at every file's stat: without it, that query reads every text.
    "CREATE INDEX IF NOT EXISTS segments_by_stat ON segments (project, id, mtime_ns, size)",
    """CREATE VIRTUAL TABLE IF NOT EXISTS segments_fts USING fts5 (
        text, content='segments', content_rowid='rowid', tokenize='porter unicode61')""",
    "CREATE TABLE IF NOT EXISTS refs (project TEXT NOT NULL, source TEXT NOT NULL, "
    "target TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS refs_by_target ON refs (project, target)",
    "CREATE INDEX IF NOT EXISTS refs_by_source ON refs (project, source)",
    """CREATE TABLE IF NOT EXISTS problems (
        path TEXT PRIMARY KEY, project TEXT NOT NULL, mtime_ns INTEGER NOT NULL,
        size INTEGER NOT NULL, line INTEGER NOT NULL, message TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS token_counts (
        counter TEXT NOT NULL, text_hash TEXT NOT NULL, tokens INTEGER NOT NULL,
        PRIMARY KEY (counter, text_hash))""",
)


_LIGHT = (
    "id, type, task_id, file_path, topic_id, refs, pinned, tier, tokens, created_at, "
    "last_touched_at, gc_survival_count"
)


class Light(NamedTuple):
    """A segment without its text: what GC and usage read for every segment."""

    id: str
    type: str
    task_id: str | None
    file_path: str | None
    topic_id: str | None
    refs: str  # JSON list
    pinned: int
    tier: str
    tokens: int
    created_at: float
    last_touched_at: float
    gc_survival_count: int


class _Existing(NamedTuple):
    """What an upsert needs of a segment's current row."""

    rowid: int
    last_touched_at: float
    gc_survival_count: int
    text: str


def _chunks(values: Sequence[T], size: int = 500) -> Iterator[list[T]]:
    """``values`` in lists of at most ``size`` (SQLite caps the parameters of a statement)."""
    for start in range(0, len(values), size):
        yield list(values[start : start + size])


def _row(segment: Segment) -> tuple[Any, ...]:
    return (
        segment.id,
        segment.project_id,
        segment.type,
        segment.text,
        segment.created_at,
        segment.task_id,
        json.dumps(list(segment.tags)),
        segment.file_path,
        json.dumps(list(segment.line_range)) if segment.line_range else None,
        segment.topic_id,
        json.dumps(list(segment.refs)),
        int(segment.pinned),
        segment.tier,
        segment.tokens,
        segment.text_hash,
        segment.last_touched_at,
        segment.gc_survival_count,
    )


def segment_of(row: Sequence[Any]) -> Segment:
    """The segment a row of ``SELECT {_COLUMNS}`` holds."""
    line_range = json.loads(row[8]) if row[8] else None
    return Segment(
        id=row[0],
        project_id=row[1],
        type=row[2],
        text=row[3],
        created_at=row[4],
        task_id=row[5],
        tags=tuple(json.loads(row[6])),
        file_path=row[7],
        line_range=(line_range[0], line_range[1]) if line_range else None,
        topic_id=row[9],
        refs=tuple(json.loads(row[10])),
        pinned=bool(row[11]),
        tier=row[12],
        tokens=row[13],
        text_hash=row[14],
        last_touched_at=row[15],
        gc_survival_count=row[16],
    )


def _unindex(db: sqlite3.Connection, rowid: int, text: str) -> None:
    """Drop a row and its text from the full-text index (external content wants the old
    text to remove its terms)."""
    db.execute(
        "INSERT INTO segments_fts (segments_fts, rowid, text) VALUES ('delete', ?, ?)",
        (rowid, text),
    )
    db.execute("DELETE FROM segments WHERE rowid = ?", (rowid,))


def fts_query(query: str) -> str:
    """``query`` as an FTS5 expression: any of its words (quoted, so no syntax leaks)."""
    words = dict.fromkeys(w.lower() for w in _WORD.findall(query))
    return " OR ".join(f'"{w}"' for w in words)


class MemoryIndex:
    """The SQLite side of memory: rows, the text index, token counts and problems."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._connection: sqlite3.Connection | None = None

    @property
    def db(self) -> sqlite3.Connection:
        """The open connection (created with the schema on first use)."""
        if self._connection is None:
            self._connection = self._open(retry=True)
        return self._connection

    def _open(self, *, retry: bool) -> sqlite3.Connection:
        """Connect, creating the schema; a corrupt cache file is deleted and made anew."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(
            self.path, timeout=30.0, isolation_level=None, check_same_thread=False
        )
        try:
            connection.execute("PRAGMA busy_timeout = 30000")
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA synchronous = NORMAL")
            self._schema(connection)
        except sqlite3.DatabaseError:
            connection.close()
            if not retry:
                raise
            for suffix in ("", "-wal", "-shm"):
                self.path.with_name(self.path.name + suffix).unlink(missing_ok=True)
            return self._open(retry=False)
        return connection

    def close(self) -> None:
        """Close the connection (it reopens on next use)."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    @staticmethod
    def _schema(connection: sqlite3.Connection) -> None:
        connection.execute("BEGIN IMMEDIATE")
        try:
            connection.execute(
                "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
            )
            found = connection.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            if found is not None and found[0] != SCHEMA_VERSION:
                for table in ("segments", "segments_fts", "refs", "problems", "token_counts"):
                    connection.execute(f"DROP TABLE IF EXISTS {table}")
                connection.execute("DELETE FROM meta")
            for statement in _SCHEMA:
                connection.execute(statement)
            connection.execute(
                "INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,)
            )
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise

    # -- writes (callers hold the project lock) ----------------------------------------------

    def record_stamp(self, project: str, stamp: str) -> None:
        """Record the stamp of ``project``'s folder the rows are in step with."""
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (f"folder:{project}", stamp))

    def upsert(self, items: Iterable[tuple[Segment, int, int]], *, keep_gc: bool = True) -> None:
        """Store segments with their file's (mtime_ns, size), in one transaction.

        With ``keep_gc``, a row that exists keeps its GC counters (a re-read file; the
        later touch wins). The old rows go first, then every row together, a statement
        per table: the new ones, then the replaced ones.
        """
        batch = list(items)
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        try:
            known = self._existing(batch)
            # By key, the last of a repeated segment winning, as row by row it would: a
            # new one in the place of its first copy, a replaced one of its last.
            fresh: dict[tuple[str, str], tuple[Segment, int, int]] = {}
            replaced: dict[tuple[str, str], tuple[Segment, int, int]] = {}
            touched = {key: old.last_touched_at for key, old in known.items()}
            for segment, mtime_ns, size in batch:
                key = (segment.project_id, segment.id)
                old = known.get(key)
                if old is None:
                    fresh[key] = (segment, mtime_ns, size)
                    continue
                if keep_gc:
                    touched[key] = max(touched[key], segment.last_touched_at)
                    segment = attrs.evolve(
                        segment,
                        last_touched_at=touched[key],
                        gc_survival_count=old.gc_survival_count,
                    )
                replaced.pop(key, None)
                replaced[key] = (segment, mtime_ns, size)
            for key in replaced:
                _unindex(db, known[key].rowid, known[key].text)
            db.executemany("DELETE FROM refs WHERE project = ? AND source = ?", list(replaced))
            rows = [*fresh.values(), *replaced.values()]
            if rows:
                self._insert(db, rows)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def _existing(
        self, batch: Sequence[tuple[Segment, int, int]]
    ) -> dict[tuple[str, str], _Existing]:
        """The current rows of the segments in ``batch`` that have one, by (project, id)."""
        found: dict[tuple[str, str], _Existing] = {}
        by_project: dict[str, list[str]] = {}
        for segment, _, _ in batch:
            by_project.setdefault(segment.project_id, []).append(segment.id)
        for project, ids in by_project.items():
            for chunk in _chunks(ids):
                marks = ", ".join("?" * len(chunk))
                rows = self.db.execute(
                    "SELECT id, rowid, last_touched_at, gc_survival_count, text FROM segments "
                    f"WHERE project = ? AND id IN ({marks})",
                    (project, *chunk),
                )
                found.update(((project, row[0]), _Existing(*row[1:])) for row in rows)
        return found

    @staticmethod
    def _insert(db: sqlite3.Connection, batch: Sequence[tuple[Segment, int, int]]) -> None:
        """Insert rows that do not exist yet (inside the caller's transaction); their
        rowids are numbered here so that the text index can take them in one statement."""
        last = db.execute("SELECT COALESCE(MAX(rowid), 0) FROM segments").fetchone()[0]
        rows: list[tuple[Any, ...]] = []
        texts: list[tuple[int, str]] = []
        refs: list[tuple[str, str, str]] = []
        for rowid, (segment, mtime_ns, size) in enumerate(batch, start=last + 1):
            rows.append((rowid, *_row(segment), mtime_ns, size))
            texts.append((rowid, segment.text))
            refs.extend((segment.project_id, segment.id, t) for t in dict.fromkeys(segment.refs))
        db.executemany(
            f"INSERT INTO segments (rowid, {_COLUMNS}, mtime_ns, size) VALUES "
            f"({', '.join('?' * 20)})",
            rows,
        )
        db.executemany("INSERT INTO segments_fts (rowid, text) VALUES (?, ?)", texts)
        db.executemany("INSERT INTO refs VALUES (?, ?, ?)", refs)

    def delete(self, project: str, ids: Iterable[str]) -> None:
        """Forget segments (their files are gone)."""
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        try:
            for segment_id in ids:
                found = db.execute(
                    "SELECT rowid, text FROM segments WHERE project = ? AND id = ?",
                    (project, segment_id),
                ).fetchone()
                if found is not None:
                    _unindex(db, found[0], found[1])
                    db.execute(
                        "DELETE FROM refs WHERE project = ? AND source = ?", (project, segment_id)
                    )
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def touch(self, project: str, ids: Sequence[str], now: float) -> None:
        """Set the last touch of segments to ``now``."""
        self.db.executemany(
            "UPDATE segments SET last_touched_at = ? WHERE project = ? AND id = ?",
            [(now, project, segment_id) for segment_id in ids],
        )

    def survived(self, project: str) -> int:
        """Count one more GC run survived by every working segment; how many there are."""
        cursor = self.db.execute(
            "UPDATE segments SET gc_survival_count = gc_survival_count + 1 "
            "WHERE project = ? AND tier = 'working'",
            (project,),
        )
        return cursor.rowcount

    def set_problems(
        self, project: str, problems: Iterable[tuple[str, int, int, int, str]]
    ) -> None:
        """Replace the unreadable files of ``project``: (path, mtime_ns, size, line, message)."""
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute("DELETE FROM problems WHERE project = ?", (project,))
            db.executemany(
                "INSERT OR REPLACE INTO problems VALUES (?, ?, ?, ?, ?, ?)",
                [(path, project, m, s, line, msg) for path, m, s, line, msg in problems],
            )
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    # -- reads -----------------------------------------------------------------------------

    def recorded_stamp(self, project: str) -> str | None:
        """The folder stamp :meth:`record_stamp` last recorded for ``project``, or None."""
        row = self.db.execute(
            "SELECT value FROM meta WHERE key = ?", (f"folder:{project}",)
        ).fetchone()
        return None if row is None else str(row[0])

    def stats(self, project: str) -> dict[str, tuple[int, int]]:
        """id -> (mtime_ns, size) of every indexed file of ``project``."""
        rows = self.db.execute(
            "SELECT id, mtime_ns, size FROM segments WHERE project = ?", (project,)
        )
        return {row[0]: (row[1], row[2]) for row in rows}

    def problems(self, project: str | None = None) -> list[tuple[str, int, str]]:
        """(path, line, message) of unreadable files, by path."""
        sql = "SELECT path, line, message FROM problems"
        rows = (
            self.db.execute(sql + " WHERE project = ? ORDER BY path", (project,))
            if project is not None
            else self.db.execute(sql + " ORDER BY path")
        )
        return [(row[0], row[1], row[2]) for row in rows]

    def problem_stats(self, project: str) -> dict[str, tuple[int, int]]:
        """path -> (mtime_ns, size) of the unreadable files of ``project``."""
        rows = self.db.execute(
            "SELECT path, mtime_ns, size FROM problems WHERE project = ?", (project,)
        )
        return {row[0]: (row[1], row[2]) for row in rows}

    def select(self, project: str, where: str = "", params: Sequence[Any] = ()) -> list[Segment]:
        """Segments of ``project`` matching an SQL condition, oldest first."""
        sql = f"SELECT {_COLUMNS} FROM segments WHERE project = ?"
        if where:
            sql += f" AND ({where})"
        sql += " ORDER BY created_at, id"
        return [segment_of(row) for row in self.db.execute(sql, (project, *params))]

    def light(self, project: str, tiers: Sequence[str] = ("working",)) -> list[Light]:
        """The fields GC and usage need (no text) of the segments in ``tiers``."""
        marks = ", ".join("?" * len(tiers))
        rows = self.db.execute(
            f"SELECT {_LIGHT} FROM segments WHERE project = ? AND tier IN ({marks})",
            (project, *tiers),
        )
        return [Light(*row) for row in rows]

    def get(self, project: str, ids: Sequence[str]) -> dict[str, Segment]:
        """The segments of ``ids`` that exist, by id."""
        found: dict[str, Segment] = {}
        for chunk in _chunks(ids):
            marks = ", ".join("?" * len(chunk))
            for segment in self.select(project, f"id IN ({marks})", chunk):
                found[segment.id] = segment
        return found

    def with_hashes(self, project: str, hashes: Sequence[str]) -> list[Segment]:
        """The segments of ``project`` whose text hash is one of ``hashes``."""
        found: list[Segment] = []
        for chunk in _chunks(hashes):
            marks = ", ".join("?" * len(chunk))
            found.extend(self.select(project, f"text_hash IN ({marks})", chunk))
        return found

    def refcounts(self, project: str, ids: Sequence[str]) -> dict[str, int]:
        """How many segments refer to each of ``ids`` (only references from segments)."""
        found: dict[str, int] = {}
        for chunk in _chunks(ids):
            marks = ", ".join("?" * len(chunk))
            rows = self.db.execute(
                f"SELECT r.target, COUNT(DISTINCT r.source) FROM refs r JOIN segments s "
                f"ON s.project = r.project AND s.id = r.source WHERE r.project = ? "
                f"AND r.target IN ({marks}) AND r.source != r.target GROUP BY r.target",
                (project, *chunk),
            )
            found.update({row[0]: row[1] for row in rows})
        return found

    def projects(self) -> list[str]:
        """Every project with at least one segment."""
        return [row[0] for row in self.db.execute("SELECT DISTINCT project FROM segments")]

    def keyword(
        self, project: str | None, query: str, tiers: Sequence[str], limit: int
    ) -> list[tuple[str, str, float]]:
        """(project, id, score) of segments whose text matches ``query``, best first
        (BM25 of FTS5; a higher score is better)."""
        expression = fts_query(query)
        if not expression:
            return []
        marks = ", ".join("?" * len(tiers))
        sql = (
            "SELECT s.project, s.id, -bm25(segments_fts) FROM segments_fts "
            "JOIN segments s ON s.rowid = segments_fts.rowid "
            f"WHERE segments_fts MATCH ? AND s.tier IN ({marks})"
        )
        params: list[Any] = [expression, *tiers]
        if project is not None:
            sql += " AND s.project = ?"
            params.append(project)
        sql += " ORDER BY bm25(segments_fts) LIMIT ?"
        params.append(limit)
        return [(row[0], row[1], float(row[2])) for row in self.db.execute(sql, params)]

    # -- token counts ------------------------------------------------------------------------

    def cached_tokens(self, counter: str, hashes: Sequence[str]) -> dict[str, int]:
        """Known token counts of these text hashes by ``counter``."""
        found: dict[str, int] = {}
        for chunk in _chunks(hashes):
            marks = ", ".join("?" * len(chunk))
            rows = self.db.execute(
                f"SELECT text_hash, tokens FROM token_counts WHERE counter = ? "
                f"AND text_hash IN ({marks})",
                (counter, *chunk),
            )
            found.update({row[0]: row[1] for row in rows})
        return found

    def remember_tokens(self, counter: str, counts: dict[str, int]) -> None:
        """Keep token counts by text hash."""
        self.db.executemany(
            "INSERT OR REPLACE INTO token_counts VALUES (?, ?, ?)",
            [(counter, text_hash, tokens) for text_hash, tokens in counts.items()],
        )
