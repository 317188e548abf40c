"""The tables of the memory store, and bringing a store of an older schema up to this one.

Schema 3 indexes texts with ``detail=none`` and ``columnsize=0``: keyword ranking reads
only which segments hold a word (:meth:`~cuedeck_memory.database.MemoryDatabase.term_rows`),
never positions or FTS5's own lengths, so the index keeps neither (less than half the
size, about twice as fast to write). And a GC run is one row of ``gc_runs`` (a
project's count of runs), not a write of every working segment: a segment's survival
count is its stored count plus the runs since ``runs_seen`` while it is working
(:data:`~cuedeck_memory.database.SURVIVED`). A schema 2 store gets the new index once,
built from the texts it holds, and the new column and table.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable
    from pathlib import Path

SCHEMA_VERSION = "3"

TEXT_INDEX = """CREATE VIRTUAL TABLE IF NOT EXISTS segments_fts USING fts5 (
    text, content='', detail='none', columnsize=0, tokenize='porter unicode61')"""

GC_RUNS = """CREATE TABLE IF NOT EXISTS gc_runs (
    project TEXT PRIMARY KEY, runs INTEGER NOT NULL, version INTEGER NOT NULL)"""

TABLES = (
    """CREATE TABLE IF NOT EXISTS segments (
        rowid INTEGER PRIMARY KEY AUTOINCREMENT,
        project TEXT NOT NULL, id TEXT NOT NULL, type TEXT NOT NULL, task_id TEXT,
        file_path TEXT, topic_id TEXT, tags TEXT NOT NULL, refs TEXT NOT NULL,
        pinned INTEGER NOT NULL, tier TEXT NOT NULL, tokens INTEGER NOT NULL,
        created_at REAL NOT NULL, last_touched_at REAL NOT NULL,
        gc_survival_count INTEGER NOT NULL, hash64 INTEGER NOT NULL, line_range TEXT,
        body BLOB NOT NULL, version INTEGER NOT NULL, runs_seen INTEGER NOT NULL DEFAULT 0,
        UNIQUE (project, id))""",
    "CREATE INDEX IF NOT EXISTS segments_by_version ON segments (version)",
    TEXT_INDEX,
    """CREATE TABLE IF NOT EXISTS removed (
        rowid INTEGER NOT NULL, version INTEGER NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS removed_by_version ON removed (version)",
    """CREATE TABLE IF NOT EXISTS projects (
        project TEXT PRIMARY KEY, current_task TEXT, updated_at REAL NOT NULL)""",
    GC_RUNS,
    """CREATE TABLE IF NOT EXISTS snapshots (
        project TEXT NOT NULL, snapshot_id TEXT NOT NULL, created_at REAL NOT NULL,
        record TEXT NOT NULL, PRIMARY KEY (project, snapshot_id))""",
)


def schema_of(connection: sqlite3.Connection) -> str | None:
    """The schema a store says it has (None: a new, empty file)."""
    import sqlite3

    try:
        row = connection.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    except sqlite3.OperationalError:  # no meta table yet
        return None
    return None if row is None else str(row[0])


def prepare(
    connection: sqlite3.Connection, path: Path, text_of: Callable[[str | bytes], str]
) -> None:
    """Make the tables of a new store, or bring an older store up to this schema
    (inside the caller's write transaction); ``text_of`` reads a stored body."""
    connection.execute(
        "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
    )
    found = schema_of(connection)
    if found == SCHEMA_VERSION:
        return  # another process got there first
    if found == "2":
        # Schema 2 counted runs in every row: those counts are the base, no run seen yet.
        connection.execute("ALTER TABLE segments ADD COLUMN runs_seen INTEGER NOT NULL DEFAULT 0")
        connection.execute(GC_RUNS)
        # The text index is rebuilt from the stored texts, in SQLite.
        connection.execute("DROP TABLE segments_fts")
        connection.execute(TEXT_INDEX)
        connection.create_function("cuedeck_text", 1, text_of, deterministic=True)
        connection.execute(
            "INSERT INTO segments_fts (rowid, text) SELECT rowid, cuedeck_text(body) FROM segments"
        )
        connection.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (SCHEMA_VERSION,))
        return
    if found is not None:
        from cuedeck_memory.errors import StoreUnreadable

        raise StoreUnreadable(
            f"the memory store has schema {found!r}; this CueDeck reads {SCHEMA_VERSION!r}",
            path=str(path),
        )
    for statement in TABLES:
        connection.execute(statement)
    connection.execute("INSERT INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
    connection.execute("INSERT INTO meta VALUES ('version', '0')")
    connection.execute("INSERT INTO meta VALUES ('store_id', ?)", (uuid.uuid4().hex,))
