"""A reply as it is sent: the text a model reads, and whole replies fitted to budgets."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from cuedeck.errors import TokenLimitExceeded
from cuedeck.serving.reply import compact_json, fit_reply, reply_size, reply_text, structured
from cuedeck.workspace import open_workspace

if TYPE_CHECKING:
    from tests.conftest import MakeWorkspace

CODE = 'def greet(name):\n    """Say "hi"."""\n    return f"hi {name}\\n"\n'


def test_text_and_code_come_as_they_are_after_the_short_fields() -> None:
    page = {"path": "src/a.py", "content": CODE, "anchor": None, "lines": {"start": 1, "end": 3}}
    text = reply_text(page)
    assert text.splitlines()[:3] == ["path: src/a.py", 'lines: {"start":1,"end":3}', "content:"]
    assert CODE.rstrip("\n") in text  # no escapes: the code is as it is in the file
    assert "anchor" not in text  # a null says nothing to a model
    assert text.endswith("\n```")
    assert structured(page) is page and json.loads(compact_json(page)) == page


def test_a_reply_read_as_its_text_leaves_out_the_lists_it_says() -> None:
    value = {
        "symbol": "Store.price",
        "results": [{"file_path": "shop/base.py", "line": 6}, {"file_path": "app.py", "line": 3}],
        "has_more": False,
        "next_offset": None,
        "text": "shop/base.py:6 method Store.price\napp.py:3 call in main()",
    }
    assert reply_text(value, "text") == (
        "symbol: Store.price\nhas_more: false\n"
        "shop/base.py:6 method Store.price\napp.py:3 call in main()"
    )
    # Without it (or when the field is no text), every field is drawn.
    assert "file_path | line" in reply_text(value)
    assert "file_path | line" in reply_text({**value, "text": None}, "text")


def test_a_fence_is_longer_than_any_inside_the_text() -> None:
    scene = "# Scene\n\n```python\nx = 1\n```\n\n````text\nnested\n````\n"
    lines = reply_text({"text": scene}).splitlines()
    assert lines[1] == lines[-1] == "`````"
    assert "\n".join(lines[2:-1]) == scene.rstrip("\n")


def test_flat_objects_are_a_table_and_others_are_items() -> None:
    cards = [
        {"id": "aaa111", "title": "Pipes | in a title", "tags": ["x"], "assignee": None},
        {"id": "bbb222", "title": "Second", "tags": [], "assignee": "dana"},
    ]
    assert reply_text(cards).splitlines() == [
        "id | title | tags | assignee",
        'aaa111 | Pipes \\| in a title | ["x"] | ',
        "bbb222 | Second | [] | dana",
    ]
    segments = {"segments": [{"id": "s1", "text": "one\ntwo", "tokens": 3}], "total": 1}
    assert reply_text(segments).splitlines() == [
        "total: 1",
        "segments:",
        '- {"id":"s1","tokens":3}',
        "  text:",
        "```",
        "one",
        "two",
        "```",
    ]
    assert reply_text("plain") == "plain" and reply_text(7) == "7" and reply_text([]) == "[]"
    assert reply_text({"note": " padded "}) == 'note: " padded "'  # spaces kept visible


def test_structured_content_wraps_what_is_not_an_object() -> None:
    assert structured([1, 2]) == {"result": [1, 2]}
    assert structured("x") == {"result": "x"}
    assert reply_size({"a": "b"}, len) == len('{"a":"b"}')  # the larger form counts


def _page(lines: list[str], budget: int, count: Any) -> dict[str, Any]:
    """A reply paging ``lines`` to ``budget`` tokens, with a hint when cut, as read_doc."""
    taken: list[str] = []
    for line in lines:
        if taken and count("".join([*taken, line])) > budget:
            break
        taken.append(line)
    more = len(taken) < len(lines)
    return {
        "content": "".join(taken),
        "returned": len(taken),
        "hint": f"call again with offset={len(taken) + 1}" if more else None,
    }


@pytest.mark.parametrize("limit", [60, 150, 400, 1000])
def test_fit_reply_holds_the_whole_reply_to_the_limit(
    make_workspace: MakeWorkspace, limit: int
) -> None:
    workspace = open_workspace(make_workspace())
    count = workspace.count_tokens
    lines = [f'    print("line {n}", {{"key": "{n}"}})\n' for n in range(200)]
    tried: list[int] = []

    def make(budget: int) -> dict[str, Any]:
        tried.append(budget)
        return _page(lines, budget, count)

    reply = fit_reply(workspace, limit, make)
    assert reply_size(reply, count) <= limit
    assert tried[0] == limit and len(tried) <= 10  # everything first, then smaller
    # Close to the limit: the reply is not left far below it.
    assert reply_size(reply, count) > 0.8 * limit or tried[-1] == limit


def test_fit_reply_refuses_a_limit_below_the_least_reply(make_workspace: MakeWorkspace) -> None:
    workspace = open_workspace(make_workspace())
    fields = {"path": "docs/a-rather-long-file-name.md", "hash": "0" * 64}

    def make(budget: int) -> dict[str, Any]:
        return {**fields, "content": "word " * max(budget, 0)}

    with pytest.raises(TokenLimitExceeded) as refused:
        fit_reply(workspace, 20, make)
    needed = refused.value.data["current_size"]
    assert refused.value.data["limit"] == 20 and needed > 20
    assert reply_size(fit_reply(workspace, needed + 5, make), workspace.count_tokens) <= needed + 5
    # A tool that wrote says what it wrote, whatever the budget.
    written = fit_reply(workspace, 20, make, written=True)
    assert written["hash"] == fields["hash"]


def test_measuring_a_draft_numbers_nothing_in_the_reply(make_workspace: MakeWorkspace) -> None:
    key = "sk_live_4eC39HqLyjWDarjtT1zdp7dcTYooMQauvdEDq54NiTphI7jx"
    workspace = open_workspace(make_workspace())
    session = workspace.mask_session()
    fork = session.fork()
    assert fork.mask(f"a {key}") == "a [REDACTED:stripe-secret-key#1]"
    assert session.counts == {} and session.placeholders == {}  # untouched
    assert session.mask(f"b {key}") == "b [REDACTED:stripe-secret-key#1]"
    assert fork.mask("another sk_live_" + "9" * 40).endswith("#2]")
    assert session.fork().counts == {"stripe-secret-key": 1}  # knows what it knew
