"""Filters of the card list: status, assignee, tags, priority, created and updated.

Date filters take a day, an instant or an age:

- ``2024-01-01`` (that day, UTC), ``>2024-01-01``, ``<=2024-01-01T12:00:00Z``;
- ``<2w`` (less than two weeks old), ``>3d`` (more than three days old), ``2w`` (=
  ``<2w``); units ``d`` (day), ``w`` (7 days), ``m`` (30 days), ``y`` (365 days).
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Literal

import attrs

from cuedeck.errors import InvalidInput

if TYPE_CHECKING:
    from collections.abc import Iterable

    from cuedeck_tasks.cards import Card

Op = Literal["<", "<=", ">", ">=", "="]
DATE_FILTER_PATTERN = (
    r"^\s*(?:[<>]=?|=)?\s*(?:\d+\s*[dwmy]|"
    r"\d{4}-\d{2}-\d{2}(?:[T ][0-9:.]+(?:Z|[+-]\d{2}:?\d{2})?)?)\s*$"
)
_DATE_FILTER = re.compile(
    r"^\s*(?P<op>[<>]=?|=)?\s*(?:(?P<amount>\d+)\s*(?P<unit>[dwmy])|(?P<when>\d{4}-\d{2}-\d{2}\S*))\s*$"
)
_UNITS = {"d": 1, "w": 7, "m": 30, "y": 365}


def parse_timestamp(value: str | None) -> datetime | None:
    """An aware UTC datetime from an ISO 8601 string (naive means UTC), or None."""
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


@attrs.frozen
class DateFilter:
    """A comparison of a card timestamp with a day, an instant or an age."""

    op: Op
    day: date | None = None
    instant: datetime | None = None
    text: str = ""

    @classmethod
    def parse(cls, text: str, *, field: str, now: datetime | None = None) -> DateFilter:
        """The filter written as ``text``; InvalidInput naming ``field`` when unreadable."""
        match = _DATE_FILTER.match(text)
        if match is None:
            raise InvalidInput(
                f"{field} filter {text!r} is not a date (2024-01-01, >2024-01-01) "
                "or an age (<2w, >3d; units d, w, m, y)",
                field=field,
            )
        op = match.group("op") or None
        if match.group("amount") is not None:
            if op == "=":
                raise InvalidInput(f"{field} filter {text!r}: use < or > with an age", field=field)
            # An age bound flips the comparison: "<2w" (younger) means "after now - 2w".
            flipped: dict[str | None, Op] = {None: ">", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
            try:
                age = timedelta(days=int(match.group("amount")) * _UNITS[match.group("unit")])
                moment = (now or datetime.now(UTC)) - age
            except OverflowError:  # more days than a calendar holds
                raise InvalidInput(
                    f"{field} filter {text!r}: the age reaches before year 1", field=field
                ) from None
            return cls(op=flipped[op], instant=moment, text=text)
        when = match.group("when")
        if len(when) == 10:
            try:
                day = date.fromisoformat(when)
            except ValueError:
                raise InvalidInput(f"{field} filter {text!r}: no such day", field=field) from None
            return cls(op=op or "=", day=day, text=text)  # type: ignore[arg-type]
        instant = parse_timestamp(when)
        if instant is None:
            raise InvalidInput(f"{field} filter {text!r}: not an ISO 8601 time", field=field)
        return cls(op=op or "=", instant=instant, text=text)  # type: ignore[arg-type]

    def accepts(self, value: str | None) -> bool:
        """Whether the timestamp ``value`` passes; a missing or unreadable one never does."""
        moment = parse_timestamp(value)
        if moment is None:
            return False
        if self.day is not None:
            return _compare(moment.date(), self.op, self.day)
        assert self.instant is not None
        return _compare(moment, self.op, self.instant)


def _compare(left: date | datetime, op: Op, right: date | datetime) -> bool:
    if op == "<":
        return left < right
    if op == "<=":
        return left <= right
    if op == ">":
        return left > right
    if op == ">=":
        return left >= right
    return left == right


@attrs.frozen
class CardFilter:
    """Every filter of ``cue card list`` and ``list_tasks``; all given ones must pass.

    ``status`` and ``priority`` accept any of their values; ``tags`` any of the card's
    tags; ``assignee`` compares case-insensitively and ignores a leading ``@``.
    """

    status: tuple[str, ...] = ()
    priority: tuple[str, ...] = ()
    assignee: str | None = None
    tags: tuple[str, ...] = ()
    created: DateFilter | None = None
    updated: DateFilter | None = None

    @classmethod
    def build(
        cls,
        *,
        status: Iterable[str] | str | None = None,
        priority: Iterable[str] | str | None = None,
        assignee: str | None = None,
        tags: Iterable[str] | None = None,
        created: str | None = None,
        updated: str | None = None,
        now: datetime | None = None,
    ) -> CardFilter:
        """A filter from user input (date filters parsed, strings or lists accepted)."""
        from cuedeck_tasks.cards import PRIORITIES, STATUSES, check_choice

        def many(value: Iterable[str] | str | None) -> tuple[str, ...]:
            if value is None:
                return ()
            return (value,) if isinstance(value, str) else tuple(value)

        statuses = many(status)
        priorities = many(priority)
        for item in statuses:
            check_choice(item, STATUSES, field="status")
        for item in priorities:
            check_choice(item, PRIORITIES, field="priority")
        moment = now or datetime.now(UTC)
        return cls(
            status=statuses,
            priority=priorities,
            assignee=assignee,
            tags=tuple(tags or ()),
            created=DateFilter.parse(created, field="created", now=moment) if created else None,
            updated=DateFilter.parse(updated, field="updated", now=moment) if updated else None,
        )

    def accepts(self, card: Card) -> bool:
        """Whether ``card`` passes every filter."""
        if self.status and card.status not in self.status:
            return False
        if self.priority and card.priority not in self.priority:
            return False
        if self.assignee is not None and _person(card.assignee) != _person(self.assignee):
            return False
        if self.tags:
            wanted = {tag.casefold() for tag in self.tags}
            if not any(tag.casefold() in wanted for tag in card.tags):
                return False
        if self.created is not None and not self.created.accepts(card.created):
            return False
        return self.updated is None or self.updated.accepts(card.updated)


def _person(name: str | None) -> str:
    return (name or "").strip().removeprefix("@").casefold()
