"""``cue card claim/renew/release/next/claims`` and the claims in list, ready and show;
``cue card merge-driver`` as git runs it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cuedeck.workspace import Workspace
from cuedeck_cli.app import make_cli
from tests.tasks.conftest import CardsFactory, card_text
from tests.tasks.test_card_merges import BASE


def cue(workspace: Workspace, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(make_cli(), ["-C", str(workspace.root), *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def two(workspace_with: CardsFactory) -> Workspace:
    return workspace_with(
        {
            "aaaaa1": card_text("aaaaa1", "Schema", priority="high"),
            "bbbbb2": card_text("bbbbb2", "Login"),
        }
    )


def test_claim_next_release_and_the_audit_trail(two: Workspace) -> None:
    code, out, err = cue(two, "card", "claim", "aaa", "--agent", "ann", "--path", "src/db.py")
    assert code == 0, err
    assert out.startswith("aaaaa1: held by ann until ")
    code, out, err = cue(two, "card", "claim", "aaaaa1", "--agent", "bob")
    assert code == 1 and "error[1500]" in err and "held by ann" in err
    code, out, _ = cue(two, "card", "next", "--agent", "bob", "--json")
    taken = json.loads(out)
    assert (taken["id"], taken["agent"], taken["held"]) == ("bbbbb2", "bob", 1)
    code, out, err = cue(two, "card", "next", "--agent", "cid")
    assert code == 0 and out == "" and "no free card is ready (2 held by other agents)" in err
    code, out, _ = cue(two, "card", "renew", "aaaaa1", "--agent", "ann", "--lease", "60")
    assert code == 0 and out.startswith("aaaaa1: held by ann")
    code, out, _ = cue(two, "card", "release", "bbbbb2", "--agent", "bob", "--done")
    assert out == "bbbbb2: done and released\n"
    live = json.loads(cue(two, "card", "claims", "--json")[1])
    assert [(c["id"], c["agent"], c["paths"]) for c in live] == [("aaaaa1", "ann", ["src/db.py"])]
    trail = json.loads(cue(two, "card", "claims", "--events", "--json")[1])
    assert [(e["id"], e["event"], e["agent"]) for e in trail] == [
        ("aaaaa1", "claim", "ann"),
        ("bbbbb2", "claim", "bob"),
        ("aaaaa1", "renew", "ann"),
        ("bbbbb2", "done", "bob"),
    ]
    code, out, _ = cue(two, "card", "claims")
    assert out.splitlines()[0].split() == ["ID", "AGENT", "SINCE", "UNTIL", "PATHS"]


def test_list_ready_and_show_name_the_holder(two: Workspace) -> None:
    cue(two, "card", "claim", "bbbbb2", "--agent", "ann")
    out = cue(two, "card", "list")[1]
    header, *rows = out.splitlines()
    assert "HELD BY" in header.split("  ")
    assert [row.split()[0] for row in rows if "ann" in row.split()] == ["bbbbb2"]
    free = json.loads(cue(two, "card", "list", "--unclaimed", "--json")[1])
    assert [card["id"] for card in free] == ["aaaaa1"] and free[0]["claim"] is None
    held = json.loads(cue(two, "card", "list", "--claimed", "--json")[1])
    assert [card["claim"]["agent"] for card in held] == ["ann"]
    ready = cue(two, "card", "ready", "--unclaimed")[1]
    assert "aaaaa1" in ready and "bbbbb2" not in ready
    shown = cue(two, "card", "show", "bbbbb2")[1]
    assert "held by     ann since " in shown and ", until " in shown
    assert json.loads(cue(two, "card", "show", "bbbbb2", "--json")[1])["claim"]["agent"] == "ann"


def test_the_merge_driver_writes_ours_and_exits_1_on_a_conflict(
    two: Workspace, tmp_path: Path
) -> None:
    base, ours, theirs = (tmp_path / name for name in ("base", "ours", "theirs"))
    base.write_text(BASE)
    ours.write_text(BASE.replace("status: todo", "status: active"))
    theirs.write_text(BASE.replace("priority: medium", "priority: high"))
    args = ["card", "merge-driver", str(base), str(ours), str(theirs), "x.md"]
    code, _, err = cue(two, *args)
    assert code == 0, err
    assert "status: active" in ours.read_text() and "priority: high" in ours.read_text()
    theirs.write_text(BASE.replace("status: todo", "status: done"))
    code, _, err = cue(two, *args)
    assert code == 1 and "x.md: 1 conflict(s)" in err
    assert (
        "<<<<<<< ours\nstatus: active\n=======\nstatus: done\n>>>>>>> theirs\n" in ours.read_text()
    )
