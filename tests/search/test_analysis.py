"""Terms and the Porter stemmer."""

from __future__ import annotations

import pytest

from cuedeck_search.analysis import stem, terms


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("caresses", "caress"),
        ("ponies", "poni"),
        ("cats", "cat"),
        ("agreed", "agre"),
        ("hopping", "hop"),
        ("motoring", "motor"),
        ("relational", "relat"),
        ("conditional", "condit"),
        ("hopefulness", "hope"),
        ("adjustment", "adjust"),
        ("adoption", "adopt"),
        ("controll", "control"),
        ("parameters", "paramet"),
        ("parameter", "paramet"),
        ("dependencies", "depend"),
        ("dependency", "depend"),
    ],
)
def test_porter_stems(word: str, expected: str) -> None:
    assert stem(word) == expected


def test_identifiers_give_the_whole_and_the_parts() -> None:
    assert terms("HTTPException") == ["httpexception", "http", "except"]
    assert terms("jsonable_encoder") == ["jsonable_encoder", "jsonabl", "encod"]


def test_stop_words_are_dropped_and_case_folded() -> None:
    assert terms("How do I Declare the Query Parameters?") == ["declar", "queri", "paramet"]
