"""The index's documents as stored: decoded and counted when first read, with the
generations that changed them.

:class:`IndexDocuments` reads; :class:`~cuedeck.index.parsed.Index` builds on it to keep
the rows in step with the files. Rows come from the cache when first needed
(:mod:`cuedeck.index.rows`); a document is decoded from its row on first :meth:`get`.
"""

from __future__ import annotations

import hashlib
import json
import threading
import zlib
from typing import TYPE_CHECKING

import attrs

from cuedeck.index.rows import Rows
from cuedeck.index.store import UNCOUNTED, IndexStore, Version
from cuedeck.models import Document, converter
from cuedeck.text import decode
from cuedeck.writes import sha256_bytes

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Iterable, Mapping
    from pathlib import Path

CHANGE_LOG = 64  # generations whose changed paths are remembered (see changed_since)


class IndexDocuments:
    """The stored documents of one workspace, by path."""

    def __init__(self, root: Path, count_tokens: Callable[[str], int]) -> None:
        self.root = root
        self.count_tokens = count_tokens
        self.store = IndexStore(root)
        self.cache_dir = self.store.cache_dir
        self.path = self.store.path
        self._data_lock = threading.RLock()  # the store's connection
        # A refresh compares stats only, so the documents stay in the database until asked.
        self._rows = Rows(self.store, self._data_lock)
        self._documents: dict[str, Document] = {}
        self.generation = 0  # bumped whenever the set of documents changes
        self._keys: tuple[int, list[tuple[str, str]]] | None = None
        self._tree: tuple[int, str] | None = None
        self._log: list[tuple[int, frozenset[str]]] = []  # (generation, paths it changed)

    def connect(self) -> sqlite3.Connection:
        """A new connection to the cache database (WAL, waits up to 30 s for writers)."""
        return self.store.connect()

    def close(self) -> None:
        """Close the database connection (it reopens on the next refresh)."""
        self.store.close()

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

    def language(self, path: str) -> str | None:
        """The language of the indexed file at ``path`` (``markdown``...), or None."""
        return self._rows.languages.get(path) if self._rows.get(path) is not None else None

    @property
    def paths(self) -> list[str]:
        """Indexed paths, sorted."""
        return sorted(self._rows.every())

    def keys(self) -> list[tuple[str, str]]:
        """``(path, sha256)`` of every indexed file, sorted by path; decodes nothing."""
        if self._keys is None or self._keys[0] != self.generation:
            rows = self._rows.every()
            self._keys = (self.generation, sorted((p, row[1]) for p, row in rows.items()))
        return self._keys[1]

    def tree(self) -> str:
        """A digest of every indexed path and content hash (12 hex digits): two indexes
        with the same digest hold the same files."""
        if self._tree is None or self._tree[0] != self.generation:
            digest = hashlib.sha256()
            for path, sha in self.keys():
                digest.update(f"{path}\0{sha}\n".encode("utf-8", "surrogateescape"))
            self._tree = (self.generation, digest.hexdigest()[:12])
        return self._tree[1]

    # -- access ----------------------------------------------------------------------------

    def get(self, path: str, *, counted: bool = True) -> Document | None:
        """The document at ``path``, or None. ``counted=False`` leaves a count deferred by a
        large refresh unknown (:data:`UNCOUNTED`): for readers of headings and text only."""
        document = self._documents.get(path)
        if document is None:
            if self._rows.get(path) is None:
                return None
            self.fetch([path])
            row = self._rows.known.get(path)
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
            found = self.store.token_count(document.sha256)
        if found is not None:
            return found
        try:
            data = (self.root / document.path).read_bytes()
        except OSError:
            return 0  # gone: the next refresh drops it
        tokens = self.count_tokens(decode(data)[0])
        if sha256_bytes(data) == document.sha256:
            with self._data_lock:
                self.store.remember_count(document.sha256, tokens)
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
        for path in self._rows.fetch(paths):  # another process changed the row: read
            self._bump([path])  # the file again at the next refresh

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and self._rows.get(path) is not None

    # -- the stored journal (what another process wrote is seen too) -----------------------

    def stored_version(self) -> Version:
        """Where the stored documents stand now (:meth:`IndexStore.changes_since`)."""
        with self._data_lock:
            return self.store.version()

    def stored_keys(self) -> tuple[Version, list[tuple[str, str]]]:
        """``(path, sha256)`` of every stored document, and where they stand."""
        with self._data_lock:
            return self.store.keys()

    def stored_changes(self, since: Version) -> tuple[Version, dict[str, str | None] | None]:
        """Where the stored documents stand, and what changed since ``since``
        (:meth:`IndexStore.changes_since`)."""
        with self._data_lock:
            return self.store.changes_since(since)
