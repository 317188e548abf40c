"""The parsed index: every markdown file of the workspace, cached in SQLite.

``.cuedeck/.cache/index.sqlite3`` holds one row per file (path, mtime, size, sha256 and
the parsed :class:`~cuedeck.models.Document` as JSON). A refresh re-reads a file only
when its mtime or size changed, and re-parses it only when its sha256 changed too.
Writers take ``.cuedeck/.cache/index.lock``; readers never block (WAL). A cache that is
corrupt or from another schema, counter or parser is rebuilt, with a warning.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import threading
import time
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from cuedeck.files import locked, sha256_bytes
from cuedeck.freshness import STAMP, write_stamp
from cuedeck.layout import CACHE_DIR, INDEX_DB, INDEX_LOCK
from cuedeck.models import Document, Problem, converter
from cuedeck.parallel import Tick, map_chunks
from cuedeck.parsing import decode, parse_document
from cuedeck.walk import FileStat, admitted, binary, binary_file, unreadable, walk_markdown

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from cuedeck.blocks import Engine
    from cuedeck.config import IndexSettings

log = logging.getLogger("cuedeck")

SCHEMA_VERSION = 2  # 2: document data zlib-compressed
#: The ``tokens`` of a document parsed in a large refresh: counted exactly when it is
#: first read (:meth:`Index.get`), then kept in ``token_counts`` by content hash. Exact
#: counting costs more than parsing (o200k: about 12 MB/s), and most files of a cold
#: index are never placed in a scene or paged by read_doc.
UNCOUNTED = -1
#: A refresh of this many files or more leaves token counts for their first read.
DEFER_COUNTS = 64
CHANGE_LOG = 64  # generations whose changed paths are remembered (see changed_since)

#: What a refresh found of one file: ``(path, stat, kind, detail)``. ``kind`` is
#: ``parsed`` (detail: sha256 and the stored data), ``same`` (content unchanged),
#: ``left out`` (detail: the Problem saying why) or ``gone``.
Outcome = tuple[str, FileStat, str, Any]


@attrs.frozen
class RefreshStats:
    """What one refresh did."""

    seen: int
    parsed: int
    reused: int
    removed: int
    seconds: float
    rebuilt: bool = False


class Index:
    """The workspace's documents, kept in step with the files by :meth:`refresh`."""

    def __init__(
        self,
        root: Path,
        settings: IndexSettings,
        *,
        counter_name: str,
        count_tokens: Callable[[str], int],
        engine: Engine = "fast",
    ) -> None:
        self.root = root
        self.settings = settings
        self.counter_name = counter_name
        self.count_tokens = count_tokens
        self.engine: Engine = engine
        self.cache_dir = root / CACHE_DIR
        self.path = root / INDEX_DB
        # path -> (stat, sha, zlib-compressed JSON or None until a reader needs it): a
        # refresh compares stats only, so the documents stay in the database until asked.
        self._rows: dict[str, tuple[FileStat, str, bytes | None]] = {}
        self._data_lock = threading.Lock()
        self._documents: dict[str, Document] = {}
        self._loaded = False
        self._connection: sqlite3.Connection | None = None
        self._counts: dict[str, int] | None = None  # sha256 -> tokens counted on first read
        self._defer = False  # count tokens on first read (set for large refreshes)
        self.generation = 0  # bumped whenever the set of documents changes
        self._keys: tuple[int, list[tuple[str, str]]] | None = None
        self._log: list[tuple[int, frozenset[str]]] = []  # (generation, paths it changed)
        #: What the last refresh left out (links leaving the workspace, binary or
        #: unreadable files), as warnings for ``cue doctor``.
        self.left_out: list[Problem] = []
        #: Ask the workspace's watcher what changed instead of walking (and start one
        #: when none runs): for short-lived commands (:mod:`cuedeck.freshness`).
        self.watch = False

    # -- storage ---------------------------------------------------------------------------

    def connect(self) -> sqlite3.Connection:
        """A new connection to the cache database (WAL, waits up to 30 s for writers)."""
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(
            self.path, timeout=30.0, isolation_level=None, check_same_thread=False
        )
        connection.execute("PRAGMA busy_timeout = 30000")
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA synchronous = NORMAL")
        return connection

    def _expected_meta(self) -> dict[str, str]:
        return {
            "schema": str(SCHEMA_VERSION),
            "counter": self.counter_name,
            "engine": self.engine,
        }

    def _load(self) -> bool:
        """Read the cache into memory; False (and a warning) when it had to be discarded."""
        try:
            connection = self._db()
            meta = dict(connection.execute("SELECT key, value FROM meta").fetchall())
            if meta and meta != self._expected_meta():
                log.warning(
                    "index cache was built with %s, not %s; rebuilding it",
                    meta,
                    self._expected_meta(),
                )
                return False
            rows = connection.execute(
                "SELECT path, mtime_ns, size, sha256 FROM documents"
            ).fetchall()
        except sqlite3.DatabaseError as exc:
            log.warning("index cache %s is unreadable (%s); rebuilding it", self.path, exc)
            return False
        self._rows = {path: ((mtime, size), sha, None) for path, mtime, size, sha in rows}
        return True

    @staticmethod
    def _schema(connection: sqlite3.Connection) -> None:
        connection.executescript(
            """
            CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS documents (
                path TEXT PRIMARY KEY,
                mtime_ns INTEGER NOT NULL,
                size INTEGER NOT NULL,
                sha256 TEXT NOT NULL,
                data BLOB NOT NULL
            );
            CREATE TABLE IF NOT EXISTS token_counts (
                sha256 TEXT PRIMARY KEY,
                tokens INTEGER NOT NULL
            );
            """
        )

    def _db(self) -> sqlite3.Connection:
        """The index's own connection, kept open: closing the last connection to a WAL
        database checkpoints it, which would cost more than a small refresh."""
        if self._connection is None or not self.path.exists():
            self._close()
            self._connection = self.connect()
            self._schema(self._connection)
        return self._connection

    def _close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def close(self) -> None:
        """Close the database connection (it reopens on the next refresh)."""
        self._close()

    def _discard(self) -> None:
        self._close()
        for suffix in ("", "-wal", "-shm"):
            Path(str(self.path) + suffix).unlink(missing_ok=True)
        (self.root / STAMP).unlink(missing_ok=True)  # the watcher's stamp was of these rows
        self._rows = {}
        self._documents = {}

    # -- refresh ---------------------------------------------------------------------------

    def refresh(
        self, *, rebuild: bool = False, progress: Callable[[int, int], None] | None = None
    ) -> RefreshStats:
        """Bring the index in step with the files; ``progress(done, total)`` while parsing."""
        started = time.perf_counter()
        rebuilt = rebuild
        if rebuild:
            with locked(self.root / INDEX_LOCK, display=INDEX_LOCK):
                self._discard()
            self._loaded = True
        elif not self._loaded:
            if not self._load():
                with locked(self.root / INDEX_LOCK, display=INDEX_LOCK):
                    self._discard()
                rebuilt = True
            self._loaded = True

        watcher = self._watcher() if self.watch and not rebuilt else None
        if watcher is not None and watcher[2] is not None:  # only what it saw change
            stats = self._refresh_paths(watcher[2], started)
            write_stamp(self.root, watcher[0], watcher[1])
            return stats
        left_out: list[Problem] = []
        files = list(walk_markdown(self.root, self.settings, left_out))
        rows = self._rows
        stale = [(p, stat) for p, stat in files if (row := rows.get(p)) is None or row[0] != stat]
        reused = len(files) - len(stale)
        known = reused + sum(1 for p, _ in stale if p in rows)
        removed: list[str] = []
        if known != len(rows):  # some indexed path was not found: which ones
            seen = {path for path, _ in files}
            removed = [path for path in rows if path not in seen]

        parsed, reused_now = self._apply(stale, removed, left_out, progress, rebuilt=rebuilt)
        self.left_out = left_out
        if watcher is not None:  # asked before the walk: later changes are told again
            write_stamp(self.root, watcher[0], watcher[1])
        return RefreshStats(
            seen=len(files),
            parsed=parsed,
            reused=reused + reused_now,
            removed=len(removed),
            seconds=time.perf_counter() - started,
            rebuilt=rebuilt,
        )

    def refresh_paths(self, paths: Iterable[str]) -> RefreshStats:
        """Bring just ``paths`` in step (what a file watcher reported), without a walk.

        Each path is judged by the index's own rules (:func:`~cuedeck.walk.admitted`):
        a file the index covers is read when its stat changed, anything else is dropped.
        """
        started = time.perf_counter()
        if not self._loaded:
            return self.refresh()
        return self._refresh_paths(paths, started)

    def _watcher(self) -> tuple[str, int, list[str] | None] | None:
        """What the workspace's watcher saw change since the stamp (None: no watcher,
        and one is started for the next command)."""
        from cuedeck import freshness

        if not freshness.supported():
            return None
        found = freshness.ask(self.root)
        if found is None:
            freshness.start(self.root)
        return found

    def _refresh_paths(self, paths: Iterable[str], started: float) -> RefreshStats:
        stale: list[tuple[str, FileStat]] = []
        removed: list[str] = []
        reused = 0
        wanted = sorted(set(paths))
        for path in wanted:
            stat = admitted(self.root, self.settings, path)
            row = self._rows.get(path)
            if stat is None:
                if row is not None:
                    removed.append(path)
            elif row is not None and row[0] == stat:
                reused += 1
            else:
                stale.append((path, stat))
        left_out = [p for p in self.left_out if p.path not in set(wanted)]
        parsed, reused_now = self._apply(stale, removed, left_out, None, rebuilt=False)
        self.left_out = left_out
        return RefreshStats(
            seen=len(wanted),
            parsed=parsed,
            reused=reused + reused_now,
            removed=len(removed),
            seconds=time.perf_counter() - started,
            rebuilt=False,
        )

    def _apply(
        self,
        stale: list[tuple[str, FileStat]],
        removed: list[str],
        left_out: list[Problem],
        progress: Callable[[int, int], None] | None,
        *,
        rebuilt: bool,
    ) -> tuple[int, int]:
        """Read and parse ``stale`` files, drop ``removed`` ones, write the changes:
        ``(parsed, reused)``."""
        updates: list[tuple[str, FileStat, str, bytes]] = []  # path, stat, sha, data
        touched: list[tuple[str, FileStat]] = []  # same content, new stat
        parsed = reused = 0
        self._defer = len(stale) >= DEFER_COUNTS
        chunks = map_chunks(self._read_files, stale, message="Indexing files", progress=progress)
        for outcomes in chunks:
            for path, stat, kind, found in outcomes:
                if kind == "parsed":
                    # The document is decoded from its data when read: sending it back
                    # from a worker would cost more than decoding the few that are read.
                    updates.append((path, stat, *found))
                    parsed += 1
                    continue
                if kind == "same":
                    touched.append((path, stat))
                    reused += 1
                    continue
                if kind != "gone":
                    left_out.append(found)
                if path in self._rows:  # gone, unreadable or no longer text
                    removed.append(path)

        if updates or touched or removed or rebuilt or not self.path.exists():
            self._write(updates, touched, removed)
        if updates or removed or rebuilt:
            self._bump(None if rebuilt else [path for path, *_ in updates] + removed)
        return parsed, reused

    def _read_files(self, files: Sequence[tuple[str, FileStat]], tick: Tick) -> list[Outcome]:
        """Read, hash and parse each of ``files``: what became of it (one :data:`Outcome`
        each). Runs in forked workers on a cold start, so it changes nothing itself."""
        outcomes: list[Outcome] = []
        for done, (path, stat) in enumerate(files, start=1):
            try:
                data = (self.root / path).read_bytes()
            except FileNotFoundError:
                outcomes.append((path, stat, "gone", None))
            except OSError as exc:
                outcomes.append((path, stat, "left out", unreadable(path, exc)))
            else:
                if binary(data):
                    outcomes.append((path, stat, "left out", binary_file(path)))
                elif (row := self._rows.get(path)) is not None and row[1] == sha256_bytes(data):
                    outcomes.append((path, stat, "same", None))
                else:
                    count = _uncounted if self._defer else self.count_tokens
                    document = parse_document(path, data, count_tokens=count, engine=self.engine)
                    blob = json.dumps(converter.unstructure(document)).encode("utf-8")
                    found = (document.sha256, zlib.compress(blob, 6))
                    outcomes.append((path, stat, "parsed", found))
            tick(done)
        return outcomes

    def _bump(self, paths: list[str] | None) -> None:
        """A new generation, in which ``paths`` changed (None: anything may have)."""
        self.generation += 1
        if paths is None:
            self._log.clear()
        else:
            self._log.append((self.generation, frozenset(paths)))
            del self._log[:-CHANGE_LOG]

    def changed_since(self, generation: int) -> set[str] | None:
        """Paths whose document was added, changed or removed after ``generation``, or
        None when that is not known (too long ago, or a rebuild since)."""
        if generation == self.generation:
            return set()
        known = [paths for gen, paths in self._log if gen > generation]
        if len(known) != self.generation - generation:
            return None
        return set().union(*known)

    def sha(self, path: str) -> str | None:
        """The sha256 of the indexed file at ``path``, or None."""
        row = self._rows.get(path)
        return row[1] if row is not None else None

    def _write(
        self,
        updates: list[tuple[str, FileStat, str, bytes]],
        touched: list[tuple[str, FileStat]],
        removed: list[str],
    ) -> None:
        with locked(self.root / INDEX_LOCK, display=INDEX_LOCK):
            connection = self._db()
            connection.execute("BEGIN IMMEDIATE")
            try:
                connection.executemany(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                    self._expected_meta().items(),
                )
                connection.executemany(
                    "INSERT OR REPLACE INTO documents VALUES (?, ?, ?, ?, ?)",
                    [(p, s[0], s[1], sha, data) for p, s, sha, data in updates],
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
                connection.execute("COMMIT")
            except BaseException:
                connection.execute("ROLLBACK")
                raise
        for path, stat, sha, data in updates:
            self._rows[path] = (stat, sha, data)
            self._documents.pop(path, None)  # decoded again from the new data when read
        for path, stat in touched:
            old = self._rows[path]
            self._rows[path] = (stat, old[1], old[2])
        for path in removed:
            self._rows.pop(path, None)
            self._documents.pop(path, None)

    # -- access ----------------------------------------------------------------------------

    @property
    def paths(self) -> list[str]:
        """Indexed paths, sorted."""
        return sorted(self._rows)

    def keys(self) -> list[tuple[str, str]]:
        """``(path, sha256)`` of every indexed file, sorted by path; decodes nothing."""
        if self._keys is None or self._keys[0] != self.generation:
            self._keys = (self.generation, sorted((p, row[1]) for p, row in self._rows.items()))
        return self._keys[1]

    def get(self, path: str, *, counted: bool = True) -> Document | None:
        """The document at ``path``, or None. ``counted=False`` leaves a count deferred by a
        large refresh unknown (:data:`UNCOUNTED`): for readers of headings and text only."""
        document = self._documents.get(path)
        if document is None:
            if path not in self._rows:
                return None
            self.fetch([path])
            row = self._rows.get(path)
            if row is None or row[2] is None:
                return None
            document = converter.structure(json.loads(zlib.decompress(row[2])), Document)
            self._documents[path] = document
        if counted and document.tokens == UNCOUNTED:
            document = attrs.evolve(document, tokens=self._tokens_of(document))
            self._documents[path] = document
        return document

    def _tokens_of(self, document: Document) -> int:
        """The exact token count of a document parsed without one: remembered by content
        hash, else counted from its file now (and remembered when the file is unchanged)."""
        with self._data_lock:
            if self._counts is None:
                try:
                    rows = self._db().execute("SELECT sha256, tokens FROM token_counts")
                    self._counts = dict(rows.fetchall())
                except sqlite3.Error:
                    self._counts = {}
            found = self._counts.get(document.sha256)
        if found is not None:
            return int(found)
        try:
            data = (self.root / document.path).read_bytes()
        except OSError:
            return 0  # gone: the next refresh drops it
        tokens = self.count_tokens(decode(data)[0])
        if sha256_bytes(data) == document.sha256:
            with self._data_lock, contextlib.suppress(sqlite3.Error):
                self._counts[document.sha256] = tokens
                self._db().execute(
                    "INSERT OR REPLACE INTO token_counts VALUES (?, ?)", (document.sha256, tokens)
                )
        return tokens

    @property
    def documents(self) -> Mapping[str, Document]:
        """Every indexed document by path, sorted by path."""
        return self.every()

    def every(self, *, counted: bool = True) -> Mapping[str, Document]:
        """Every indexed document by path, sorted by path (``counted``: see :meth:`get`)."""
        paths = self.paths
        self.fetch([p for p in paths if p not in self._documents])
        return {path: doc for path in paths if (doc := self.get(path, counted=counted))}

    def fetch(self, paths: Iterable[str]) -> None:
        """Read the stored data of ``paths`` not read yet, in one query for many (also
        before forking workers, which must not use this process's database connection)."""
        with self._data_lock:
            wanted = [p for p in paths if (row := self._rows.get(p)) is not None and row[2] is None]
            if not wanted:
                return
            connection = self._db()
            found: dict[str, tuple[str, bytes]] = {}
            if len(wanted) > 500:
                rows = connection.execute("SELECT path, sha256, data FROM documents")
            else:
                marks = ",".join("?" * len(wanted))
                rows = connection.execute(
                    f"SELECT path, sha256, data FROM documents WHERE path IN ({marks})", wanted
                )
            for path, sha, data in rows:
                found[path] = (sha, data)
            for path in wanted:
                stat, sha, _ = self._rows[path]
                stored = found.get(path)
                if stored is not None and stored[0] == sha:
                    self._rows[path] = (stat, sha, stored[1])
                else:  # another process changed the row: read the file again next refresh
                    self._rows.pop(path)
                    self._bump([path])

    def __contains__(self, path: object) -> bool:
        return path in self._rows


def _uncounted(text: str) -> int:
    return UNCOUNTED
