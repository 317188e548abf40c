"""The parsed index: every markdown file of the workspace, cached in SQLite.

``.cuedeck/.cache/index.sqlite3`` holds one row per file (path, mtime, size, sha256 and
the parsed :class:`~cuedeck.models.Document` as JSON). A refresh re-reads a file only
when its mtime or size changed, and re-parses it only when its sha256 changed too.
Writers take ``.cuedeck/.cache/index.lock``; readers never block (WAL). A cache that is
corrupt or from another schema, counter or parser is rebuilt, with a warning.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sqlite3
import stat as stat_module
import time
from pathlib import Path
from typing import TYPE_CHECKING

import attrs
import pathspec

from cuedeck.files import locked, sha256_bytes
from cuedeck.layout import CACHE_DIR, CARDS_DIR, DOCS_DIR, INDEX_DB, INDEX_LOCK, WORKSPACE_DIR
from cuedeck.models import Document, converter
from cuedeck.parsing import parse_document

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping

    from cuedeck.blocks import Engine
    from cuedeck.config import IndexSettings

log = logging.getLogger("cuedeck")

SCHEMA_VERSION = 1
_ALWAYS_SKIPPED = {".git", ".hg", ".svn", "__pycache__"}


@attrs.frozen
class RefreshStats:
    """What one refresh did."""

    seen: int
    parsed: int
    reused: int
    removed: int
    seconds: float
    rebuilt: bool = False


@attrs.frozen
class FileStat:
    """The part of a stat result that decides whether a file changed."""

    mtime_ns: int
    size: int


class Globs:
    """Gitignore-style patterns, matched as one regular expression when none negates.

    pathspec tries each pattern in turn; one alternation is several times faster, which
    matters when every refresh matches every path of a large workspace.
    """

    def __init__(self, lines: list[str]) -> None:
        self.spec = pathspec.GitIgnoreSpec.from_lines(lines)
        patterns = [p for p in self.spec.patterns if p.include is not None]
        self.regex: re.Pattern[str] | None = None
        if patterns and all(p.include and p.regex is not None for p in patterns):
            alternatives = (
                p.regex.pattern.replace("(?P<ps_d>", "(?:") for p in patterns if p.regex
            )
            self.regex = re.compile("|".join(f"(?:{a})" for a in alternatives))

    def match(self, path: str) -> bool:
        """Whether ``path`` (a directory when it ends in ``/``) matches."""
        if self.regex is not None:
            return self.regex.match(path) is not None
        return self.spec.match_file(path)


def _spec(patterns: list[str]) -> Globs | None:
    return Globs(patterns) if patterns else None


def walk_markdown(root: Path, settings: IndexSettings) -> Iterator[tuple[str, FileStat]]:
    """Workspace-relative markdown paths the index covers, with their stats, sorted.

    Cards and docs under ``.cuedeck/`` always count; other files must match
    ``include``, must not match ``exclude`` and, when ``gitignore`` is on, must not be
    ignored by any ``.gitignore`` between the root and the file.
    """
    include = None if settings.include == ["**/*.md"] else _spec(settings.include)
    exclude = _spec(settings.exclude)
    max_bytes = int(settings.max_file_mb * 1024 * 1024)
    found: list[tuple[str, FileStat]] = []

    def visit(directory: Path, rel: str, ignores: list[tuple[str, Globs]]) -> None:
        if settings.gitignore:
            gitignore = directory / ".gitignore"
            if gitignore.is_file():
                try:
                    lines = gitignore.read_text(encoding="utf-8", errors="replace").splitlines()
                    ignores = [*ignores, (rel, Globs(lines))]
                except OSError:
                    pass
        try:
            entries = list(os.scandir(directory))
        except OSError:
            return
        for entry in entries:
            child = f"{rel}/{entry.name}" if rel else entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if entry.name in _ALWAYS_SKIPPED or child == WORKSPACE_DIR:
                    continue
                if exclude is not None and exclude.match(child + "/"):
                    continue
                if _ignored(child + "/", ignores):
                    continue
                visit(Path(entry.path), child, ignores)
                continue
            if not entry.name.endswith(".md"):
                continue
            if include is not None and not include.match(child):
                continue
            if exclude is not None and exclude.match(child):
                continue
            if _ignored(child, ignores):
                continue
            _add(entry, child)

    def _add(entry: os.DirEntry[str], child: str) -> None:
        try:
            st = entry.stat()
        except OSError:
            return
        if not stat_module.S_ISREG(st.st_mode):
            return
        if st.st_size > max_bytes:
            log.warning("skipped %s: %d bytes is over [index] max_file_mb", child, st.st_size)
            return
        found.append((child, FileStat(st.st_mtime_ns, st.st_size)))

    def visit_cuedeck(directory: str, rel: str) -> None:
        """Every markdown file under a card or doc folder, whatever the ignore rules say."""
        try:
            entries = list(os.scandir(directory))
        except OSError:
            return
        for entry in entries:
            if entry.name.startswith("."):
                continue
            child = f"{rel}/{entry.name}"
            if entry.is_dir(follow_symlinks=False):
                visit_cuedeck(entry.path, child)
            elif entry.name.endswith(".md"):
                _add(entry, child)

    visit(root, "", [])
    for special in (CARDS_DIR, DOCS_DIR):
        visit_cuedeck(os.path.join(root, special), special)
    found.sort(key=lambda pair: pair[0])
    return iter(found)


def _ignored(rel: str, ignores: list[tuple[str, Globs]]) -> bool:
    for base, spec in ignores:
        local = rel[len(base) + 1 :] if base else rel
        if spec.match(local):
            return True
    return False


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
        self._rows: dict[str, tuple[FileStat, str, str]] = {}  # path -> (stat, sha, json)
        self._documents: dict[str, Document] = {}
        self._loaded = False
        self._connection: sqlite3.Connection | None = None
        self.generation = 0  # bumped whenever the set of documents changes

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
                "SELECT path, mtime_ns, size, sha256, data FROM documents"
            ).fetchall()
        except sqlite3.DatabaseError as exc:
            log.warning("index cache %s is unreadable (%s); rebuilding it", self.path, exc)
            return False
        self._rows = {
            path: (FileStat(mtime, size), sha, data) for path, mtime, size, sha, data in rows
        }
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
                data TEXT NOT NULL
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

        files = list(walk_markdown(self.root, self.settings))
        seen = {path for path, _ in files}
        removed = [path for path in self._rows if path not in seen]
        stale: list[tuple[str, FileStat]] = []
        reused = 0
        for path, stat in files:
            row = self._rows.get(path)
            if row is not None and row[0] == stat:
                reused += 1
            else:
                stale.append((path, stat))

        updates: list[tuple[str, FileStat, str, str]] = []  # path, stat, sha, json
        touched: list[tuple[str, FileStat]] = []  # same content, new stat
        parsed = 0
        for done, (path, stat) in enumerate(stale, start=1):
            try:
                data = (self.root / path).read_bytes()
            except OSError:
                removed.append(path)
                continue
            row = self._rows.get(path)
            sha = sha256_bytes(data)
            if row is not None and row[1] == sha:
                touched.append((path, stat))
                reused += 1
            else:
                document = parse_document(
                    path, data, count_tokens=self.count_tokens, engine=self.engine
                )
                updates.append((path, stat, sha, json.dumps(converter.unstructure(document))))
                self._documents[path] = document
                parsed += 1
            if progress is not None:
                progress(done, len(stale))

        if updates or touched or removed or rebuilt or not self.path.exists():
            self._write(updates, touched, removed)
        if updates or removed or rebuilt:
            self.generation += 1
        return RefreshStats(
            seen=len(files),
            parsed=parsed,
            reused=reused,
            removed=len(removed),
            seconds=time.perf_counter() - started,
            rebuilt=rebuilt,
        )

    def _write(
        self,
        updates: list[tuple[str, FileStat, str, str]],
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
                    [(p, s.mtime_ns, s.size, sha, data) for p, s, sha, data in updates],
                )
                connection.executemany(
                    "UPDATE documents SET mtime_ns = ?, size = ? WHERE path = ?",
                    [(s.mtime_ns, s.size, p) for p, s in touched],
                )
                connection.executemany(
                    "DELETE FROM documents WHERE path = ?", [(p,) for p in removed]
                )
                connection.execute("COMMIT")
            except BaseException:
                connection.execute("ROLLBACK")
                raise
        for path, stat, sha, data in updates:
            self._rows[path] = (stat, sha, data)
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

    def get(self, path: str) -> Document | None:
        """The document at ``path``, or None."""
        document = self._documents.get(path)
        if document is not None:
            return document
        row = self._rows.get(path)
        if row is None:
            return None
        document = converter.structure(json.loads(row[2]), Document)
        self._documents[path] = document
        return document

    @property
    def documents(self) -> Mapping[str, Document]:
        """Every indexed document by path, sorted by path."""
        return {path: doc for path in self.paths if (doc := self.get(path)) is not None}

    def __contains__(self, path: object) -> bool:
        return path in self._rows
