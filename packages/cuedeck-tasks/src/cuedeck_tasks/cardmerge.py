"""Merging two versions of a card with their common ancestor: git's merge driver for cards.

A card is YAML frontmatter, a body and usually a ``## Notes`` section that only grows.
Merged line by line, two branches that each set another field, or each append a note, meet
on neighbouring lines and conflict. Merged as a card:

- **Fields** merge one by one: a field changed on one side takes that side's value; lists
  (``tags``, ``depends_on``, ``refs``) merge item by item (added or removed on either
  side); ``updated`` takes the later time. Only a field set to two different values is a
  conflict.
- **Notes** appended on both sides are all kept, in time order (each starts with its
  timestamp).
- **The rest of the body** merges as text, three ways, hunk by hunk.

A conflict is written as git writes one, between ``<<<<<<< ours``, ``=======`` and
``>>>>>>> theirs`` lines (a field's lines inside the frontmatter): readable in any editor,
reported by ``cue doctor`` and shown as broken by ``cue card list``
(:func:`conflict_lines`). Ours' frontmatter text is the starting point, so its comments and
key order are kept.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from typing import TYPE_CHECKING, Any

import attrs

from cuedeck.markdown import frontmatter
from cuedeck.text import split_lines
from cuedeck_tasks.cardfile import (
    DELETE,
    CardText,
    dump_scalar,
    dump_value,
    edit_frontmatter,
    keep_lines,
)

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

OURS, BASE, THEIRS = "<<<<<<< ours", "||||||| base", ">>>>>>> theirs"
MIDDLE = "======="
_START = re.compile(r"^<{7}(?: |$)")
_END = re.compile(r"^>{7}(?: |$)")
_NOTES = re.compile(r"^##[ \t]+notes[ \t]*#*[ \t]*$", re.IGNORECASE)
_NOTE_ITEM = re.compile(r"^- ")
_UPDATED = "updated"
#: How a card with conflict markers is reported (``cue card list``, ``show``).
CONFLICT_PROBLEM = (
    "merge conflict markers (<<<<<<< ... >>>>>>>): resolve the conflict, then remove the markers"
)
_MISSING: Any = object()


def conflict_lines(lines: Sequence[str]) -> tuple[int, ...]:
    """The 1-based lines where a complete conflict (``<<<<<<<``, ``=======``,
    ``>>>>>>>`` in that order) starts; a lone ``=======`` (a setext heading) is none."""
    found: list[int] = []
    start: int | None = None
    middle = False
    for number, line in enumerate(lines, 1):
        if _START.match(line):
            start, middle = number, False
        elif start is not None and line.rstrip() == MIDDLE:
            middle = True
        elif start is not None and middle and _END.match(line):
            found.append(start)
            start = None
    return tuple(found)


@attrs.frozen
class Merged:
    """The merged text and how many conflicts it holds."""

    text: str
    conflicts: int


def merge_card(base: str, ours: str, theirs: str, *, path: str = "card") -> Merged:
    """Three-way merge of the texts of one card (see the module docstring)."""
    sides = [_split(text, path) for text in (base, ours, theirs)]
    if any(side is None for side in sides):  # a frontmatter YAML cannot read: text merge
        return _text_merge(base, ours, theirs)
    old, mine, yours = (side for side in sides if side is not None)
    head, field_conflicts = _merge_frontmatter(old, mine, yours, path)
    body, body_conflicts = _merge_body(old.body, mine.body, yours.body)
    return Merged(head + body, field_conflicts + body_conflicts)


@attrs.frozen
class _Card:
    """A card's text split: its frontmatter text and values, and its body text."""

    head: str
    values: dict[str, Any]
    body: str
    newline: str


def _split(text: str, path: str) -> _Card | None:
    if not text.strip():
        return _Card("", {}, "", "\n")  # no ancestor (a card added on both sides)
    lines = keep_lines(text.removeprefix("\ufeff"))
    values, body_line, problems = frontmatter.load(split_lines(text.removeprefix("\ufeff")), path)
    if problems or not lines or lines[0].rstrip() != "---" or body_line <= 1:
        return None
    first = lines[0]
    newline = first[len(first.rstrip("\r\n")) :] or "\n"
    start = body_line - 1
    return _Card(
        text[: len(text) - len("".join(lines[start:]))],
        dict(values),
        "".join(lines[start:]),
        newline,
    )


# -- fields ---------------------------------------------------------------------------------


def _merge_frontmatter(old: _Card, mine: _Card, yours: _Card, path: str) -> tuple[str, int]:
    keys = list(dict.fromkeys([*mine.values, *yours.values, *old.values]))
    changes: dict[str, Any] = {}
    clashes: dict[str, Any] = {}
    for key in keys:
        base, a, b = (side.values.get(key, _MISSING) for side in (old, mine, yours))
        value = _merge_value(key, base, a, b)
        if value is _CLASH:
            clashes[key] = b
        elif value is _MISSING:
            if a is not _MISSING:
                changes[key] = DELETE
        elif a is _MISSING or value != a:
            changes[key] = value
    head = mine.head if mine.head else yours.head
    if changes and mine.head:
        head = edit_frontmatter(head, changes, path=path)
    if clashes:
        head = _write_clashes(head, clashes, mine.newline)
    return head, len(clashes)


_CLASH: Any = object()


def _merge_value(key: str, base: Any, a: Any, b: Any) -> Any:
    if a == b:
        return a
    if key == _UPDATED and isinstance(a, str) and isinstance(b, str):
        return max(a, b)  # ISO 8601 UTC times order as text
    if _is_list(a) and _is_list(b) and (base is _MISSING or _is_list(base)):
        return _merge_list([] if base is _MISSING else base, a, b)
    if a == base:
        return b
    if b == base:
        return a
    return _CLASH


def _is_list(value: Any) -> bool:
    return isinstance(value, list)


def _merge_list(base: list[Any], a: list[Any], b: list[Any]) -> list[Any]:
    """Ours, less what theirs removed, plus what theirs added (in their order)."""
    merged = [item for item in a if item in b or item not in base]
    merged += [item for item in b if item not in base and item not in merged]
    return merged


def _write_clashes(head: str, clashes: dict[str, Any], newline: str) -> str:
    """``head`` with each clashing key's lines (ours) between conflict markers, theirs'
    value after ``=======``."""
    card = CardText.parse(head, path="")
    entries = {entry.key: entry for entry in card.entries()}
    lines = list(card.lines)
    for key in sorted(clashes, key=lambda k: entries[k].start if k in entries else 0, reverse=True):
        value = clashes[key]
        theirs = [] if value is _MISSING else [f"{dump_scalar(key)}: {dump_value(value)}{newline}"]
        entry = entries.get(key)
        start, end = (entry.start, entry.end) if entry else (card.close, card.close)
        block = [f"{OURS}{newline}", *lines[start:end], f"{MIDDLE}{newline}", *theirs]
        block.append(f"{THEIRS}{newline}")
        lines[start:end] = block
    return card.bom + "".join(keep_lines("".join(lines)))


# -- body -----------------------------------------------------------------------------------


def _merge_body(base: str, ours: str, theirs: str) -> tuple[str, int]:
    parts = [_notes(text) for text in (base, ours, theirs)]
    old, mine, yours = parts
    if mine is not None and yours is not None:
        items = _union_notes(old[1] if old is not None else [], mine[1], yours[1])
        if items is not None:
            before, before_conflicts = _merge_lines(
                old[0] if old is not None else base, mine[0], yours[0]
            )
            after, after_conflicts = _merge_lines(
                old[2] if old is not None else "", mine[2], yours[2]
            )
            notes = mine[3] + "".join(items)
            return before + notes + after, before_conflicts + after_conflicts
    return _merge_lines(base, ours, theirs)


def _notes(body: str) -> tuple[str, list[str], str, str] | None:
    """``body`` as (text before the notes, the note items, text after, the section's
    heading and blank lines), or None when it has no notes section of list items."""
    lines = keep_lines(body)
    start = next((n for n, line in enumerate(lines) if _NOTES.match(line.rstrip("\r\n"))), None)
    if start is None:
        return None
    end = next(
        (n for n in range(start + 1, len(lines)) if re.match(r"^#{1,2} ", lines[n])), len(lines)
    )
    lead = start + 1
    while lead < end and not lines[lead].strip():
        lead += 1
    items: list[str] = []
    for line in lines[lead:end]:
        if _NOTE_ITEM.match(line):
            items.append(line)
        elif items and (line.startswith((" ", "\t")) or not line.strip()):
            items[-1] += line  # a note's next line, or a blank line after it
        else:
            return None  # free text in the section: merged as text
    return (
        "".join(lines[:start]),
        items,
        "".join(lines[end:]),
        "".join(lines[start:lead]),
    )


def _union_notes(base: list[str], ours: list[str], theirs: list[str]) -> list[str] | None:
    """Base's notes then every note either side appended, by time; None unless both sides
    only appended (an edited or removed note is merged as text)."""
    norm = [_note_key(item) for item in base]
    if [_note_key(i) for i in ours[: len(base)]] != norm:
        return None
    if [_note_key(i) for i in theirs[: len(base)]] != norm:
        return None
    added: dict[str, str] = {}
    for item in [*ours[len(base) :], *theirs[len(base) :]]:
        added.setdefault(_note_key(item), item)
    fresh = sorted(added.values(), key=lambda item: item[2:22])  # "- <timestamp>: ..."
    return [
        item if item.endswith(("\n", "\r")) else item + "\n"
        for item in [*ours[: len(base)], *fresh]
    ]


def _note_key(item: str) -> str:
    return item.rstrip()


def _text_merge(base: str, ours: str, theirs: str) -> Merged:
    text, conflicts = _merge_lines(base, ours, theirs)
    return Merged(text, conflicts)


def _merge_lines(base: str, ours: str, theirs: str) -> tuple[str, int]:
    """A three-way merge of texts by lines; clashing hunks between conflict markers."""
    b, a, t = keep_lines(base), keep_lines(ours), keep_lines(theirs)
    out: list[str] = []
    conflicts = 0
    for kind, lines in _merge3(b, a, t):
        if kind == "clash":
            mine, theirs_lines = lines
            conflicts += 1
            out.append(f"{OURS}\n")
            out.extend(_ended(mine))
            out.append(f"{MIDDLE}\n")
            out.extend(_ended(theirs_lines))
            out.append(f"{THEIRS}\n")
        else:
            out.extend(lines[0])
    return "".join(out), conflicts


def _ended(lines: list[str]) -> list[str]:
    return (
        [*lines[:-1], lines[-1] if lines[-1].endswith(("\n", "\r")) else lines[-1] + "\n"]
        if lines
        else []
    )


def _merge3(
    base: list[str], ours: list[str], theirs: list[str]
) -> Iterator[tuple[str, tuple[list[str], ...]]]:
    """Hunks of the merge: ``("same", (lines,))`` or ``("clash", (ours, theirs))``.

    Regions where base, ours and theirs all agree anchor the merge; between two anchors a
    side that kept base's lines takes the other side's, and two different changes clash.
    """
    start_base = start_ours = start_theirs = 0
    for base_at, base_end, ours_at, ours_end, theirs_at, theirs_end in _anchors(base, ours, theirs):
        old = base[start_base:base_at]
        mine = ours[start_ours:ours_at]
        yours = theirs[start_theirs:theirs_at]
        if mine == yours:
            if mine:
                yield "same", (mine,)
        elif mine == old:
            yield "same", (yours,)
        elif yours == old:
            yield "same", (mine,)
        else:
            yield "clash", (mine, yours)
        if base_end > base_at:
            yield "same", (base[base_at:base_end],)
        start_base, start_ours, start_theirs = base_end, ours_end, theirs_end


def _anchors(
    base: list[str], ours: list[str], theirs: list[str]
) -> list[tuple[int, int, int, int, int, int]]:
    """Runs of base lines unchanged on both sides, with where they are on each side,
    ending with an empty run at the end of all three."""
    mine = SequenceMatcher(None, base, ours, autojunk=False).get_matching_blocks()
    yours = SequenceMatcher(None, base, theirs, autojunk=False).get_matching_blocks()
    found = []
    i = j = 0
    while i < len(mine) and j < len(yours):
        a_base, a_side, a_size = mine[i]
        b_base, b_side, b_size = yours[j]
        low, high = max(a_base, b_base), min(a_base + a_size, b_base + b_size)
        if low < high:
            found.append(
                (low, high, a_side + low - a_base, a_side + high - a_base,
                 b_side + low - b_base, b_side + high - b_base)
            )  # fmt: skip
        if a_base + a_size < b_base + b_size:
            i += 1
        else:
            j += 1
    found.append((len(base), len(base), len(ours), len(ours), len(theirs), len(theirs)))
    return found
