"""Claims on cards through the registered tools: one winner, leases, takeovers, the audit
trail, next_task's order, done through the claims, and racing processes."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from cuedeck.errors import CueError, InvalidInput
from cuedeck.plugins.claims import iso_time
from cuedeck.workspace import Workspace
from cuedeck_tasks.claims import ClaimStore
from cuedeck_tasks.errors import CardClaimed, ClaimNotHeld
from tests.tasks.conftest import CardsFactory, card_text


def call(workspace: Workspace, name: str, **arguments: Any) -> Any:
    result = workspace.plugins.tools()[name].call(workspace, arguments)
    json.dumps(result)  # every reply is plain JSON
    return result


def events(workspace: Workspace) -> list[tuple[str, str, str, str | None]]:
    """(card, event, agent, previous) of the audit trail, in order."""
    store = workspace.service("claims", ClaimStore)
    return [(e.card, e.event, e.agent, e.previous) for e in store.events()]


def wait_past(until_iso: str) -> None:
    """Wait until the lease that ends at ``until_iso`` has ended (the event is a time)."""
    from datetime import datetime

    end = datetime.fromisoformat(until_iso.replace("Z", "+00:00")).timestamp()
    while time.time() <= end:
        time.sleep(max(0.001, end - time.time() + 0.001))


@pytest.fixture
def board(workspace_with: CardsFactory) -> Workspace:
    """Four cards: two ready todo (high, medium), one waiting for another, one done."""
    return workspace_with(
        {
            "aaaaa1": card_text("aaaaa1", "Schema", priority="medium"),
            "bbbbb2": card_text("bbbbb2", "Login", priority="high"),
            "ccccc3": card_text("ccccc3", "Sessions", depends_on=("aaaaa1",)),
            "ddddd4": card_text("ddddd4", "Old work", status="done"),
        }
    )


def test_a_claim_names_its_agent_and_lease_and_one_holder_at_a_time(board: Workspace) -> None:
    taken = call(board, "claim_task", id="aaaaa1", agent="ann", lease_seconds=60)
    assert (taken["id"], taken["agent"], taken["lease_seconds"]) == ("aaaaa1", "ann", 60.0)
    assert taken["title"] == "Schema" and taken["took_over"] is None and not taken["renewed"]
    with pytest.raises(CardClaimed) as refused:
        call(board, "claim_task", id="aaaaa1", agent="bob")
    assert refused.value.code == 1500
    assert refused.value.data["holder"] == "ann"
    assert refused.value.data["until"] == taken["until"]
    assert "ann" in refused.value.message
    again = call(board, "claim_task", id="aaaaa1", agent="ann", lease_seconds=120)
    assert again["renewed"] and again["since"] == taken["since"]
    assert again["until"] > taken["until"]


def test_renew_and_release_belong_to_the_holder(board: Workspace) -> None:
    call(board, "claim_task", id="bbbbb2", agent="ann")
    with pytest.raises(CardClaimed):
        call(board, "renew_task", id="bbbbb2", agent="bob")
    with pytest.raises(CardClaimed):
        call(board, "release_task", id="bbbbb2", agent="bob")
    renewed = call(board, "renew_task", id="bbbbb2", agent="ann", lease_seconds=30)
    assert renewed["renewed"] and renewed["lease_seconds"] == 30.0
    released = call(board, "release_task", id="bbbbb2", agent="ann")
    assert released == {
        "id": "bbbbb2",
        "agent": "ann",
        "status": "todo",
        "done": False,
        "forced": False,
    }
    with pytest.raises(ClaimNotHeld) as refused:
        call(board, "renew_task", id="bbbbb2", agent="ann")
    assert refused.value.code == 1502
    assert events(board) == [
        ("bbbbb2", "claim", "ann", None),
        ("bbbbb2", "renew", "ann", None),
        ("bbbbb2", "release", "ann", None),
    ]


def test_force_releases_another_agents_claim_and_says_so(board: Workspace) -> None:
    call(board, "claim_task", id="bbbbb2", agent="ann")
    released = call(board, "release_task", id="bbbbb2", agent="lead", force=True)
    assert released["forced"]
    store = board.service("claims", ClaimStore)
    assert store.get("bbbbb2") is None
    assert store.events()[-1].detail == "by lead, forced"


def test_finished_cards_cannot_be_claimed(board: Workspace) -> None:
    with pytest.raises(InvalidInput) as refused:
        call(board, "claim_task", id="ddddd4", agent="ann")
    assert refused.value.data["field"] == "id" and "done" in refused.value.message


def test_an_expired_claim_is_taken_over_and_recorded(board: Workspace) -> None:
    first = call(board, "claim_task", id="aaaaa1", agent="ann", lease_seconds=1)
    wait_past(first["until"])
    taken = call(board, "claim_task", id="aaaaa1", agent="bob")
    assert taken["took_over"] == "ann" and taken["agent"] == "bob"
    with pytest.raises(CardClaimed):  # ann's own lease is over: the card is bob's
        call(board, "renew_task", id="aaaaa1", agent="ann")
    trail = board.service("claims", ClaimStore).events()
    expire = trail[-2]
    assert (expire.event, expire.agent, expire.detail) == ("expire", "ann", "taken over by bob")
    assert iso_time(expire.at) == first["until"]  # it expired when its lease ended
    assert trail[-1].event == "claim" and trail[-1].previous == "ann"
    assert trail[-1].at >= expire.at  # nobody held it twice


def test_next_task_takes_the_most_urgent_free_card_then_says_none_is_left(
    board: Workspace,
) -> None:
    first = call(board, "next_task", agent="ann")
    assert first["id"] == "bbbbb2"  # high before medium
    second = call(board, "next_task", agent="bob")
    assert second["id"] == "aaaaa1" and second["held"] == 1
    nothing = call(board, "next_task", agent="cid")
    assert nothing["id"] is None and nothing["held"] == 2  # ccccc3 waits for aaaaa1
    done = call(board, "release_task", id="aaaaa1", agent="bob", done=True)
    assert done["done"] and done["status"] == "done"
    assert call(board, "next_task", agent="cid")["id"] == "ccccc3"
    assert ("aaaaa1", "done", "bob", None) in events(board)


def test_list_tasks_names_holders_and_leaves_claimed_cards_out_on_request(
    board: Workspace,
) -> None:
    call(board, "claim_task", id="aaaaa1", agent="ann", paths=["src/db.py"])
    listed = {task["id"]: task["claim"] for task in call(board, "list_tasks")}
    assert listed["bbbbb2"] is None
    assert listed["aaaaa1"]["agent"] == "ann" and listed["aaaaa1"]["paths"] == ["src/db.py"]
    free = [task["id"] for task in call(board, "list_tasks", claimed=False)]
    assert free == ["bbbbb2", "ccccc3", "ddddd4"]
    assert [task["id"] for task in call(board, "list_tasks", claimed=True)] == ["aaaaa1"]


def test_done_through_update_task_is_the_holders_and_releases_the_claim(
    board: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    call(board, "claim_task", id="bbbbb2", agent="ann")
    monkeypatch.setenv("CUEDECK_AGENT", "bob")
    with pytest.raises(CardClaimed) as refused:
        call(board, "update_task", id="bbbbb2", updates={"status": "done"})
    assert refused.value.data["holder"] == "ann"
    assert "status: todo" in (board.root / ".cuedeck/cards/bbbbb2.md").read_text()
    call(board, "update_task", id="bbbbb2", updates={"notes": "bob helps"})  # not done: fine
    monkeypatch.setenv("CUEDECK_AGENT", "ann")
    updated = call(board, "update_task", id="bbbbb2", updates={"status": "done"})
    assert updated["status"] == "done"
    assert board.service("claims", ClaimStore).get("bbbbb2") is None
    assert events(board)[-1] == ("bbbbb2", "done", "ann", None)


def test_claims_name_paths_inside_the_workspace_only(board: Workspace) -> None:
    taken = call(
        board,
        "claim_task",
        id="aaaaa1",
        agent="ann",
        paths=["src/db.py", "code/src/models.py#User.save", "src/auth/"],
    )
    assert taken["paths"] == ["src/db.py", "src/models.py#User.save", "src/auth"]
    for outside, code in (("../elsewhere.py", 1004), ("/etc/passwd", 1004), (".git/x", 1013)):
        with pytest.raises(CueError) as refused:
            call(board, "claim_task", id="bbbbb2", agent="ann", paths=[outside])
        assert refused.value.code == code


RACER = """
import json, sys
from cuedeck.errors import CueError
from cuedeck.workspace import open_workspace

root, agent, cards = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
workspace = open_workspace(root)
claim = workspace.plugins.tools()["claim_task"]
print("ready", flush=True)
if sys.stdin.readline().strip() != "go":
    sys.exit("no start signal")
won, lost = [], {}
for card in cards:
    try:
        claim.call(workspace, {"id": card, "agent": agent})
        won.append(card)
    except CueError as exc:
        lost[card] = [exc.code, exc.data.get("holder")]
print(json.dumps({"won": won, "lost": lost}))
"""


@pytest.mark.slow
def test_exactly_one_of_racing_processes_wins_each_card(
    workspace_with: CardsFactory, tmp_path: Path
) -> None:
    cards = [f"race{n:02d}" for n in range(12)]
    workspace = workspace_with({card: card_text(card, f"Card {card}") for card in cards})
    script = tmp_path / "racer.py"
    script.write_text(RACER)
    racers = [
        subprocess.Popen(
            [sys.executable, str(script), str(workspace.root), f"agent{n}", ",".join(cards)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(6)
    ]
    reports = {}
    try:
        for racer in racers:
            assert racer.stdout is not None and racer.stdout.readline() == "ready\n"
        for racer in racers:  # all loaded; now they race
            assert racer.stdin is not None
            racer.stdin.write("go\n")
            racer.stdin.flush()
        for n, racer in enumerate(racers):
            out, err = racer.communicate(timeout=120)
            assert racer.returncode == 0, err
            reports[f"agent{n}"] = json.loads(out.strip().splitlines()[-1])
    finally:  # a failed check leaves no racer running
        for racer in racers:
            if racer.poll() is None:
                racer.kill()
            racer.communicate()
    winners = {card: [a for a, r in reports.items() if card in r["won"]] for card in cards}
    assert all(len(agents) == 1 for agents in winners.values()), winners
    for agent, report in reports.items():
        for card, (code, holder) in report["lost"].items():
            assert code == 1500 and holder == winners[card][0] != agent
    claims = workspace.service("claims", ClaimStore).events()
    assert sorted(e.card for e in claims if e.event == "claim") == cards


def test_exactly_one_of_racing_connections_wins_each_card(workspace_with: CardsFactory) -> None:
    """Threads with a store (a connection) each: the file's lock decides, as between
    processes."""
    import threading

    workspace = workspace_with()
    cards = [f"th{n:04d}" for n in range(40)]
    start = threading.Barrier(8)
    won: dict[str, list[str]] = {card: [] for card in cards}
    refused: list[tuple[str, str]] = []  # (agent refused, the holder named)

    def racer(agent: str) -> None:
        store = ClaimStore(workspace.root)
        start.wait()
        for card in cards:
            try:
                store.claim(card, agent, lease=60)
                won[card].append(agent)
            except CardClaimed as exc:
                refused.append((agent, exc.data["holder"]))

    threads = [threading.Thread(target=racer, args=(f"t{n}",)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(len(agents) == 1 for agents in won.values()), won
    assert len(refused) == 7 * len(cards)
    assert all(agent != holder for agent, holder in refused)
