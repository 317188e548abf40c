"""How CueDeck words counts for people: ``1 segment``, ``2 segments``, ``0 cards``.

The one home of plurals, so no message says "1 segments" (a dependency-free module:
the CLI's plugin modules import it while ``cue --help`` runs).
"""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and ``noun``, the noun plural unless the count is exactly one
    (``plural`` for nouns that do not take an ``s``)."""
    if count == 1:
        return f"{count:,} {noun}"
    return f"{count:,} {plural or noun + 's'}"
