"""Split and tokenised documents, kept in the workspace's SQLite cache.

One row per (path, sha256): the sections and their keyword terms. A restart loads them
instead of reading, splitting and tokenising every file again; a row whose
``fingerprint`` (analysis version and ranking constants) differs is ignored and
replaced. Rows of files that changed or went away are pruned.

The payload is zlib-compressed (about a fifth of its size) in an ordinary rowid table:
rows of a few kilobytes in a WITHOUT ROWID table left most of their overflow pages
empty, so the cache was mostly air (88 of 145 MB at 40,000 files).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import struct
import zlib
from typing import TYPE_CHECKING, Any

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
    """Reads and writes the ``search_sections`` table."""

    def __init__(self, connect: Callable[[], sqlite3.Connection], fingerprint: str) -> None:
        self._connect = connect
        self.fingerprint = fingerprint

    def _open(self) -> sqlite3.Connection:
        connection = self._connect()
        connection.executescript(
            """
            DROP TABLE IF EXISTS search_documents;  -- the uncompressed layout of before
            CREATE TABLE IF NOT EXISTS search_sections (
                path TEXT NOT NULL,
                sha256 TEXT NOT NULL,
                fingerprint TEXT NOT NULL,
                payload BLOB NOT NULL,
                entries INTEGER NOT NULL,
                rows INTEGER NOT NULL,
                UNIQUE (path, sha256)
            );
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
                    "SELECT path, sha256, payload, entries, rows "
                    "FROM search_sections WHERE fingerprint = ?",
                    (self.fingerprint,),
                ).fetchall()
            finally:
                connection.close()
        except sqlite3.Error:
            return found
        for path, sha, payload, entries, count in rows:
            if (path, sha) not in wanted:
                continue
            try:
                listed, words, arrays = _unpack(payload)
            except (zlib.error, ValueError, struct.error):
                continue  # a damaged row: the file is split and tokenised again
            parsed = [
                Section(path, anchor, tuple(heading_path), line, end, text, digest)
                for anchor, heading_path, line, end, text, digest in listed
            ]
            found[(path, sha)] = (
                parsed,
                DocumentTerms.from_bytes(words, arrays, entries, count),
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
            vocabulary, arrays, entries, count = terms_.to_bytes()
            payload = _pack(data.encode("utf-8"), vocabulary.encode("utf-8"), arrays)
            rows.append((path, sha, self.fingerprint, payload, entries, count))
        try:
            connection = self._open()
            try:
                connection.execute("BEGIN IMMEDIATE")
                try:
                    connection.executemany(
                        "INSERT OR REPLACE INTO search_sections VALUES (?, ?, ?, ?, ?, ?)",
                        rows,
                    )
                    stored = connection.execute(
                        "SELECT path, sha256 FROM search_sections"
                    ).fetchall()
                    connection.executemany(
                        "DELETE FROM search_sections WHERE path = ? AND sha256 = ?",
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


_HEADER = struct.Struct("<III")


def _pack(sections: bytes, vocabulary: bytes, arrays: bytes) -> bytes:
    """One compressed payload: one zlib stream compresses better than three small ones."""
    header = _HEADER.pack(len(sections), len(vocabulary), len(arrays))
    return zlib.compress(header + sections + vocabulary + arrays, 6)


def _unpack(payload: bytes) -> tuple[Any, str, bytes]:
    """The inverse of :func:`_pack`: sections (parsed JSON), vocabulary text, arrays."""
    data = zlib.decompress(payload)
    sizes = _HEADER.unpack_from(data)
    start = _HEADER.size
    sections = data[start : start + sizes[0]]
    vocabulary = data[start + sizes[0] : start + sizes[0] + sizes[1]]
    arrays = data[start + sizes[0] + sizes[1] :]
    if len(arrays) != sizes[2]:
        raise ValueError("truncated payload")
    return json.loads(sections), vocabulary.decode("utf-8"), arrays
