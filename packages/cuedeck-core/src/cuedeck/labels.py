"""Short texts that must read the same to every reader: titles, tags, assignees, names.

They appear in tables, frontmatter, filenames and MCP replies, so characters that hide
or reorder what a person sees are refused: control characters (a NUL, a newline), bidi
embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069, the "Trojan Source"
characters) and lone surrogates, which are not Unicode text at all.
"""

from __future__ import annotations

import re

from cuedeck.errors import InvalidInput

_HIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


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
