"""Frontmatter, read in one place: bounds, the YAML loader, the fast reader and problems."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuedeck.markdown import frontmatter
from cuedeck.text import split_lines
from tests.conftest import REPO


def test_bounds_and_the_body_start() -> None:
    assert frontmatter.bounds(["---", "a: 1", "---", "body"]) == (0, 2)
    assert frontmatter.bounds(["---", "a: 1", "...", "body"]) == (0, 2)
    assert frontmatter.bounds(["---", "a: 1"]) is None  # never closed
    assert frontmatter.bounds(["# title"]) is None
    assert frontmatter.body_start(["---", "a: 1", "---", "body"]) == 3
    assert frontmatter.body_start(["body"]) == 0


def test_timestamps_stay_the_strings_they_were_written_as() -> None:
    lines = ["---", "created: 2026-01-02T03:04:05Z", "day: 2026-01-02", "n: 3", "---"]
    data, body, problems = frontmatter.load(lines, "x.md")
    assert data == {"created": "2026-01-02T03:04:05Z", "day": "2026-01-02", "n": 3}
    assert (body, problems) == (6, [])


@pytest.mark.parametrize(
    ("lines", "line", "message"),
    [
        (["---", "a: 1"], 1, "frontmatter starts with '---' but is never closed"),
        (["---", "a: 1", "tags: [x, y", "b: 2", "---"], 3, "frontmatter is not valid YAML"),
        (["---", "- a", "- b", "---"], 2, "frontmatter must be a mapping, not a list"),
    ],
)
def test_a_problem_names_its_line(lines: list[str], line: int, message: str) -> None:
    data, _body, problems = frontmatter.load(lines, "x.md")
    assert data == {}
    [problem] = problems
    assert (problem.code, problem.path, problem.line) == (1004, "x.md", line)
    assert problem.message.startswith(message)


def test_read_takes_the_fast_way_when_it_can_and_yaml_otherwise() -> None:
    simple = ["---", "title: 'Fix it'", "tags: [a, b]", "---"]
    assert frontmatter.quick(simple) == {"title": "Fix it", "tags": ["a", "b"]}
    assert frontmatter.read(simple, "x.md") == ({"title": "Fix it", "tags": ["a", "b"]}, [])
    hand_written = ["---", "yes: 1", "nested: {a: 1}", "---"]
    assert frontmatter.quick(hand_written) is None  # 'yes:' is a bool key to YAML
    assert frontmatter.read(hand_written, "x.md") == ({"True": 1, "nested": {"a": 1}}, [])


def test_the_fast_reader_reads_the_demo_cards_as_yaml_does() -> None:
    cards = sorted((REPO / "examples" / "demo" / ".cuedeck" / "cards").glob("*.md"))
    answered = []
    for path in cards:
        lines = split_lines(path.read_text(encoding="utf-8"))
        quick = frontmatter.quick(lines)
        if quick is not None:  # a block list (refs: then - items) is YAML's to read
            assert quick == frontmatter.load(lines, str(path))[0]
            answered.append(path.stem)
    assert answered == ["m7p2r5", "w4n8t1"]


SCALAR_TEXT = st.one_of(
    st.text(st.characters(exclude_categories=["Cs"]), max_size=30),
    st.from_regex(r"[A-Za-z0-9 ./@'#:-]{1,15}", fullmatch=True),
)
RAW_VALUES = st.one_of(
    SCALAR_TEXT,
    SCALAR_TEXT.map(lambda s: f"'{s}'"),
    SCALAR_TEXT.map(lambda s: f'"{s}"'),
    st.lists(SCALAR_TEXT, max_size=4).map(lambda items: "[" + ", ".join(items) + "]"),
    st.sampled_from(["yes", "null", "~", "12", "1.5", "2024-01-01", "a # b", "[a, [b]]", ""]),
)
KEYS = st.one_of(st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,8}", fullmatch=True), st.just("on"))


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(KEYS, RAW_VALUES), max_size=8))
def test_the_fast_reader_agrees_with_yaml_whenever_it_answers(
    pairs: list[tuple[str, str]],
) -> None:
    lines = ["---", *(f"{key}: {value}" for key, value in pairs), "---", "# body"]
    quick = frontmatter.quick(lines)
    if quick is None:
        return
    data, _body, problems = frontmatter.load(lines, "x")
    assert not problems
    assert quick == data
