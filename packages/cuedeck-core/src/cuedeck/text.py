"""Text, one way each: file bytes decoded and cut into lines, counts worded for people
(``1 segment``, ``2 segments``, ``0 cards``), short labels checked (titles, tags,
assignees, names).

Labels appear in tables, frontmatter, filenames and MCP replies, so characters that hide
or reorder what a person sees are refused: control characters (a NUL, a newline), bidi
embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069, the "Trojan Source"
characters) and lone surrogates, which are not Unicode text at all. A light module (the
CLI's plugin modules import it while ``cue --help`` runs).
"""

from __future__ import annotations

import re

from cuedeck.errors import InvalidInput

_HIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def decode(data: bytes) -> tuple[str, bool]:
    """Text of ``data`` (UTF-8, BOM dropped) and whether bytes had to be replaced."""
    try:
        return data.decode("utf-8-sig"), False
    except UnicodeDecodeError:
        return data.decode("utf-8-sig", errors="replace"), True


def split_lines(text: str) -> list[str]:
    """Lines without their endings; ``\\r\\n``, ``\\r`` and ``\\n`` all end a line."""
    if not text:
        return []
    if "\r" in text:  # rare: the same cuts as splitting on \r\n, \r and \n, in C
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and ``noun``, the noun plural unless the count is exactly one
    (``plural`` for nouns that do not take an ``s``)."""
    if count == 1:
        return f"{count:,} {noun}"
    return f"{count:,} {plural or noun + 's'}"


def check_label(value: str, field: str) -> str:
    """``value`` unchanged, or InvalidInput (1004) naming ``field`` and the character."""
    found = _HIDDEN.search(value)
    if found is not None:
        raise InvalidInput(
            f"{field} contains U+{ord(found.group()):04X}, which is not allowed "
            "(control characters, bidi overrides and lone surrogates hide or reorder text)",
            field=field,
        )
    return value


def duration(seconds: float) -> str:
    """``seconds`` as a person reads it: ``40 s``, ``12 min``, ``2 h 5 min``."""
    if seconds < 90:
        return f"{max(round(seconds), 0)} s"
    minutes = round(seconds / 60)
    if minutes < 120:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60} min"
