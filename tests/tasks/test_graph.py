"""The dependency graph: queries, cycles, missing cards, the ready list and exports."""

from __future__ import annotations

import json

import pytest

from cuedeck.workspace import Workspace
from cuedeck_tasks.graph import TaskGraph
from tests.tasks.conftest import CardsFactory, card_text, store_of


@pytest.fixture
def tangled(workspace_with: CardsFactory) -> Workspace:
    """A diamond, a three-card cycle, a self-loop and a missing dependency."""
    cards = {
        "aaaaaa": card_text("aaaaaa", "Set up the database", status="done"),
        "bbbbbb": card_text("bbbbbb", "Auth table", depends_on=("aaaaaa",), priority="low"),
        "cccccc": card_text("cccccc", "User table", depends_on=("aaaaaa",), priority="critical"),
        "dddddd": card_text("dddddd", "Login", depends_on=("bbbbbb", "cccccc")),
        "eeeeee": card_text("eeeeee", "Loop one", depends_on=("ffffff",)),
        "ffffff": card_text("ffffff", "Loop two", depends_on=("gggggg",)),
        "gggggg": card_text("gggggg", 'Loop "three" <#3>', depends_on=("eeeeee",)),
        "hhhhhh": card_text("hhhhhh", "Myself", depends_on=("hhhhhh",)),
        "iiiiii": card_text("iiiiii", "Waits for a ghost", depends_on=("zzzzzz",)),
        "jjjjjj": card_text("jjjjjj", "Archived", status="archived"),
    }
    return workspace_with(cards)


def graph_of(workspace: Workspace) -> TaskGraph:
    return store_of(workspace).graph()


def test_forward_and_reverse_queries(tangled: Workspace) -> None:
    graph = graph_of(tangled)
    assert graph.dependencies("dddddd") == ["bbbbbb", "cccccc"]
    assert graph.dependents("aaaaaa") == ["bbbbbb", "cccccc"]
    assert graph.dependents("dddddd") == []
    assert graph.dependencies("iiiiii") == ["zzzzzz"]
    assert graph.dependents("zzzzzz") == ["iiiiii"]
    assert graph.path("dddddd", "aaaaaa") in (
        ["dddddd", "bbbbbb", "aaaaaa"],
        ["dddddd", "cccccc", "aaaaaa"],
    )
    assert graph.path("aaaaaa", "dddddd") is None


def test_full_validation_finds_every_cycle_and_missing_card(tangled: Workspace) -> None:
    graph = graph_of(tangled)
    assert graph.cycles() == [
        ["eeeeee", "ffffff", "gggggg", "eeeeee"],
        ["hhhhhh", "hhhhhh"],
    ]
    assert graph.missing() == [("iiiiii", "zzzzzz")]


def test_single_card_validation(tangled: Workspace) -> None:
    graph = graph_of(tangled)
    assert graph.cycle_through("ffffff") == ["ffffff", "gggggg", "eeeeee", "ffffff"]
    assert graph.cycle_through("hhhhhh") == ["hhhhhh", "hhhhhh"]
    assert graph.cycle_through("dddddd") is None


def test_would_cycle_checks_before_adding(tangled: Workspace) -> None:
    graph = graph_of(tangled)
    assert graph.would_cycle("aaaaaa", ["dddddd"]) is not None
    assert graph.would_cycle("aaaaaa", ["dddddd"])[0] == "aaaaaa"  # type: ignore[index]
    assert graph.would_cycle("dddddd", ["aaaaaa", "jjjjjj"]) is None


def test_ready_lists_open_cards_whose_dependencies_are_done(tangled: Workspace) -> None:
    ready = [card.id for card in graph_of(tangled).ready()]
    # critical before low; the done, archived, looping and ghost-waiting cards are not ready
    assert ready == ["cccccc", "bbbbbb"]


def test_json_export(tangled: Workspace) -> None:
    exported = json.loads(graph_of(tangled).export("json"))
    nodes = {node["id"]: node for node in exported["nodes"]}
    assert nodes["zzzzzz"] == {
        "id": "zzzzzz",
        "title": None,
        "status": None,
        "priority": None,
        "path": ".cuedeck/cards/zzzzzz.md",
        "missing": True,
    }
    assert nodes["aaaaaa"]["status"] == "done" and not nodes["aaaaaa"]["missing"]
    assert {"card": "dddddd", "depends_on": "bbbbbb"} in exported["edges"]
    assert len(exported["edges"]) == 9


def test_mermaid_export(tangled: Workspace) -> None:
    text = graph_of(tangled).export("mermaid")
    lines = text.splitlines()
    assert lines[0] == "graph TD"
    assert '    aaaaaa["aaaaaa · Set up the database"]:::done' in lines
    assert '    gggggg["gggggg · Loop #quot;three#quot; #lt;#35;3#gt;"]:::todo' in lines
    assert '    zzzzzz["zzzzzz (missing)"]:::missing' in lines
    assert "    aaaaaa --> bbbbbb" in lines  # from the dependency to the card waiting for it
    assert any(line.startswith("    classDef done ") for line in lines)


def test_dot_export(tangled: Workspace) -> None:
    text = graph_of(tangled).export("dot")
    assert text.startswith("digraph cards {\n") and text.endswith("}\n")
    assert '  "aaaaaa" -> "bbbbbb";' in text
    assert '"gggggg" [label="gggggg\\nLoop \\"three\\" <#3>"' in text
    assert '"zzzzzz" [label="zzzzzz\\n(missing)"' in text and "style=dashed" in text


def test_an_empty_workspace_has_an_empty_valid_graph(workspace_with: CardsFactory) -> None:
    graph = graph_of(workspace_with())
    assert graph.cycles() == [] and graph.missing() == [] and graph.ready() == []
    assert json.loads(graph.export("json")) == {"nodes": [], "edges": []}
    assert graph.export("mermaid").startswith("graph TD\n")
    with pytest.raises(ValueError, match="unknown format"):
        graph.export("svg")
