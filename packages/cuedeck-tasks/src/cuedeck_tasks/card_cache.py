"""The cross-process cache of parsed cards, so a command reads only the cards that changed.

One SQLite row per card: its file key (inode, mtime, size) and the card's fields as
JSON. A row whose key differs from the file's, or from another schema, is ignored; the
cache may be deleted at any time.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from typing import TYPE_CHECKING, Any

import attrs

from cuedeck.system.cache_db import cache_db
from cuedeck_tasks.cards import Card

if TYPE_CHECKING:
    import contextlib
    from pathlib import Path

log = logging.getLogger("cuedeck")

#: Bumped whenever :class:`Card` changes shape or how it is read (3: ``malformed``;
#: 4: a card without a title takes its first heading's; 5: ``refs``; 6: ``conflicted``).
CACHE_SCHEMA = "6"
FileKey = tuple[int, int, int]  # inode, mtime_ns, size


class CardCache:
    """Parsed cards by id, valid while their file key is unchanged."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._rows: dict[str, tuple[FileKey, list[Any]]] | None = None  # loaded on first use

    def get(self, card_id: str, key: FileKey) -> Card | None:
        """The cached card ``card_id`` if its file still has ``key``."""
        if self._rows is None:
            self._rows = self._load()
        row = self._rows.get(card_id)
        if row is None or row[0] != key:
            return None
        try:
            return _card(row[1])
        except (IndexError, TypeError):
            return None

    def save(self, fresh: list[tuple[str, FileKey, Card]]) -> None:
        """Remember cards just parsed; a failed write only costs a parse next time."""
        rows = [
            (card_id, CACHE_SCHEMA, *key, json.dumps(_fields(card), ensure_ascii=False))
            for card_id, key, card in fresh
        ]
        try:
            with self._connect() as connection:
                connection.executemany(
                    "INSERT OR REPLACE INTO cards VALUES (?, ?, ?, ?, ?, ?)", rows
                )
        except sqlite3.Error as exc:  # a cache write must never fail a command
            log.debug("card cache not updated: %s", exc)

    def _load(self) -> dict[str, tuple[FileKey, list[Any]]]:
        try:
            with self._connect() as connection:
                rows = connection.execute(
                    "SELECT id, ino, mtime_ns, size, card FROM cards WHERE schema = ?",
                    (CACHE_SCHEMA,),
                ).fetchall()
            # One JSON document for all rows: far cheaper than a json.loads per card.
            decoded = json.loads("[" + ",".join(row[4] for row in rows) + "]")
        except (sqlite3.Error, ValueError) as exc:
            log.debug("card cache unreadable, parsing cards instead: %s", exc)
            return {}
        return {
            row[0]: ((row[1], row[2], row[3]), fields)
            for row, fields in zip(rows, decoded, strict=True)
        }

    def _connect(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        return cache_db(
            self.path,
            "CREATE TABLE IF NOT EXISTS cards (id TEXT PRIMARY KEY, schema TEXT NOT NULL, "
            "ino INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL, "
            "card TEXT NOT NULL)",
        )


#: Fields held as tuples (JSON gives lists back); annotations are strings here.
_TUPLES = frozenset(f.name for f in attrs.fields(Card) if str(f.type).startswith("tuple"))


def _fields(card: Card) -> list[Any]:
    """The values of ``card``'s fields in order (what a row stores)."""
    return [getattr(card, field.name) for field in attrs.fields(Card)]


def _card(values: list[Any]) -> Card:
    """The card a row stores (JSON lists back to the tuples the fields hold)."""
    names = [field.name for field in attrs.fields(Card)]
    if len(values) != len(names):
        raise IndexError("a row of another shape")
    fields: dict[str, Any] = {
        name: tuple(value) if name in _TUPLES else value
        for name, value in zip(names, values, strict=True)
    }
    return Card(**fields)
