"""The parsed index: every file of the workspace a parser reads, cached in SQLite.

``.cuedeck/.cache/index.sqlite3`` holds one row per file (path, mtime, size, sha256,
language and the parsed :class:`~cuedeck.models.Document` as JSON), and one per file a
parser passed over (generated, minified), so a refresh does not read it again while it is
unchanged. A refresh re-reads a file only when its mtime or size changed, and re-parses
it only when its sha256 changed too. Writers take ``.cuedeck/.cache/index.lock``;
readers never block (WAL). A cache that is corrupt or from another schema, counter or
set of parsers is rebuilt, with a warning.
"""

from __future__ import annotations

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
from cuedeck.layout import CACHE_DIR, INDEX_DB, INDEX_LOCK
from cuedeck.models import Document, Problem, converter
from cuedeck.parallel import Tick, map_chunks
from cuedeck.parsers import ParseContext, Parsers, SkipFile
from cuedeck.walk import (
    NOT_INDEXED,
    FileStat,
    admitted,
    binary,
    binary_file,
    unreadable,
    walk_files,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from cuedeck.config import Config, IndexSettings

log = logging.getLogger("cuedeck")

SCHEMA_VERSION = 4  # 2: document data zlib-compressed; 3: parsers, language, passed_over;
# 4: heading aliases
CHANGE_LOG = 64  # generations whose changed paths are remembered (see changed_since)

#: What a refresh found of one file: ``(path, stat, kind, detail)``. ``kind`` is
#: ``parsed`` (detail: sha256, language and the stored data), ``same`` (content
#: unchanged), ``passed over`` (detail: the parser's reason), ``left out`` (detail: the
#: Problem saying why) or ``gone``.
Outcome = tuple[str, FileStat, str, Any]


#: What each key of the cache's meta table is, in a sentence.
_META_WORDS = {"schema": "format", "counter": "token counter", "engine": "markdown parser"}


def _cache_difference(found: Mapping[str, str], wanted: Mapping[str, str]) -> str:
    """Why a cache cannot be reused, in words: ``the index cache was built by another
    version of CueDeck (format 2, now 3)``."""
    changes = [
        f"{_META_WORDS.get(key, key)} {found.get(key, 'unknown')}, now {wanted[key]}"
        for key in wanted
        if found.get(key) != wanted[key]
    ]
    if "schema" in wanted and found.get("schema") != wanted["schema"]:
        return f"the index cache was built by another version of CueDeck ({'; '.join(changes)})"
    return f"the index cache was built with another setting ({'; '.join(changes)})"


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
        parsers: Parsers,
        config: Config | None = None,
    ) -> None:
        self.root = root
        self.settings = settings
        self.counter_name = counter_name
        self.count_tokens = count_tokens
        self.parsers = parsers
        self.config = config
        self.cache_dir = root / CACHE_DIR
        self.path = root / INDEX_DB
        # path -> (stat, sha, zlib-compressed JSON or None until a reader needs it): a
        # refresh compares stats only, so the documents stay in the database until asked.
        self._rows: dict[str, tuple[FileStat, str, bytes | None]] = {}
        self._data_lock = threading.Lock()
        self._documents: dict[str, Document] = {}
        self._loaded = False
        self._connection: sqlite3.Connection | None = None
        self.generation = 0  # bumped whenever the set of documents changes
        self._keys: tuple[int, list[tuple[str, str]]] | None = None
        self._log: list[tuple[int, frozenset[str]]] = []  # (generation, paths it changed)
        #: What the last refresh left out (links leaving the workspace, binary or
        #: unreadable files), as warnings for ``cue doctor``.
        self.left_out: list[Problem] = []
        #: Files a parser's selector or the parser itself passed over, by reason
        #: (``vendored``, ``generated``...), as of the last refresh.
        self.passed_over: dict[str, list[str]] = {}
        self._passed: dict[str, tuple[FileStat, str]] = {}  # path -> (stat, reason)
        self._languages: dict[str, str] = {}  # path -> language, for the summary
        self._context: ParseContext | None = None

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
            "parsers": self.parsers.fingerprint(),
        }

    def _settings_key(self) -> str:
        """A digest of the config: files passed over under other settings are read again."""
        if self.config is None:
            return ""
        fields = attrs.asdict(self.config, filter=lambda a, _: a.name not in ("lines", "warnings"))
        return sha256_bytes(json.dumps(fields, sort_keys=True, default=str).encode())[:16]

    def _load(self) -> bool:
        """Read the cache into memory; False (and a warning) when it had to be discarded."""
        try:
            connection = self._db()
            meta = dict(connection.execute("SELECT key, value FROM meta").fetchall())
            if meta and meta != self._expected_meta():
                log.warning("%s; rebuilding it", _cache_difference(meta, self._expected_meta()))
                return False
            rows = connection.execute(
                "SELECT path, mtime_ns, size, sha256, language FROM documents"
            ).fetchall()
            passed = connection.execute(
                "SELECT path, mtime_ns, size, reason FROM passed_over WHERE settings = ?",
                (self._settings_key(),),
            ).fetchall()
        except sqlite3.DatabaseError as exc:
            log.warning("index cache %s is unreadable (%s); rebuilding it", self.path, exc)
            return False
        self._rows = {path: ((mtime, size), sha, None) for path, mtime, size, sha, _ in rows}
        self._languages = {path: language for path, *_, language in rows}
        self._passed = {path: ((mtime, size), reason) for path, mtime, size, reason in passed}
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
        self._rows = {}
        self._documents = {}
        self._passed = {}
        self._languages = {}

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

        left_out: list[Problem] = []
        passed_over: dict[str, list[str]] = {}
        files = list(
            walk_files(
                self.root,
                self.settings,
                self.parsers,
                left_out,
                selectors=self._selectors(),
                passed_over=passed_over,
            )
        )
        rows = self._rows
        stale = [(p, stat) for p, stat in files if (row := rows.get(p)) is None or row[0] != stat]
        reused = len(files) - len(stale)
        known = reused + sum(1 for p, _ in stale if p in rows)
        removed: list[str] = []
        if known != len(rows):  # some indexed path was not found: which ones
            seen = {path for path, _ in files}
            removed = [path for path in rows if path not in seen]
        stale = self._not_passed_over(stale, passed_over)
        forgotten = [p for p in self._passed if p not in {path for path, _ in files}]

        self._context = ParseContext(self.count_tokens, frozenset(p for p, _ in files), self.config)
        parsed, reused_now = self._apply(
            stale, removed, left_out, progress, rebuilt=rebuilt, forgotten=forgotten,
            passed_over=passed_over,
        )  # fmt: skip
        self.left_out = left_out
        self.passed_over = {reason: sorted(paths) for reason, paths in passed_over.items()}
        return RefreshStats(
            seen=len(files),
            parsed=parsed,
            reused=reused + reused_now,
            removed=len(removed),
            seconds=time.perf_counter() - started,
            rebuilt=rebuilt,
        )

    def _selectors(self) -> dict[str, Callable[[str, int], str | None]]:
        """Each parser's selector for this refresh (built from the config)."""
        if self.config is None:
            return {}
        found = {}
        for name, parser in self.parsers.all.items():
            if parser.select is not None:
                found[name] = parser.select(self.root, self.config)
        return found

    def _not_passed_over(
        self, stale: list[tuple[str, FileStat]], passed_over: dict[str, list[str]]
    ) -> list[tuple[str, FileStat]]:
        """``stale`` less the files a parser passed over before, unchanged since; those
        are added to ``passed_over`` under their reason."""
        if not self._passed:
            return stale
        kept = []
        for path, stat in stale:
            before = self._passed.get(path)
            if before is not None and before[0] == stat:
                passed_over.setdefault(before[1], []).append(path)
            else:
                kept.append((path, stat))
        return kept

    def refresh_paths(self, paths: Iterable[str]) -> RefreshStats:
        """Bring just ``paths`` in step (what a file watcher reported), without a walk.

        Each path is judged by the index's own rules (:func:`~cuedeck.walk.admitted`):
        a file the index covers is read when its stat changed, anything else is dropped.
        """
        started = time.perf_counter()
        if not self._loaded:
            return self.refresh()
        stale: list[tuple[str, FileStat]] = []
        removed: list[str] = []
        reused = 0
        wanted = sorted(set(paths))
        selectors = self._selectors()
        for path in wanted:
            stat = admitted(self.root, self.settings, self.parsers, path, selectors)
            row = self._rows.get(path)
            if stat is None:
                if row is not None:
                    removed.append(path)
            elif row is not None and row[0] == stat:
                reused += 1
            else:
                stale.append((path, stat))
        passed_over = {
            reason: [p for p in found if p not in set(wanted)]
            for reason, found in self.passed_over.items()
        }
        stale = self._not_passed_over(stale, passed_over)
        left_out = [p for p in self.left_out if p.path not in set(wanted)]
        known = self._context.paths if self._context is not None else frozenset()
        if stale and not all(path in known for path, _ in stale):
            known = frozenset([*self._rows, *wanted])  # a new file: its imports may resolve
        self._context = ParseContext(self.count_tokens, known, self.config)
        parsed, reused_now = self._apply(
            stale, removed, left_out, None, rebuilt=False, passed_over=passed_over
        )
        self.left_out = left_out
        self.passed_over = {reason: sorted(found) for reason, found in passed_over.items() if found}
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
        passed_over: dict[str, list[str]],
        forgotten: Sequence[str] = (),
    ) -> tuple[int, int]:
        """Read and parse ``stale`` files, drop ``removed`` ones, write the changes:
        ``(parsed, reused)``. Files a parser passes over are added to ``passed_over``
        and remembered; ``forgotten`` ones (no longer walked) are forgotten."""
        updates: list[tuple[str, FileStat, str, str, bytes]] = []  # path, stat, sha, lang, data
        touched: list[tuple[str, FileStat]] = []  # same content, new stat
        passed: list[tuple[str, FileStat, str]] = []  # path, stat, reason
        parsed = reused = 0
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
                if kind == "passed over":
                    passed.append((path, stat, found))
                    passed_over.setdefault(found, []).append(path)
                elif kind != "gone":
                    left_out.append(found)
                if path in self._rows:  # gone, unreadable, no longer text or passed over
                    removed.append(path)

        forget = [*forgotten, *(p for p in removed if p in self._passed)]
        if updates or touched or removed or passed or forget or rebuilt or not self.path.exists():
            self._write(updates, touched, removed, passed, forget)
        if updates or removed or rebuilt:
            self._bump(None if rebuilt else [path for path, *_ in updates] + removed)
        return parsed, reused

    def _read_files(self, files: Sequence[tuple[str, FileStat]], tick: Tick) -> list[Outcome]:
        """Read, hash and parse each of ``files``: what became of it (one :data:`Outcome`
        each). Runs in forked workers on a cold start, so it changes nothing itself."""
        outcomes: list[Outcome] = []
        context = self._context or ParseContext(
            self.count_tokens, frozenset(self._rows), self.config
        )
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
                    outcomes.append((path, stat, *self._parse(path, data, context)))
            tick(done)
        return outcomes

    def _parse(self, path: str, data: bytes, context: ParseContext) -> tuple[str, Any]:
        """``(kind, detail)`` of an :data:`Outcome` for a file's bytes."""
        parser = self.parsers.claim(path)
        if parser is None:  # only the walk's rules bring a path here
            return "gone", None
        try:
            document = parser.parse(path, data, context)
        except SkipFile as skip:
            return "passed over", skip.reason
        except Exception as exc:  # a plugin's parser must not stop the index
            return "left out", parser_failed(path, parser.name, exc)
        blob = json.dumps(converter.unstructure(document)).encode("utf-8")
        language = document.language or "markdown"
        return "parsed", (document.sha256, language, zlib.compress(blob, 6))

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
        updates: list[tuple[str, FileStat, str, str, bytes]],
        touched: list[tuple[str, FileStat]],
        removed: list[str],
        passed: Sequence[tuple[str, FileStat, str]] = (),
        forget: Sequence[str] = (),
    ) -> None:
        settings = self._settings_key()
        with locked(self.root / INDEX_LOCK, display=INDEX_LOCK):
            connection = self._db()
            connection.execute("BEGIN IMMEDIATE")
            try:
                connection.executemany(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                    self._expected_meta().items(),
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
                connection.executemany(
                    "DELETE FROM passed_over WHERE path = ?",
                    [(p,) for p in [*forget, *(u[0] for u in updates)]],
                )
                connection.executemany(
                    "INSERT OR REPLACE INTO passed_over VALUES (?, ?, ?, ?, ?)",
                    [(p, s[0], s[1], reason, settings) for p, s, reason in passed],
                )
                connection.execute("COMMIT")
            except BaseException:
                connection.execute("ROLLBACK")
                raise
        for path, stat, sha, language, data in updates:
            self._rows[path] = (stat, sha, data)
            self._languages[path] = language
            self._documents.pop(path, None)  # decoded again from the new data when read
            self._passed.pop(path, None)
        for path, stat in touched:
            old = self._rows[path]
            self._rows[path] = (stat, old[1], old[2])
        for path in removed:
            self._rows.pop(path, None)
            self._documents.pop(path, None)
            self._languages.pop(path, None)
        for path in forget:
            self._passed.pop(path, None)
        for path, stat, reason in passed:
            self._passed[path] = (stat, reason)

    def summary(self) -> dict[str, dict[str, int]]:
        """Files indexed per language and files passed over per reason (last refresh)."""
        languages: dict[str, int] = {}
        for language in self._languages.values():
            languages[language] = languages.get(language, 0) + 1
        return {
            "languages": dict(sorted(languages.items())),
            "passed_over": {r: len(p) for r, p in sorted(self.passed_over.items())},
        }

    def language(self, path: str) -> str | None:
        """The language of the indexed file at ``path`` (``markdown``...), or None."""
        return self._languages.get(path)

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

    def get(self, path: str) -> Document | None:
        """The document at ``path``, or None."""
        document = self._documents.get(path)
        if document is not None:
            return document
        if path not in self._rows:
            return None
        self.fetch([path])
        row = self._rows.get(path)
        if row is None or row[2] is None:
            return None
        document = converter.structure(json.loads(zlib.decompress(row[2])), Document)
        self._documents[path] = document
        return document

    @property
    def documents(self) -> Mapping[str, Document]:
        """Every indexed document by path, sorted by path."""
        paths = self.paths
        self.fetch([p for p in paths if p not in self._documents])
        return {path: doc for path in paths if (doc := self.get(path)) is not None}

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
                    self._languages.pop(path, None)
                    self._bump([path])

    def __contains__(self, path: object) -> bool:
        return path in self._rows


def parser_failed(path: str, parser: str, error: Exception) -> Problem:
    """The warning for a file whose parser raised."""
    return Problem(
        "warning",
        NOT_INDEXED,
        path,
        None,
        f"not indexed: parser {parser!r} failed on it ({type(error).__name__}: {error})",
        "report it to the parser's plugin, or leave the file out with [index] exclude",
    )
