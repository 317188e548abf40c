"""The index's SQLite file: its tables, reading them, writing a refresh's changes.

``.cuedeck/.cache/index.sqlite3`` holds ``meta`` (schema, token counter, parsers),
``documents`` (path, mtime, size, sha256, zlib-compressed JSON of the parsed document,
language), ``passed_over`` (files a parser passed over, under which settings),
``token_counts`` (exact counts of documents a large refresh parsed without one, by
content hash) and ``changes``, the journal: the paths each write added, changed or
removed, numbered, so that a reader that knows the documents as of one number learns
what differs now without reading every row (:meth:`IndexStore.changes_since`).
:class:`~cuedeck.index.parsed.Index` keeps what it needs in memory and calls this module for
every read and write of the file; writers take ``.cuedeck/.cache/index.lock``, readers
never block (WAL).
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

from cuedeck.layout import CACHE_DIR, INDEX_DB, INDEX_LOCK
from cuedeck.system.cache_db import write_ahead
from cuedeck.watch.watcher import STAMP
from cuedeck.writes import locked

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from cuedeck.index.walk import FileStat

log = logging.getLogger("cuedeck")

SCHEMA_VERSION = 6  # 2: document data zlib-compressed; 3: parsers, language, passed_over;
# 4: heading aliases; 5: token counts deferred by large refreshes (token_counts); 6: the
# changes journal (an older CueDeck writing without it must not share the file)

#: The ``tokens`` of a document parsed in a large refresh: counted exactly when it is
#: first read (:meth:`cuedeck.index.parsed.Index.get`), then kept in ``token_counts`` by content
#: hash. Exact counting costs more than parsing (o200k: about 12 MB/s), and most files
#: of a cold index are never placed in a scene or paged by read_doc.
UNCOUNTED = -1
#: A refresh of this many files or more leaves token counts for their first read.
DEFER_COUNTS = 64

#: A write of more paths than this journals "anything may have changed" instead of each.
JOURNAL_PATHS = 256
#: Journal entries kept; a reader from before them learns "unknown".
JOURNAL_KEEP = 20_000

#: Bytes the write-ahead log keeps when SQLite restarts it: without a limit it stays the
#: size of the largest write ever made (a cold index of 40,000 files: 19 MB).
LOG_LIMIT = 4 << 20
#: How long emptying the log after a large write waits for readers, in milliseconds.
LOG_WAIT_MS = 1000

#: What each key of the meta table is, in a sentence.
_META_WORDS = {"schema": "format", "counter": "token counter", "engine": "markdown parser"}

#: A document row read back: ``(path, stat, sha256, language)``.
Row = tuple[str, "FileStat", str, str]
#: A document to store: ``(path, stat, sha256, language, compressed data)``.
Update = tuple[str, "FileStat", str, str, bytes]
#: Where the documents stand: ``(epoch, number)``, the database's random id (a new one
#: when it is rebuilt) and the journal's last number.
Version = tuple[str, int]


def uncounted(text: str) -> int:
    """The token counter of a large refresh: every count left for the first read."""
    return UNCOUNTED


def cache_difference(found: Mapping[str, str], wanted: Mapping[str, str]) -> str:
    """Why a cache cannot be reused, in words: ``the index cache was built by another
    version of CueDeck (format 2, now 3)``."""
    changes = [
        _parsers_change(found.get(key, ""), wanted[key])
        if key == "parsers"
        else f"{_META_WORDS.get(key, key)} {found.get(key, 'unknown')}, now {wanted[key]}"
        for key in wanted
        if found.get(key) != wanted[key]
    ]
    if "schema" in wanted and found.get("schema") != wanted["schema"]:
        return f"the index cache was built by another version of CueDeck ({'; '.join(changes)})"
    return f"the index cache was built with another setting ({'; '.join(changes)})"


def _parsers_change(found: str, wanted: str) -> str:
    """How two parser fingerprints (``name=patterns@plugin;...``) differ, by parser name:
    ``parsers: ini (example) added``, not both fingerprints whole."""

    def parsers(fingerprint: str) -> dict[str, tuple[str, str]]:
        named = {}
        for item in filter(None, fingerprint.split(";")):
            name, _, rest = item.partition("=")
            patterns, _, plugin = rest.rpartition("@")
            named[name] = (patterns, plugin)
        return named

    before, now = parsers(found), parsers(wanted)
    words = [f"{name} ({now[name][1]}) added" for name in now if name not in before]
    words += [f"{name} ({before[name][1]}) removed" for name in before if name not in now]
    words += [
        f"{name} now from {now[name][1]}"
        if before[name][1] != now[name][1]
        else f"{name}'s file patterns changed"
        for name in now
        if name in before and before[name] != now[name]
    ]
    return "parsers: " + (", ".join(words) or "changed")


class IndexStore:
    """The index's database file, through one connection kept open (the index serialises
    its threads' use of it)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.cache_dir = root / CACHE_DIR
        self.path = root / INDEX_DB
        self._connection: sqlite3.Connection | None = None
        self._counts: dict[str, int] | None = None  # sha256 -> tokens, read on first need

    def connect(self) -> sqlite3.Connection:
        """A new connection to the cache database (WAL, waits up to 30 s for writers)."""
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(
            self.path, timeout=30.0, isolation_level=None, check_same_thread=False
        )
        connection.execute("PRAGMA busy_timeout = 30000")
        write_ahead(connection)
        connection.execute("PRAGMA synchronous = NORMAL")
        connection.execute(f"PRAGMA journal_size_limit = {LOG_LIMIT}")
        return connection

    def db(self) -> sqlite3.Connection:
        """The store's own connection, kept open: closing the last connection to a WAL
        database checkpoints it, which would cost more than a small refresh."""
        if self._connection is None or not self.path.exists():
            self.close()
            self._connection = self.connect()
            _schema(self._connection)
        return self._connection

    def close(self) -> None:
        """Close the connection (it reopens when next needed)."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def discard(self) -> None:
        """Delete the database (call with the index lock held)."""
        self.close()
        for suffix in ("", "-wal", "-shm"):
            Path(str(self.path) + suffix).unlink(missing_ok=True)
        (self.root / STAMP).unlink(missing_ok=True)  # the watcher's stamp was of these rows
        self._counts = None

    def load(
        self, meta: Mapping[str, str], settings: str
    ) -> list[tuple[str, FileStat, str]] | None:
        """Every file passed over under ``settings``; None (and a warning) when the cache
        must be rebuilt: unreadable, or built with other ``meta``. The document rows are
        read when needed (:meth:`rows`, :meth:`every_row`): a refresh that the watcher
        says has nothing to do reads none of them."""
        try:
            connection = self.db()
            found = dict(connection.execute("SELECT key, value FROM meta").fetchall())
            found.pop("epoch", None)  # the database's own id, not a setting
            if found and found != meta:
                log.warning("%s; rebuilding it", cache_difference(found, meta))
                return None
            passed = connection.execute(
                "SELECT path, mtime_ns, size, reason FROM passed_over WHERE settings = ?",
                (settings,),
            ).fetchall()
        except sqlite3.DatabaseError as exc:
            log.warning("index cache %s is unreadable (%s); rebuilding it", self.path, exc)
            return None
        return [(path, (mtime, size), reason) for path, mtime, size, reason in passed]

    def every_row(self) -> list[Row]:
        """Every document row (40,000 files: about a tenth of a second)."""
        rows = self.db().execute("SELECT path, mtime_ns, size, sha256, language FROM documents")
        return [(path, (mtime, size), sha, language) for path, mtime, size, sha, language in rows]

    def paths(self) -> list[str]:
        """Every document's path (a third of the cost of :meth:`every_row`)."""
        return [path for (path,) in self.db().execute("SELECT path FROM documents")]

    def rows(self, paths: Sequence[str]) -> list[Row]:
        """The document rows of ``paths`` (those stored)."""
        found: list[Row] = []
        for start in range(0, len(paths), 500):
            chunk = list(paths[start : start + 500])
            marks = ",".join("?" * len(chunk))
            found.extend(
                (path, (mtime, size), sha, language)
                for path, mtime, size, sha, language in self.db().execute(
                    "SELECT path, mtime_ns, size, sha256, language FROM documents "
                    f"WHERE path IN ({marks})",
                    chunk,
                )
            )
        return found

    def version(self) -> Version:
        """Where the documents stand now (see :data:`Version`)."""
        connection = self.db()
        return _version(connection)

    def keys(self) -> tuple[Version, list[tuple[str, str]]]:
        """``(path, sha256)`` of every document, and where they stand, read together."""
        connection = self.db()
        connection.execute("BEGIN")  # one snapshot for both reads (WAL)
        try:
            version = _version(connection)
            keys = connection.execute("SELECT path, sha256 FROM documents").fetchall()
        finally:
            connection.execute("COMMIT")
        return version, keys

    def changes_since(self, version: Version) -> tuple[Version, dict[str, str | None] | None]:
        """Where the documents stand now, and the paths added, changed or removed since
        ``version`` with their sha256 now (None: gone); None for the paths when that is
        not known (another database, a large write, or journal entries dropped since)."""
        connection = self.db()
        connection.execute("BEGIN")
        try:
            now = _version(connection)
            if now[0] != version[0] or version[1] > now[1]:
                return now, None
            if version[1] == now[1]:
                return now, {}
            first = connection.execute("SELECT min(seq) FROM changes").fetchone()[0]
            rows = connection.execute(
                "SELECT c.path, d.sha256 FROM changes c "
                "LEFT JOIN documents d ON d.path = c.path WHERE c.seq > ?",
                (version[1],),
            ).fetchall()
        finally:
            connection.execute("COMMIT")
        if first is None or first > version[1] + 1 or any(path is None for path, _ in rows):
            return now, None
        return now, dict(rows)

    def write(
        self,
        meta: Mapping[str, str],
        settings: str,
        updates: Sequence[Update],
        touched: Sequence[tuple[str, FileStat]],
        removed: Sequence[str],
        passed: Sequence[tuple[str, FileStat, str]],
        forget: Sequence[str],
    ) -> None:
        """Write one refresh's changes in one transaction, under the index lock."""
        with locked(self.root / INDEX_LOCK, display=INDEX_LOCK):
            connection = self.db()
            connection.execute("BEGIN IMMEDIATE")
            try:
                connection.executemany(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", meta.items()
                )
                connection.executemany(
                    "INSERT OR REPLACE INTO documents VALUES (?, ?, ?, ?, ?, ?)",
                    [(p, s[0], s[1], sha, data, lang) for p, s, sha, lang, data in updates],
                )
                connection.executemany(
                    "UPDATE documents SET mtime_ns = ?, size = ? WHERE path = ?",
                    [(s[0], s[1], p) for p, s in touched],
                )
                connection.executemany(
                    "DELETE FROM documents WHERE path = ?", [(p,) for p in removed]
                )
                if removed or updates:  # counts of contents no document holds any more
                    connection.execute(
                        "DELETE FROM token_counts WHERE sha256 NOT IN "
                        "(SELECT sha256 FROM documents)"
                    )
                connection.executemany(
                    "DELETE FROM passed_over WHERE path = ?",
                    [(p,) for p in [*forget, *(u[0] for u in updates)]],
                )
                connection.executemany(
                    "INSERT OR REPLACE INTO passed_over VALUES (?, ?, ?, ?, ?)",
                    [(p, s[0], s[1], reason, settings) for p, s, reason in passed],
                )
                _journal(connection, [*(u[0] for u in updates), *removed])
                connection.execute("COMMIT")
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            if len(updates) + len(removed) > JOURNAL_PATHS:
                _empty_log(connection)

    def data(self, paths: Sequence[str]) -> dict[str, tuple[str, bytes]]:
        """``path -> (sha256, compressed data)`` of the stored ``paths`` (every row, read in
        one pass, when many are asked for)."""
        connection = self.db()
        if len(paths) > 500:
            rows = connection.execute("SELECT path, sha256, data FROM documents")
        else:
            marks = ",".join("?" * len(paths))
            rows = connection.execute(
                f"SELECT path, sha256, data FROM documents WHERE path IN ({marks})", list(paths)
            )
        return {path: (sha, data) for path, sha, data in rows}

    def token_count(self, sha256: str) -> int | None:
        """The count remembered for content ``sha256``, or None."""
        if self._counts is None:
            try:
                rows = self.db().execute("SELECT sha256, tokens FROM token_counts")
                self._counts = dict(rows.fetchall())
            except sqlite3.Error:
                self._counts = {}
        found = self._counts.get(sha256)
        return None if found is None else int(found)

    def remember_count(self, sha256: str, tokens: int) -> None:
        """Keep the exact count of content ``sha256`` (best effort: a busy or read-only
        cache only costs a count again)."""
        with contextlib.suppress(sqlite3.Error):
            if self._counts is not None:
                self._counts[sha256] = tokens
            self.db().execute("INSERT OR REPLACE INTO token_counts VALUES (?, ?)", (sha256, tokens))


def _empty_log(connection: sqlite3.Connection) -> None:
    """Checkpoint the write-ahead log and cut it to nothing after a large write.

    The log file keeps the size of the largest write, and every ``cue`` process ends
    without closing its connection (closing would checkpoint): a cold index left a log
    as large as the database beside it (SQLite copies a log into the database after a
    commit that leaves 1,000 pages in it, so most of that write is copied already).
    Readers get a second to finish; a log still in use is left for :data:`LOG_LIMIT` to
    cut when it restarts.
    """
    with contextlib.suppress(sqlite3.Error):
        connection.execute(f"PRAGMA busy_timeout = {LOG_WAIT_MS}")
        try:
            connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        finally:
            connection.execute("PRAGMA busy_timeout = 30000")


def _version(connection: sqlite3.Connection) -> Version:
    epoch = connection.execute("SELECT value FROM meta WHERE key = 'epoch'").fetchone()
    last = connection.execute("SELECT max(seq) FROM changes").fetchone()[0]
    return (epoch[0] if epoch else ""), int(last or 0)


def _journal(connection: sqlite3.Connection, paths: Sequence[str]) -> None:
    """Number the paths a write changed (or, for many, note that anything may have)."""
    if not paths:
        return
    if len(paths) > JOURNAL_PATHS:
        connection.execute("INSERT INTO changes (path) VALUES (NULL)")
    else:
        connection.executemany("INSERT INTO changes (path) VALUES (?)", [(p,) for p in paths])
    connection.execute(
        "DELETE FROM changes WHERE seq <= (SELECT max(seq) FROM changes) - ?", (JOURNAL_KEEP,)
    )


def _schema(connection: sqlite3.Connection) -> None:
    connection.executescript(
        """
        CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS documents (
            path TEXT PRIMARY KEY,
            mtime_ns INTEGER NOT NULL,
            size INTEGER NOT NULL,
            sha256 TEXT NOT NULL,
            data BLOB NOT NULL,
            language TEXT NOT NULL
        );
        CREATE TABLE IF NOT EXISTS passed_over (
            path TEXT PRIMARY KEY,
            mtime_ns INTEGER NOT NULL,
            size INTEGER NOT NULL,
            reason TEXT NOT NULL,
            settings TEXT NOT NULL
        );
        CREATE TABLE IF NOT EXISTS token_counts (
            sha256 TEXT PRIMARY KEY,
            tokens INTEGER NOT NULL
        );
        -- path NULL: anything may have changed (a large write)
        CREATE TABLE IF NOT EXISTS changes (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            path TEXT
        );
        """
    )
    # The database's own id: a journal number means nothing in another database. Asked
    # first, as an insert would wait for a writer even when it inserts nothing.
    if connection.execute("SELECT 1 FROM meta WHERE key = 'epoch'").fetchone() is None:
        connection.execute(
            "INSERT OR IGNORE INTO meta (key, value) VALUES ('epoch', lower(hex(randomblob(16))))"
        )
