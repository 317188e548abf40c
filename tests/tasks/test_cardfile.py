"""The card-file editor: YAML-hostile values, byte-for-byte preservation, notes."""

from __future__ import annotations

import difflib

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuedeck.errors import InvalidInput
from cuedeck.markdown import frontmatter
from cuedeck.markdown.frontmatter import load as load_frontmatter
from cuedeck.text import split_lines
from cuedeck_tasks.cardfile import (
    DELETE,
    append_note,
    dump_scalar,
    dump_value,
    edit_frontmatter,
    render_frontmatter,
)

HOSTILE = [
    "plain title",
    "Fix: the login",
    "@mention at the start",
    "#not a comment",
    "ends with a colon:",
    "a # hash in the middle",
    "'single' and \"double\" quotes",
    "line one\nline two",
    "trailing newline\n",
    "\ttab and\r\ncrlf",
    "  leading and trailing spaces  ",
    "yes",
    "null",
    "~",
    "123",
    "1.5e3",
    "0x1f",
    "2024-01-01",
    "2024-01-01T10:00:00Z",
    ".inf",
    "<<",
    "=",
    "- dash",
    "? question",
    "[flow, list]",
    "{flow: map}",
    "* star & amp ! bang | pipe > gt % percent `tick`",
    "backslash \\ and \\n literal",
    "ünïcödé 日本語 emoji 🚀",
    "\u2028 line separator \x85 nel \ufeff bom",
    "\x00\x07\x1b control",
    "x" * 5000,
    "",
]

CARD = """\
---
id: abc123
title: Original title
status: todo   # still waiting for the API
# a comment line between keys
priority: medium
custom_key: keep me
tags: [auth, api]
depends_on: []
nested:
  key: value
  list:
    - one
    - two
created: '2026-11-02T09:15:00Z'
updated: '2026-11-02T09:15:00Z'
---
# Original title

Body with `code`, a [link](../docs/api.md) and trailing spaces"""
CARD += "   \n"


def frontmatter_of(text: str) -> dict[str, object]:
    data, _body, problems = load_frontmatter(split_lines(text.removeprefix("\ufeff")), "x")
    assert not problems
    return data


def changed_lines(before: str, after: str) -> list[str]:
    return [
        line
        for line in difflib.ndiff(before.splitlines(True), after.splitlines(True))
        if line[:1] in "+-"
    ]


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_scalars_read_back_exactly(value: str) -> None:
    line = f"title: {dump_scalar(value)}"
    assert "\n" not in line
    assert frontmatter_of(f"---\n{line}\n---\n") == {"title": value}
    # Standard YAML loaders (which turn timestamps into datetimes) agree too.
    assert yaml.safe_load(line) == {"title": value}


def test_plain_words_stay_unquoted() -> None:
    assert dump_scalar("todo") == "todo"
    assert dump_scalar("Add refresh tokens") == "Add refresh tokens"
    assert dump_scalar("café") == "café"
    assert dump_value(["auth", "api v2"]) == "[auth, api v2]"
    assert dump_value([]) == "[]"
    assert dump_scalar("2024-01-01").startswith('"')
    assert dump_scalar("yes") == '"yes"'


def test_an_edit_changes_only_the_named_lines() -> None:
    edited = edit_frontmatter(CARD, {"priority": "high"}, path="x")
    assert changed_lines(CARD, edited) == ["- priority: medium\n", "+ priority: high\n"]


def test_an_edit_keeps_a_trailing_comment() -> None:
    edited = edit_frontmatter(CARD, {"status": "done"}, path="x")
    assert changed_lines(CARD, edited) == [
        "- status: todo   # still waiting for the API\n",
        "+ status: done   # still waiting for the API\n",
    ]


def test_multiline_values_are_replaced_whole_and_new_keys_go_in_field_order() -> None:
    card = CARD.replace("tags: [auth, api]\n", "tags:\n  - auth\n  - api\n")
    edited = edit_frontmatter(card, {"tags": ["x"], "assignee": "dana"}, path="x")
    data = frontmatter_of(edited)
    assert data["tags"] == ["x"] and data["assignee"] == "dana"
    keys = list(data)
    assert keys.index("priority") < keys.index("assignee") < keys.index("custom_key")
    assert "nested:\n  key: value\n  list:\n    - one\n    - two\n" in edited
    assert edited.endswith(card[card.index("---\n# Original") :])


def test_delete_removes_the_key_and_only_it() -> None:
    edited = edit_frontmatter(CARD, {"custom_key": DELETE, "missing": DELETE}, path="x")
    assert changed_lines(CARD, edited) == ["- custom_key: keep me\n"]


def test_crlf_and_bom_are_preserved() -> None:
    card = "\ufeff" + CARD.replace("\n", "\r\n")
    edited = edit_frontmatter(card, {"status": "active", "assignee": "lee"}, path="x")
    assert edited.startswith("\ufeff---\r\n")
    assert "\n" not in edited.replace("\r\n", "")
    assert frontmatter_of(edited)["assignee"] == "lee"
    assert edited.endswith(card[card.index("---\r\n# Original") :])


def test_unusual_yaml_falls_back_to_a_rerender_that_keeps_values() -> None:
    # An alias forces the fallback: its anchor's line is not the edited key's.
    card = "---\nbase: &b {a: 1}\ncopy: *b\ntitle: t\n---\nbody\n"
    edited = edit_frontmatter(card, {"base": "plain"}, path="x")
    assert frontmatter_of(edited) == {"base": "plain", "copy": {"a": 1}, "title": "t"}
    assert edited.endswith("---\nbody\n")


def test_duplicate_keys_edit_the_last_one_as_yaml_reads_it() -> None:
    card = "---\nstatus: todo\ntitle: t\nstatus: active\n---\n"
    edited = edit_frontmatter(card, {"status": "done"}, path="x")
    assert frontmatter_of(edited)["status"] == "done"


def test_broken_frontmatter_is_invalid_input_naming_the_line() -> None:
    with pytest.raises(InvalidInput) as caught:
        edit_frontmatter("---\ntitle: [unclosed\n---\n", {"status": "done"}, path="c.md")
    assert caught.value.path == "c.md"
    assert caught.value.line is not None
    assert caught.value.data["field"] == "frontmatter"
    with pytest.raises(InvalidInput):
        edit_frontmatter("# no frontmatter\n", {"status": "done"}, path="c.md")


def test_render_frontmatter_round_trips() -> None:
    data = {"id": "abc123", "title": "a: b", "tags": ["x", "y z"], "n": 3, "flag": True}
    assert frontmatter_of(render_frontmatter(data) + "body\n") == data


@pytest.mark.slow
@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    title=st.text(st.characters(exclude_categories=["Cs"]), max_size=300),
    tags=st.lists(st.text(st.characters(exclude_categories=["Cs"]), min_size=1), max_size=4),
)
def test_any_text_round_trips_through_an_edit(title: str, tags: list[str]) -> None:
    edited = edit_frontmatter(CARD, {"title": title, "tags": tags}, path="x")
    data = frontmatter_of(edited)
    assert data["title"] == title
    assert data["tags"] == tags
    assert data["custom_key"] == "keep me"
    assert data["nested"] == {"key": "value", "list": ["one", "two"]}
    assert edited.endswith(CARD[CARD.index("---\n# Original") :])


def test_a_note_starts_a_notes_section_at_the_end() -> None:
    noted = append_note(CARD, "first thought", "2026-01-02T03:04:05Z")
    assert noted == CARD + "\n## Notes\n\n- 2026-01-02T03:04:05Z: first thought\n"


def test_notes_append_inside_an_existing_section_before_the_next_one() -> None:
    card = CARD + "\n## Notes\n\n- T0: old\n\n## Later\n\ntext\n"
    noted = append_note(card, "two\nlines", "T1")
    assert noted == CARD + "\n## Notes\n\n- T0: old\n- T1: two\n  lines\n\n## Later\n\ntext\n"


def test_notes_in_code_blocks_are_not_the_notes_section() -> None:
    card = CARD + "\n```\n## Notes\n```\n"
    noted = append_note(card, "n", "T")
    assert noted.endswith("```\n## Notes\n```\n\n## Notes\n\n- T: n\n")


def test_a_note_under_an_empty_heading_and_without_final_newline() -> None:
    assert (
        append_note("---\na: 1\n---\n## Notes", "n", "T") == "---\na: 1\n---\n## Notes\n\n- T: n\n"
    )
    assert (
        append_note("---\na: 1\n---\ntext", "n", "T")
        == "---\na: 1\n---\ntext\n\n## Notes\n\n- T: n\n"
    )
    crlf = append_note("---\r\na: 1\r\n---\r\ntext\r\n", "n", "T", newline="\r\n")
    assert crlf == "---\r\na: 1\r\n---\r\ntext\r\n\r\n## Notes\r\n\r\n- T: n\r\n"


# --- the fast reader (its agreement with YAML: tests/core/test_frontmatter.py) ---------------


@settings(max_examples=100, deadline=None)
@given(
    title=st.from_regex(r"[A-Za-z][A-Za-z0-9 ./+@-]{0,40}[A-Za-z0-9]", fullmatch=True),
    tags=st.lists(st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True), max_size=3),
)
def test_the_fast_reader_reads_what_the_store_writes_for_ordinary_cards(
    title: str, tags: list[str]
) -> None:
    fields = {
        "id": "abc123",
        "title": title,
        "status": "todo",
        "priority": "medium",
        "tags": tags,
        "depends_on": ["def456"],
        "created": "2026-01-02T03:04:05Z",
    }
    text = render_frontmatter(fields) + "# body\n"
    quick = frontmatter.quick(split_lines(text))
    assert quick is not None or "  " in title
    if quick is not None:
        assert quick == frontmatter_of(text) == fields
