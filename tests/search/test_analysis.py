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


def test_code_identifiers_split_into_their_words_and_stay_whole() -> None:
    assert terms("handle_request") == ["handle_request", "handl", "request"]
    assert terms("HTTPTransport") == ["httptransport", "http", "transport"]
    assert terms("parseURL") == ["parseurl", "pars", "url"]
    assert terms("getHTTPResponseCode") == [
        "gethttpresponsecode", "get", "http", "respons", "code",
    ]  # fmt: skip
    # A qualified name is kept whole; a longer chain is its identifiers.
    assert terms("Client.send") == ["client.send", "client", "send"]
    assert terms("self.transport.request(method)") == ["self", "transport", "request", "method"]
    # A query in plain words meets the identifier's parts.
    assert set(terms("parse the URL")) <= set(terms("def parseURL(raw):"))


def test_words_of_other_scripts_are_kept_whole() -> None:
    # The stemmer's suffixes all end in a-z: a word ending in anything else is its stem,
    # and a word that starts outside ASCII is one part, as the identifier rule splits it.
    assert stem("запросы") == "запросы"
    assert terms("Запросы 请求体 FastAPI的依赖 Größe") == [
        "запросы", "请求体", "fastapi的依赖", "fast", "api", "的依赖", "größe",
    ]  # fmt: skip
    assert terms("Abhängigkeiten naïve") == [stem("abhängigkeiten"), stem("naïve")]


def test_dots_hyphens_and_underscores_after_a_word_are_not_part_of_it() -> None:
    assert terms("Ends. x_ a- client.send. Client.send_") == [
        "end", "x", "client.send", "client", "send", "client.send", "client", "send",
    ]  # fmt: skip
