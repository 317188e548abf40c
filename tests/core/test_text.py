"""Counts as people read them: one home for plurals."""

from __future__ import annotations

from cuedeck.text import counted


def test_counted_is_singular_for_exactly_one() -> None:
    assert counted(1, "segment") == "1 segment"
    assert [counted(n, "card") for n in (0, 2)] == ["0 cards", "2 cards"]
    assert counted(1200, "file") == "1,200 files"
    assert counted(2, "index", "indexes") == "2 indexes"
