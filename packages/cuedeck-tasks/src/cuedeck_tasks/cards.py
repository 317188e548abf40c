"""Task cards: their fields, allowed values, ids and the text of a new card.

A card is ``.cuedeck/cards/<id>.md``: YAML frontmatter (``id``, ``title``, ``status``,
``priority``, ``assignee``, ``tags``, ``depends_on``, ``refs``, ``created``, ``updated`` and any
other keys a person adds), then a markdown body. The file name is the card's id.
"""

from __future__ import annotations

import hashlib
import os
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

import attrs

from cuedeck.errors import InvalidInput
from cuedeck.layout import CARD_ID, CARD_ID_PATTERN, card_path
from cuedeck.text import check_label

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

Status = Literal["todo", "active", "done", "archived"]
Priority = Literal["low", "medium", "high", "critical"]
STATUSES: tuple[str, ...] = ("todo", "active", "done", "archived")
PRIORITIES: tuple[str, ...] = ("low", "medium", "high", "critical")
ID_PATTERN = CARD_ID_PATTERN
#: Where a new card's keys go, and where a key added by an update is placed.
FIELD_ORDER: tuple[str, ...] = (
    "id",
    "title",
    "status",
    "priority",
    "assignee",
    "tags",
    "depends_on",
    "refs",
    "created",
    "updated",
)
_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"


@attrs.frozen
class Card:
    """One card as read from its file; ``sha256`` is of the bytes it was read from."""

    id: str
    title: str
    status: str
    priority: str
    assignee: str | None
    tags: tuple[str, ...]
    depends_on: tuple[str, ...]
    created: str | None
    updated: str | None
    path: str
    sha256: str
    problems: tuple[str, ...] = ()
    #: Fields whose value in the file has the wrong YAML type (a mapping for ``tags``,
    #: a number for ``status``): read as their default, never written over by an update.
    malformed: tuple[str, ...] = ()
    #: ``refs:`` entries as written (``doc/api#Login``, ``code/src/cart.py#Cart.add``).
    refs: tuple[str, ...] = ()
    #: Lines where a merge conflict starts (``<<<<<<<``): the card is broken until they
    #: are resolved (:mod:`cuedeck_tasks.cardmerge`).
    conflicted: tuple[int, ...] = ()

    @classmethod
    def from_frontmatter(
        cls,
        card_id: str,
        frontmatter: Mapping[str, Any],
        *,
        sha256: str,
        problems: Iterable[str] = (),
        heading: str | None = None,
        conflicted: tuple[int, ...] = (),
    ) -> Card:
        """The card of file ``<card_id>.md`` with this (already parsed) frontmatter.

        Hand-edited files are read leniently: missing fields take their defaults, a
        single string where a list belongs becomes a one-item list, and a card without a
        title takes its first heading's (``heading``), else its id.
        """
        found = list(problems)
        malformed: list[str] = []

        def text(field: str) -> str | None:
            value = frontmatter.get(field)
            if value is None or _scalar(value):
                return None if value is None else str(value)
            malformed.append(field)
            found.append(f"{field} must be text, not {_kind(value)}: {_short(value)}")
            return None

        def texts(field: str) -> tuple[str, ...]:
            value = frontmatter.get(field)
            if value is None:
                return ()
            if _scalar(value):
                return (str(value),)  # one string where a list belongs: a list of one
            if isinstance(value, list) and all(_scalar(item) for item in value):
                return tuple(str(item) for item in value if item is not None)
            malformed.append(field)
            found.append(f"{field} must be a list of text, not {_kind(value)}: {_short(value)}")
            return ()

        title, status, priority = text("title"), text("status"), text("priority")
        assignee, declared = text("assignee"), frontmatter.get("id")
        if declared is not None and str(declared) != card_id:
            found.append(f"frontmatter id {declared!r} differs from the file name {card_id!r}")
        if status is not None and status not in STATUSES:
            found.append(f"status {status!r} is not one of {', '.join(STATUSES)}")
        if priority is not None and priority not in PRIORITIES:
            found.append(f"priority {priority!r} is not one of {', '.join(PRIORITIES)}")
        return cls(
            id=card_id,
            title=title or heading or card_id,
            status=status if status is not None else "todo",
            priority=priority if priority is not None else "medium",
            assignee=assignee or None,
            tags=texts("tags"),
            depends_on=tuple(item.strip() for item in texts("depends_on")),
            created=text("created"),
            updated=text("updated"),
            path=card_path(card_id),
            sha256=sha256,
            problems=tuple(found),
            malformed=tuple(malformed),
            refs=tuple(item.strip() for item in texts("refs")),
            conflicted=conflicted,
        )

    def to_record(self) -> dict[str, Any]:
        """A JSON-ready dict of every field (the ``--json`` shape of a card)."""
        return {
            "id": self.id,
            "title": self.title,
            "status": self.status,
            "priority": self.priority,
            "assignee": self.assignee,
            "tags": list(self.tags),
            "depends_on": list(self.depends_on),
            "refs": list(self.refs),
            "created": self.created,
            "updated": self.updated,
            "path": self.path,
            "sha256": self.sha256,
            "conflict_lines": list(self.conflicted),
        }


def _scalar(value: Any) -> bool:
    """Whether a YAML value reads as one piece of text (a string, number, date...)."""
    return value is not None and not isinstance(value, dict | list | tuple | set)


def _kind(value: Any) -> str:
    return "a mapping" if isinstance(value, dict) else "a list of lists or mappings"


def _short(value: Any) -> str:
    import json

    shown = json.dumps(value, default=str, ensure_ascii=False)
    return shown if len(shown) <= 60 else shown[:57] + "..."


def utc_now() -> str:
    """The current time as an ISO 8601 UTC string with second precision."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_id(title: str) -> str:
    """A fresh 6-character id from the time, the title and random salt.

    The salt makes two people creating a card with the same title in the same
    nanosecond on different branches still get different ids (2 in 2**31 chance).
    """
    seed = f"{time.time_ns()}\0{title}".encode("utf-8", "surrogatepass")
    number = int.from_bytes(hashlib.blake2b(seed, salt=os.urandom(16)).digest()[:8], "big")
    chars = []
    for _ in range(6):
        number, digit = divmod(number, 36)
        chars.append(_ALPHABET[digit])
    return "".join(chars)


def check_id(card_id: str, *, field: str = "id") -> str:
    """``card_id`` if it is a card id, else InvalidInput naming ``field``."""
    if not isinstance(card_id, str) or not CARD_ID.match(card_id):
        raise InvalidInput(f"{card_id!r} is not a card id (6 characters of a-z, 0-9)", field=field)
    return card_id


def check_text(value: str, *, field: str, allow_empty: bool = False) -> str:
    """``value`` if a card file can hold it exactly (no NUL, no lone surrogate), else
    InvalidInput naming ``field``; for notes and bodies, which may span lines."""
    if not allow_empty and not value.strip():
        raise InvalidInput(f"{field} must not be empty", field=field)
    if "\x00" in value:
        raise InvalidInput(f"{field} contains a NUL byte", field=field)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(
            f"{field} contains a lone surrogate, which UTF-8 files cannot hold", field=field
        ) from None
    return value


def check_card_label(value: str, *, field: str, allow_empty: bool = False) -> str:
    """``value`` if it can be a title, tag or assignee (see :mod:`cuedeck.text`)."""
    if not allow_empty and not value.strip():
        raise InvalidInput(f"{field} must not be empty", field=field)
    return check_label(value, field)


def check_choice(value: str, choices: tuple[str, ...], *, field: str) -> str:
    """``value`` if it is one of ``choices``, else InvalidInput naming ``field``."""
    if value not in choices:
        raise InvalidInput(f"{field} {value!r} is not one of {', '.join(choices)}", field=field)
    return value


def heading_of(title: str) -> str:
    """The ``# Title`` line of a new card: the title on one line."""
    return "# " + " ".join(title.split())
