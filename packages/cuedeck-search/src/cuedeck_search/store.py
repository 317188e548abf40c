"""Split and tokenised documents, kept in the workspace's SQLite cache.

One row per (path, sha256): the sections and their keyword terms. A restart loads them
instead of reading, splitting and tokenising every file again; a row whose
``fingerprint`` (analysis version and ranking constants) differs is ignored and
replaced. Rows of files that changed or went away are pruned.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from typing import TYPE_CHECKING

import attrs

from cuedeck_search.keyword import DocumentTerms
from cuedeck_search.sections import Section

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from cuedeck_search.keyword import KeywordSettings

#: Bump when sections or terms would come out differently for the same file.
ANALYSIS_VERSION = 2

Key = tuple[str, str]  # (path, sha256)


def fingerprint(settings: KeywordSettings) -> str:
    """What stored rows must have been built with to be reused."""
    text = json.dumps([ANALYSIS_VERSION, attrs.asdict(settings)], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class SectionStore:
    """Reads and writes the ``search_documents`` table."""

    def __init__(self, connect: Callable[[], sqlite3.Connection], fingerprint: str) -> None:
        self._connect = connect
        self.fingerprint = fingerprint

    def _open(self) -> sqlite3.Connection:
        connection = self._connect()
        connection.execute(
            """
            CREATE TABLE IF NOT EXISTS search_documents (
                path TEXT NOT NULL,
                sha256 TEXT NOT NULL,
                fingerprint TEXT NOT NULL,
                sections TEXT NOT NULL,
                vocabulary TEXT NOT NULL,
                arrays BLOB NOT NULL,
                entries INTEGER NOT NULL,
                rows INTEGER NOT NULL,
                PRIMARY KEY (path, sha256)
            ) WITHOUT ROWID
            """
        )
        return connection

    def load(self, wanted: set[Key]) -> dict[Key, tuple[list[Section], DocumentTerms]]:
        """Stored documents among ``wanted`` (an unreadable cache loads nothing)."""
        found: dict[Key, tuple[list[Section], DocumentTerms]] = {}
        try:
            connection = self._open()
            try:
                rows = connection.execute(
                    "SELECT path, sha256, sections, vocabulary, arrays, entries, rows "
                    "FROM search_documents WHERE fingerprint = ?",
                    (self.fingerprint,),
                ).fetchall()
            finally:
                connection.close()
        except sqlite3.Error:
            return found
        for path, sha, sections, vocabulary, blob, entries, count in rows:
            if (path, sha) not in wanted:
                continue
            parsed = [
                Section(path, anchor, tuple(heading_path), line, end, text, digest)
                for anchor, heading_path, line, end, text, digest in json.loads(sections)
            ]
            found[(path, sha)] = (
                parsed,
                DocumentTerms.from_bytes(vocabulary, blob, entries, count),
            )
        return found

    def save(
        self,
        items: Sequence[tuple[Key, Sequence[Section], DocumentTerms]],
        current: Iterable[Key],
    ) -> None:
        """Store ``items`` and drop rows of any (path, sha256) not in ``current``."""
        keep = set(current)
        rows = []
        for (path, sha), sections, terms_ in items:
            data = json.dumps(
                [
                    [s.anchor, list(s.heading_path), s.line, s.end_line, s.text, s.hash]
                    for s in sections
                ],
                ensure_ascii=False,
            )
            rows.append((path, sha, self.fingerprint, data, *terms_.to_bytes()))
        try:
            connection = self._open()
            try:
                connection.execute("BEGIN IMMEDIATE")
                try:
                    connection.executemany(
                        "INSERT OR REPLACE INTO search_documents VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        rows,
                    )
                    stored = connection.execute(
                        "SELECT path, sha256 FROM search_documents"
                    ).fetchall()
                    connection.executemany(
                        "DELETE FROM search_documents WHERE path = ? AND sha256 = ?",
                        [tuple(key) for key in stored if tuple(key) not in keep],
                    )
                    connection.execute("COMMIT")
                except BaseException:
                    connection.execute("ROLLBACK")
                    raise
            finally:
                connection.close()
        except sqlite3.OperationalError:
            pass  # only a cache: a busy or read-only database means tokenising next time
