"""The identifiers each source file mentions, counted, and cached by the file's sha256.

The reference graph of :mod:`cuedeck_code.codegraph` joins these mentions to the
definitions of the index: a file that says ``parse_url`` three times refers to the
symbols named ``parse_url``. A word scan rather than a syntax walk: comments and
strings that name a definition are references an agent cares about too, and the scan
reads a large repository in a fraction of what parsing costs.
"""

from __future__ import annotations

import logging
import re
import sqlite3
import zlib
from collections import Counter
from typing import TYPE_CHECKING

from cuedeck.system.cache_db import cache_db

if TYPE_CHECKING:
    import contextlib
    from collections.abc import Iterable, Mapping
    from pathlib import Path

log = logging.getLogger("cuedeck")

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: Bumped when what is counted changes (the cache then fills again).
SCHEMA = "1"
#: Shortest identifier counted (``db`` is a name; ``i`` and ``x`` are noise).
MIN_LENGTH = 2


def count_identifiers(text: str) -> Counter[str]:
    """How often each identifier occurs in ``text``."""
    return Counter(word for word in IDENTIFIER.findall(text) if len(word) >= MIN_LENGTH)


def identifier_lines(text: str, wanted: Iterable[str]) -> dict[str, list[int]]:
    """The 1-based lines on which each of ``wanted`` occurs in ``text``."""
    names = set(wanted)
    found: dict[str, list[int]] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        for word in IDENTIFIER.findall(line):
            if word in names:
                lines = found.setdefault(word, [])
                if not lines or lines[-1] != number:
                    lines.append(number)
    return found


class IdentifierCache:
    """Identifier counts of file contents by sha256, in an SQLite file of the cache."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _connect(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        return cache_db(
            self.path,
            "CREATE TABLE IF NOT EXISTS identifiers "
            "(sha256 TEXT PRIMARY KEY, schema TEXT NOT NULL, data BLOB NOT NULL)",
        )

    def get_many(self, digests: Iterable[str]) -> dict[str, Counter[str]]:
        """The counts held for ``digests`` (those not held are left out)."""
        wanted = list(dict.fromkeys(digests))
        found: dict[str, Counter[str]] = {}
        if not wanted or not self.path.exists():
            return found
        try:
            with self._connect() as connection:
                for start in range(0, len(wanted), 500):
                    chunk = wanted[start : start + 500]
                    marks = ",".join("?" * len(chunk))
                    rows = connection.execute(
                        f"SELECT sha256, data FROM identifiers WHERE schema = ? "
                        f"AND sha256 IN ({marks})",
                        (SCHEMA, *chunk),
                    )
                    for digest, data in rows:
                        found[digest] = _decode(data)
        except (sqlite3.Error, zlib.error, ValueError) as exc:
            log.debug("identifier cache unreadable: %s", exc)
            return {}
        return found

    def put_many(self, counts: Mapping[str, Counter[str]]) -> None:
        """Remember counts; a failed write only costs a scan next time."""
        if not counts:
            return
        rows = [(digest, SCHEMA, _encode(found)) for digest, found in counts.items()]
        try:
            with self._connect() as connection:
                connection.executemany("INSERT OR REPLACE INTO identifiers VALUES (?, ?, ?)", rows)
        except sqlite3.Error as exc:
            log.debug("identifier cache not written: %s", exc)


def _encode(counts: Counter[str]) -> bytes:
    text = "\n".join(f"{name} {n}" for name, n in sorted(counts.items()))
    return zlib.compress(text.encode("utf-8"), 1)


def _decode(data: bytes) -> Counter[str]:
    found: Counter[str] = Counter()
    text = zlib.decompress(data).decode("utf-8")
    for line in text.split("\n"):
        if line:
            name, _, n = line.partition(" ")
            found[name] = int(n)
    return found
