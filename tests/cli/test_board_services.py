"""The board reaches cards and memory through their service contracts, and answers as
the tools doing the same work reply: the same validation, errors, claim checks and
masking (the page itself is driven in test_board.py)."""

from __future__ import annotations

import pytest

from cuedeck import open_workspace
from cuedeck.errors import Conflict, CueError, InvalidInput
from tests.conftest import MakeWorkspace, needs

SECRET = "sk_live_4eC39HqLyjWDarjtT1zdp7dcTYooMQauvdEDq54NiTphI7jx"


@needs("cuedeck_tasks")
def test_cards_from_the_board_are_what_the_task_tools_reply(
    make_workspace: MakeWorkspace,
) -> None:
    from cuedeck_cli.board.api import BoardApi

    root = make_workspace({})
    board = BoardApi(open_workspace(root))
    made = board.create_card({"title": f"Rotate {SECRET}", "tags": ["ops"]})
    board.create_card({"title": "Ship", "depends_on": [made["id"]]})
    tools = open_workspace(root).plugins.tools()
    listed = board.cards()
    every = ["todo", "active", "done", "archived"]
    replied = tools["list_tasks"].call(open_workspace(root), {"status": every})
    assert [c["id"] for c in listed["cards"]] == [c["id"] for c in replied]
    assert SECRET in replied[0]["title"] + replied[1]["title"]  # the tool's raw reply
    assert SECRET not in str(listed) and SECRET not in str(made)  # masked on the way out
    assert (root / ".cuedeck" / "cards" / f"{made['id']}.md").read_text().count(
        SECRET
    ) == 2  # title and heading
    assert board.graph()["edges"] and board.graph()["cycles"] == []


@needs("cuedeck_tasks")
def test_a_board_edit_is_refused_as_update_task_refuses_it(make_workspace: MakeWorkspace) -> None:
    from cuedeck_cli.board.api import BoardApi

    root = make_workspace({})
    board = BoardApi(open_workspace(root))
    card = board.create_card({"title": "Ship"})["id"]
    read = next(c for c in board.cards()["cards"] if c["id"] == card)["content_hash"]
    board.update_card(card, {"notes": "first"}, read)  # the hash read: accepted
    with pytest.raises(Conflict) as stale:  # the same hash again: the card changed since
        board.update_card(card, {"notes": "second"}, read)
    assert (
        stale.value.code == 1005
        and "second" not in (root / f".cuedeck/cards/{card}.md").read_text()
    )
    tool = open_workspace(root).plugins.tools()["update_task"]
    bad = {"status": "finished"}
    with pytest.raises(InvalidInput) as by_tool:
        tool.call(open_workspace(root), {"id": card, "updates": bad})
    with pytest.raises(InvalidInput) as by_board:
        board.update_card(card, bad)
    assert by_board.value.to_dict() == by_tool.value.to_dict()
    assert str(by_board.value).startswith("update_task: invalid 'updates")
    with pytest.raises(CueError) as unknown:
        board.update_card("zzzzzz", {"notes": "x"})
    assert unknown.value.code == 1001


@needs("cuedeck_tasks", "cuedeck_memory")
def test_memory_from_the_board_is_masked_and_a_pin_is_stored(
    make_workspace: MakeWorkspace,
) -> None:
    from cuedeck_cli.board.api import BoardApi

    root = make_workspace({})
    workspace = open_workspace(root)
    reply = workspace.plugins.tools()["context_capture"].call(
        workspace,
        {"segments": [{"text": f"The key was {SECRET}.", "type": "decision"}]},
    )
    segment = reply["segment_ids"][0]
    board = BoardApi(open_workspace(root))
    shown = board.memory()
    assert shown["usage"]["project_id"] == shown["project_id"]
    assert [s["segment_id"] for s in shown["working_set"]["segments"]] == [segment]
    assert SECRET not in str(shown)
    assert board.pin(None, segment, True)["pinned_segments"] == [segment]
    stored = open_workspace(root).service("context").segment(shown["project_id"], segment)
    assert stored.pinned
    assert board.pin(None, segment, False)["unpinned_segments"] == [segment]
    with pytest.raises(InvalidInput) as bad:
        board.memory("no such/project")
    assert bad.value.code == 1004


@needs("cuedeck_search")
def test_a_board_search_is_what_read_context_replies_masked(make_workspace: MakeWorkspace) -> None:
    from cuedeck_cli.board.api import BoardApi

    root = make_workspace(
        {
            ".cuedeck/docs/keys.md": f"# Key rotation of {SECRET}\n\nRotate it weekly.\n",
            ".cuedeck/docs/other.md": "# Deploys\n\nShip on Tuesdays.\n",
        },
        config='[search]\ndefault_mode = "keyword"\n',
    )
    found = BoardApi(open_workspace(root)).search("key rotation")
    tool = open_workspace(root).plugins.tools()["read_context"]
    replied = tool.call(open_workspace(root), {"query": "key rotation", "limit": 10})
    assert [hit["path"] for hit in found["results"]] == [hit["path"] for hit in replied["results"]]
    assert found["results"][0]["path"] == ".cuedeck/docs/keys.md"
    assert SECRET not in str(found) and "[REDACTED:stripe-secret-key" in str(found)
    with pytest.raises(InvalidInput):  # validated as the tool validates it
        BoardApi(open_workspace(root)).search("")
