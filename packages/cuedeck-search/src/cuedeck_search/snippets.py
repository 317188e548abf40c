"""The snippet of a search result: the line of its best section that best shows the query."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from cuedeck_search.sections import Section

SNIPPET_CHARS = 160
SNIPPET_LINES = 40  # lines of the best section considered for its snippet

_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_CLEAN = re.compile(r"`+|\*\*|^\s*(?:#+|>|[-*+]|\d+[.)])\s+|\{\s*#[^}]*\}|<[^>]+>")


def snippet(section: Section, query_terms: Sequence[str]) -> str:
    """The prose line of ``section`` holding most query stems, shortened, on one line;
    markdown markup is dropped from a doc's line, a code section's is shown as written
    (``<``, ``**`` and backticks are code there)."""
    lines = [line for line in section.prose.splitlines()[:SNIPPET_LINES] if line.strip()]
    if not lines:
        return section.context[:SNIPPET_CHARS]
    # A stem is (nearly always) a prefix of its words: a substring test is enough here.
    best = max(lines, key=lambda line: sum(t in line.lower() for t in query_terms))
    if section.kind is None:
        best = _CLEAN.sub("", _LINK.sub(r"\1", best))
    text = " ".join(best.split())
    if len(text) > SNIPPET_CHARS:
        text = text[: SNIPPET_CHARS - 1].rsplit(" ", 1)[0] + "…"
    return text
