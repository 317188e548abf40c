"""The code graph's SQLite file, ``.cuedeck/.cache/code-intel.sqlite3``.

- ``files``: each code file the graph holds, its sha256, language, namespace, the digest
  of what other files see of it (:func:`.extract.interface`) and where its edges come
  from (``syntactic``, or ``scip`` when a SCIP index of the same content was loaded);
- ``names``: every definition, by namespace (``space``: the file's id for a file that
  is its own namespace, minus the id of ``spaces`` for a shared one; ``key``: the name's
  CRC-32, what the index holds; ``short_key``: the last part's CRC-32, for the tools'
  look-up by short name, checked against the name): its row id is the symbol's id
  (edges point at it; kept while the definition is), and a file's ``module`` row (the
  code outside any definition); ``digest``: what resolving its chains reads of its file
  (:mod:`.owners`), so a refresh resolves again only the definitions that changed;
- ``bindings``: what only resolution reads of a file, its module-level imports and the
  typed names of its module and classes, as one zlib-compressed JSON row per file
  (:mod:`.rows` packs and unpacks it): most of a file's names, a fraction of their size;
- ``edges``: symbol to symbol, with the position of the reference
  (``line * 4096 + column``), its relation and its source, kept by target;
- ``scip``: each SCIP index loaded, and when.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import zlib
from typing import TYPE_CHECKING, Any

from cuedeck.layout import CACHE_DIR
from cuedeck.system.databases import open_db
from cuedeck_code.revision import graph_revision

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

FILE = f"{CACHE_DIR}/code-intel.sqlite3"
SCHEMA = "7"  # 6: imports and typed names in ``bindings``, a row per file; 7: digest
RELATIONS = ("reference", "call", "import", "inherit", "type", "decorator", "export")
SOURCES = ("syntactic", "scip")
COLUMN = 4096
#: Connections a forked worker inherited: kept, so that they are never closed there.
_INHERITED: list[sqlite3.Connection] = []

_TABLES = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, sha256 TEXT NOT NULL,
    language TEXT NOT NULL, ns TEXT NOT NULL, interface TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT 'syntactic');
CREATE TABLE IF NOT EXISTS spaces (id INTEGER PRIMARY KEY, ns TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS names (
    id INTEGER PRIMARY KEY, space INTEGER NOT NULL, key INTEGER NOT NULL, name TEXT NOT NULL,
    short_key INTEGER, kind TEXT NOT NULL, file INTEGER NOT NULL, line INTEGER NOT NULL,
    end_line INTEGER NOT NULL, extra TEXT, digest INTEGER);
CREATE INDEX IF NOT EXISTS names_key ON names (key, space);
CREATE INDEX IF NOT EXISTS names_file ON names (file);
CREATE INDEX IF NOT EXISTS names_short ON names (short_key) WHERE short_key IS NOT NULL;
CREATE TABLE IF NOT EXISTS bindings (file INTEGER PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS edges (
    dst INTEGER NOT NULL, src INTEGER NOT NULL, pos INTEGER NOT NULL,
    relation INTEGER NOT NULL, source INTEGER NOT NULL, PRIMARY KEY (dst, src, pos)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS edges_src ON edges (src);
CREATE TABLE IF NOT EXISTS scip (
    indexer TEXT PRIMARY KEY, path TEXT NOT NULL, loaded TEXT NOT NULL,
    documents INTEGER NOT NULL, edges INTEGER NOT NULL, tool TEXT NOT NULL);
"""


class GraphStore:
    """The graph's database, one connection per store (guarded by a lock). A forked
    worker (resolving a share of the files) reads through a read-only connection of its
    own: the one it inherited is left alone, neither used nor closed (closing it there
    would act on the parent's file locks)."""

    def __init__(self, root: Path) -> None:
        self.path = root / FILE
        self.lock = threading.RLock()
        self._connection: sqlite3.Connection | None = None
        self._opened = 0  # connections opened so far
        self._pid = os.getpid()  # the process the connection belongs to

    def db(self) -> sqlite3.Connection:
        if self._pid != os.getpid():  # in a forked worker
            if self._connection is not None:
                _INHERITED.append(self._connection)
            self.lock = threading.RLock()
            self._connection = open_db(self.path, read_only=True)
            self._pid = os.getpid()
            return self._connection
        if self._connection is None or not self.path.exists():
            self.close()
            connection = open_db(self.path, threads=True)  # one thread at a time: the lock
            found = None
            revision = f"{SCHEMA}/{graph_revision()}"  # a new walker builds the graph again
            with contextlib.suppress(sqlite3.Error):
                found = connection.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            if found is not None and found[0] != revision:
                connection.executescript(
                    "DROP TABLE IF EXISTS files; DROP TABLE IF EXISTS names; "
                    "DROP TABLE IF EXISTS spaces; DROP TABLE IF EXISTS edges; "
                    "DROP TABLE IF EXISTS bindings; "
                    "DROP TABLE IF EXISTS scip; DROP TABLE meta;"
                )
                with contextlib.suppress(sqlite3.Error):  # the old pages given back
                    connection.execute("VACUUM")
            connection.executescript(_TABLES)
            connection.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (revision,))
            self._connection = connection
            self._opened += 1
        return self._connection

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        with self.lock:
            db = self.db()
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def query(self, sql: str, parameters: tuple[Any, ...] | list[Any] = ()) -> list[Any]:
        with self.lock:
            return self.db().execute(sql, parameters).fetchall()

    def data_version(self) -> tuple[int, int]:
        """Changes when another connection (another process) commits to the database,
        or this store opens it again: what was read from it may be stale."""
        with self.lock:
            version = self.db().execute("PRAGMA data_version").fetchone()[0]
            return (self._opened, int(version))

    def unfinished(self) -> bool:
        """Whether a sync wrote names and stopped before their edges (it was killed)."""
        return bool(self.query("SELECT 1 FROM meta WHERE key = 'unfinished'"))

    def files(self) -> dict[str, tuple[int, str, str, str, str]]:
        """Path -> ``(id, sha256, interface, source, ns)`` of every file held."""
        rows = self.query("SELECT path, id, sha256, interface, source, ns FROM files")
        return {path: (fid, sha, face, source, ns) for path, fid, sha, face, source, ns in rows}


def name_key(name: str) -> int:
    """The number a name is looked up by (its CRC-32): the index holds it, not the
    name, at a fifth of the size."""
    return zlib.crc32(name.encode("utf-8"))


def pack_chain(chain: list[Any]) -> str:
    """A chain as the names table keeps it: its parts' names joined by dots."""
    return ".".join(str(part[0]) for part in chain)


def unpack_chain(text: str) -> list[list[Any]]:
    """What :func:`pack_chain` kept, as a chain (its positions lost: 0)."""
    return [[part, 0, 0] for part in text.split(".") if part]
