"""The index's rows in memory, read from its cache when first needed.

:class:`~cuedeck.index.parsed.Index` compares files with what it stored of them (mtime, size,
sha256) and keeps a document's compressed data once read. Reading every stored row of
a workspace of 40,000 files costs about a tenth of a second, which a command need not
pay when the watcher says nothing changed or when it reads a few documents: :class:`Rows`
holds the rows asked about so far, and reads every row when something needs them all
(a walk, a listing).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import threading
    from collections.abc import Iterable, Sequence

    from cuedeck.index.store import IndexStore, Update
    from cuedeck.index.walk import FileStat

#: ``(stat, sha256, zlib-compressed JSON or None until a reader needs it)``.
Row = tuple["FileStat", str, "bytes | None"]

#: Asked about more paths than this at once, read every row (one pass costs less).
MANY = 2000


class Rows:
    """Stored rows by path: those read or written so far, or all of them (:attr:`complete`).

    The store is read under ``lock`` (the index's, which serialises its connection)."""

    def __init__(self, store: IndexStore, lock: threading.RLock) -> None:
        self.store = store
        self.lock = lock
        self.known: dict[str, Row] = {}
        self.languages: dict[str, str] = {}  # path -> language, for the summary
        self.complete = True  # nothing stored until the cache is opened

    def reset(self, *, stored: bool) -> None:
        """Forget every row; ``stored``: the cache holds rows, to read when needed."""
        self.known.clear()
        self.languages.clear()
        self.complete = not stored

    def every(self) -> dict[str, Row]:
        """Every row, read from the cache the first time (rows read or written already
        stay as this process knows them)."""
        if self.complete:
            return self.known
        with self.lock:
            if not self.complete:
                for path, stat, sha, language in self.store.every_row():
                    if path not in self.known:
                        self.known[path] = (stat, sha, None)
                        self.languages[path] = language
                self.complete = True
        return self.known

    def read(self, paths: Iterable[str]) -> None:
        """Read the stored rows of ``paths`` not read yet (every row, for many)."""
        if self.complete:
            return
        with self.lock:
            wanted = [path for path in paths if path not in self.known]
            if len(wanted) > MANY or self.complete:
                self.every()
                return
            for path, stat, sha, language in self.store.rows(wanted):
                self.known[path] = (stat, sha, None)
                self.languages[path] = language

    def get(self, path: str) -> Row | None:
        """The row of ``path`` (read from the cache if need be), or None."""
        row = self.known.get(path)
        if row is None and not self.complete:
            self.read([path])
            row = self.known.get(path)
        return row

    def paths(self) -> Iterable[str]:
        """Every stored path, without reading the rows not read yet."""
        if self.complete:
            return self.known
        with self.lock:
            return self.store.paths()

    def fetch(self, paths: Iterable[str]) -> list[str]:
        """Read the stored data of ``paths`` not read yet, in one query for many; the paths
        whose stored row another process changed since are forgotten, and returned."""
        dropped: list[str] = []
        with self.lock:
            paths = list(paths)
            self.read(paths)
            rows = self.known
            wanted = [p for p in paths if (row := rows.get(p)) is not None and row[2] is None]
            if not wanted:
                return dropped
            found = self.store.data(wanted)
            for path in wanted:
                stat, sha, _ = rows[path]
                stored = found.get(path)
                if stored is not None and stored[0] == sha:
                    rows[path] = (stat, sha, stored[1])
                else:
                    rows.pop(path)
                    self.languages.pop(path, None)
                    dropped.append(path)
        return dropped

    def written(
        self,
        updates: Sequence[Update],
        touched: Sequence[tuple[str, FileStat]],
        removed: Sequence[str],
    ) -> None:
        """Follow what the index just wrote: new documents, new stats, files gone."""
        for path, stat, sha, language, data in updates:
            self.known[path] = (stat, sha, data)
            self.languages[path] = language
        for path, stat in touched:
            old = self.known[path]
            self.known[path] = (stat, old[1], old[2])
        for path in removed:
            self.known.pop(path, None)
            self.languages.pop(path, None)
