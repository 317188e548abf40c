"""Editing the text of a card file without disturbing what the edit does not name.

:func:`edit_frontmatter` rewrites only the lines of the top-level keys it changes:
other keys, their order, comments, line endings and the body stay byte-for-byte. Every
edit is checked by parsing the result with the loader the index uses; when a
hand-written frontmatter is too unusual for line editing (anchors, duplicate keys,
complex keys), the frontmatter is re-rendered from its parsed values instead (comments
are lost then, values are not), and checked again.

Values are written on one line: plain when YAML reads them back as the same string,
double-quoted with escapes otherwise, so titles such as ``@x: "y" # z`` or ones with
newlines round-trip exactly.

yaml is imported by the functions that need it: listing cards from the card cache parses
and writes nothing, and should not pay for the import.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any, Final

import attrs

from cuedeck.errors import CueError, InvalidInput
from cuedeck.markdown import frontmatter
from cuedeck.markdown.blocks import scan_fast
from cuedeck.markdown.document import build_headings, heading_text
from cuedeck.markdown.frontmatter import PLAIN, STR_TAG, implicit_tag
from cuedeck.text import split_lines
from cuedeck_tasks.cards import FIELD_ORDER

if TYPE_CHECKING:
    from collections.abc import Mapping


class _Delete:
    """The value that removes a key (see :data:`DELETE`)."""

    def __repr__(self) -> str:
        return "DELETE"


#: Pass as a change's value to remove the key.
DELETE: Final = _Delete()

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


@functools.cache
def _unprintable() -> re.Pattern[str]:
    """What PyYAML and libyaml do not accept unescaped in a stream (compiled on first use:
    its ranges take milliseconds to compile); NEL and the Unicode line separators are line
    breaks in YAML 1.1, and a BOM is only allowed at the start."""
    return re.compile(
        "[^\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
    )


# A top-level key: double-quoted, single-quoted or plain (not starting with a YAML
# indicator), then ':' and a space or the end of the line.
_KEY = re.compile(
    r"""^(?:"(?P<dq>(?:[^"\\]|\\.)*)"|'(?P<sq>(?:[^']|'')*)'"""
    r"""|(?P<plain>[^\s#\-?:,\[\]{}&*!|>'"%@`][^:\r\n]*?))[ \t]*:(?:[ \t]|$)"""
)
_COMMENT_START = re.compile(r"[ \t]+#")


def dump_scalar(value: Any) -> str:
    """One YAML scalar on one line that reads back as ``value`` (str, int, bool, None)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    text = str(value)
    if (
        PLAIN.fullmatch(text)
        and not text.endswith(" ")
        and "  " not in text
        and implicit_tag(text) == STR_TAG
    ):
        return text
    return '"' + "".join(_escape(ch) for ch in text) + '"'


def _escape(ch: str) -> str:
    if ch in _ESCAPES:
        return _ESCAPES[ch]
    if _unprintable().match(ch):
        code = ord(ch)
        if code <= 0xFF:
            return f"\\x{code:02x}"
        return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
    return ch


def dump_value(value: Any) -> str:
    """A frontmatter value on one line: a scalar, or a flow list of scalars."""
    if isinstance(value, list | tuple):
        if all(item is None or isinstance(item, str | int | float) for item in value):
            return "[" + ", ".join(dump_scalar(item) for item in value) + "]"
    elif value is None or isinstance(value, str | int | float):
        return dump_scalar(value)
    import yaml

    dumped = yaml.safe_dump(
        value, default_flow_style=True, allow_unicode=True, width=2**31 - 1, sort_keys=False
    )
    return dumped.removesuffix("\n...\n").strip()


def render_frontmatter(data: Mapping[str, Any], newline: str = "\n") -> str:
    """A ``---`` block holding ``data`` in its order, one key per line."""
    body = "".join(f"{key}: {dump_value(value)}{newline}" for key, value in data.items())
    return f"---{newline}{body}---{newline}"


def keep_lines(text: str) -> list[str]:
    """Lines with their endings (``\\r\\n``, ``\\r`` or ``\\n``; nothing else splits)."""
    lines = re.findall(r"[^\r\n]*(?:\r\n|\r|\n)", text)
    rest = text[sum(len(line) for line in lines) :]
    if rest:
        lines.append(rest)
    return lines


def _content(line: str) -> str:
    return line.rstrip("\r\n")


@attrs.frozen
class Entry:
    """A top-level key and the lines (``start`` to ``end``, exclusive) of its value."""

    key: str
    start: int
    end: int


@attrs.frozen
class CardText:
    """A card's text split around its frontmatter."""

    bom: str
    lines: list[str]
    close: int  # index of the closing '---' line
    newline: str
    data: dict[str, Any]

    @classmethod
    def parse(cls, text: str, *, path: str) -> CardText:
        """Split ``text``; InvalidInput (naming the line) when it has no valid frontmatter."""
        bom = "\ufeff" if text.startswith("\ufeff") else ""
        lines = keep_lines(text[len(bom) :])
        data, _body_line, problems = frontmatter.load(split_lines(text[len(bom) :]), path)
        if problems:
            problem = problems[0]
            raise InvalidInput(
                problem.message,
                path=path,
                line=problem.line,
                help=problem.help,
                field="frontmatter",
            )
        if not lines or _content(lines[0]).rstrip() != "---":
            raise InvalidInput(
                "the card has no frontmatter (it must start with a '---' line)",
                path=path,
                line=1,
                field="frontmatter",
            )
        close = next(
            i for i in range(1, len(lines)) if _content(lines[i]).rstrip() in ("---", "...")
        )
        first = lines[0]
        newline = first[len(_content(first)) :] or "\n"
        return cls(bom=bom, lines=lines, close=close, newline=newline, data=data)

    def entries(self) -> list[Entry]:
        """Top-level keys in file order, each with the lines of its value."""
        import yaml

        starts: list[tuple[int, str]] = []
        for index in range(1, self.close):
            match = _KEY.match(_content(self.lines[index]))
            if match:
                if match.group("dq") is not None:
                    key = yaml.safe_load('"' + match.group("dq") + '"')
                elif match.group("sq") is not None:
                    key = match.group("sq").replace("''", "'")
                else:
                    key = match.group("plain").strip()
                starts.append((index, str(key)))
        entries = []
        for position, (start, key) in enumerate(starts):
            limit = starts[position + 1][0] if position + 1 < len(starts) else self.close
            end = start + 1
            for index in range(start + 1, limit):
                line = _content(self.lines[index])
                # Blank lines and unindented comments belong to what follows them.
                if line.strip() and not line.startswith("#"):
                    end = index + 1
            entries.append(Entry(key, start, end))
        return entries


def _trailing_comment(line: str) -> str:
    """The `` # comment`` after a one-line value, if the line has one."""
    import yaml

    for match in _COMMENT_START.finditer(line):
        head = line[: match.start()]
        try:
            if yaml.safe_load(head) == yaml.safe_load(line) and ":" in head:
                return line[match.start() :]
        except yaml.YAMLError:
            continue
    return ""


def edit_frontmatter(text: str, changes: Mapping[str, Any], *, path: str) -> str:
    """``text`` with the frontmatter keys in ``changes`` set (:data:`DELETE` removes one)."""
    card = CardText.parse(text, path=path)
    expected = dict(card.data)
    for key, value in changes.items():
        if value is DELETE:
            expected.pop(key, None)
        else:
            expected[key] = value
    edited = _edit_lines(card, changes)
    if _reads_as(edited, expected, path):
        return edited
    fallback = _rerender(card, expected)
    if _reads_as(fallback, expected, path):
        return fallback
    raise CueError(
        f"could not rewrite the frontmatter of {path} safely; nothing was written",
        path=path,
        help="simplify the YAML by hand (no anchors or complex keys) and retry",
    )


def _edit_lines(card: CardText, changes: Mapping[str, Any]) -> str:
    lines = list(card.lines)
    by_key = {entry.key: entry for entry in card.entries()}  # the last duplicate wins, as in YAML
    edits: list[tuple[int, int, int, list[str]]] = []  # start, end, order, new lines
    for order, (key, value) in enumerate(changes.items()):
        entry = by_key.get(key)
        if entry is None:
            if value is not DELETE:
                at = _insert_at(key, by_key, card.close)
                added = f"{dump_scalar(key)}: {dump_value(value)}{card.newline}"
                edits.append((at, at, order, [added]))
            continue
        if value is DELETE:
            edits.append((entry.start, entry.end, order, []))
            continue
        old = _content(lines[entry.start])
        ending = lines[entry.start][len(old) :] or card.newline
        comment = _trailing_comment(old) if entry.end == entry.start + 1 else ""
        match = _KEY.match(old)
        assert match is not None  # entries() found this line with the same pattern
        head = old[: match.end()].rstrip()
        edits.append(
            (entry.start, entry.end, order, [f"{head} {dump_value(value)}{comment}{ending}"])
        )
    # Bottom-up so earlier indexes stay valid. At one index, a replaced entry goes first
    # (an insertion there means "before that entry"), then insertions in reverse order.
    for start, end, _order, new_lines in sorted(
        edits, key=lambda e: (e[0], e[1] > e[0], e[2]), reverse=True
    ):
        lines[start:end] = new_lines
    return card.bom + "".join(lines)


def _insert_at(key: str, by_key: Mapping[str, Entry], close: int) -> int:
    if key in FIELD_ORDER:
        position = FIELD_ORDER.index(key)
        for before in reversed(FIELD_ORDER[:position]):
            if before in by_key:
                return by_key[before].end
        for after in FIELD_ORDER[position + 1 :]:
            if after in by_key:
                return by_key[after].start
    return close


def _rerender(card: CardText, expected: Mapping[str, Any]) -> str:
    ordered: dict[str, Any] = {key: expected[key] for key in card.data if key in expected}
    for key in FIELD_ORDER:
        if key in expected and key not in ordered:
            ordered = _insert_ordered(ordered, key, expected[key])
    for key, value in expected.items():
        ordered.setdefault(key, value)
    head = render_frontmatter(ordered, card.newline)
    return card.bom + head + "".join(card.lines[card.close + 1 :])


def _insert_ordered(data: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    position = FIELD_ORDER.index(key)
    previous = [k for k in FIELD_ORDER[:position] if k in data]
    if not previous:
        return {key: value, **data}
    result: dict[str, Any] = {}
    for existing, existing_value in data.items():
        result[existing] = existing_value
        if existing == previous[-1]:
            result[key] = value
    return result


def _reads_as(text: str, expected: Mapping[str, Any], path: str) -> bool:
    lines = split_lines(text.removeprefix("\ufeff"))
    data, _body_line, problems = frontmatter.load(lines, path)
    return not problems and data == _normalised(expected)


def _normalised(data: Mapping[str, Any]) -> dict[str, Any]:
    return {key: list(value) if isinstance(value, tuple) else value for key, value in data.items()}


# --- notes -------------------------------------------------------------------------------


def append_note(text: str, note: str, stamp: str, *, newline: str = "\n") -> str:
    """``text`` with ``- STAMP: note`` added at the end of its ``## Notes`` section.

    The section is created at the end of the file when there is none. Lines of a
    multi-line note are indented under the list item.
    """
    note_lines = split_lines(note) or [""]
    item = [f"- {stamp}: {note_lines[0]}".rstrip()] + [
        f"  {line}".rstrip() for line in note_lines[1:]
    ]
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    lines = keep_lines(text[len(bom) :])
    plain = [_content(line) for line in lines]
    _data, body_line, _problems = frontmatter.load(plain, "")
    block = scan_fast(plain, body_line)
    headings = build_headings(block.headings, len(plain))
    section = next((h for h in headings if h.level == 2 and h.text.lower() == "notes"), None)
    if section is None:
        while lines and not _content(lines[-1]).strip():
            lines.pop()
        if lines and not lines[-1].endswith(("\n", "\r")):
            lines[-1] += newline
        added = [*([newline] if lines else []), f"## Notes{newline}", newline]
        lines.extend(added + [line + newline for line in item])
        return bom + "".join(lines)
    last = section.end_line  # 1-based, inclusive
    while last > section.line and not plain[last - 1].strip():
        last -= 1
    insert = [line + newline for line in item]
    if last == section.line:
        insert.insert(0, newline)  # a blank line between the heading and the first note
    if last <= len(lines) and not lines[last - 1].endswith(("\n", "\r")):
        lines[last - 1] += newline
    lines[last:last] = insert
    return bom + "".join(lines)


def first_title(lines: list[str]) -> str | None:
    """The text of the first level-1 heading after the frontmatter: the title of a card
    whose frontmatter has none (or could not be read)."""
    bounds = frontmatter.bounds(lines)
    for line in lines[bounds[1] + 1 if bounds else 0 :]:
        if line.startswith("# "):
            return heading_text(line[2:].strip().rstrip("#").strip())[0] or None
    return None
