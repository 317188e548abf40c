"""The greedy and outline pruners, and outlines, on real markdown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import pytest

from cuedeck.errors import CueError
from cuedeck.models import Placement, SceneItem
from cuedeck.plugins.host import make_plugin_host
from cuedeck.scene.pruners import CheckedPruner, GreedyPruner, OutlinePruner, get_pruners, outline
from cuedeck.token_counts import EstimateCounter

COUNT = EstimateCounter().count


def item(path: str, text: str, *, anchor: str | None = None, role: str = "direct") -> SceneItem:
    return SceneItem(path, anchor, 50, 1, text, COUNT(text), "0" * 64, role=role)


DOC = """---
title: Guide
---
# Guide

Intro paragraph that
spans two lines.

```python
# not a heading
print("code")
```

## Install

Run the installer.

More install details nobody needs in an outline.

## Use

| a table | first |
| --- | --- |

The first prose after the table.
"""


def test_outline_keeps_headings_and_first_paragraphs() -> None:
    assert outline(DOC) == (
        "# Guide\nIntro paragraph that spans two lines.\n\n"
        "## Install\nRun the installer.\n\n"
        "## Use\nThe first prose after the table."
    )
    assert outline(DOC, paragraphs=False) == "# Guide\n## Install\n## Use"


def test_outline_of_text_without_headings_is_its_first_paragraph() -> None:
    assert outline("Just prose.\nMore prose.\n\nLater.\n") == "Just prose. More prose."
    assert outline("Just prose.\n", paragraphs=False) == ""
    assert outline("") == ""


def test_outline_cuts_long_paragraphs() -> None:
    text = "# T\n\n" + "word " * 200 + "\n"
    first = outline(text).splitlines()[1]
    assert first.endswith("…") and len(first) <= 320


def test_outline_on_real_docs_is_much_smaller(fastapi_docs: Path) -> None:
    text = (fastapi_docs / "tutorial" / "security" / "oauth2-jwt.md").read_text(encoding="utf-8")
    short = outline(text)
    assert COUNT(short) < COUNT(text) / 3
    assert "## Handle JWT tokens { #handle-jwt-tokens }" in short
    assert "openssl rand" not in short  # code is never in an outline


def test_greedy_keeps_in_order_until_the_first_misfit() -> None:
    items = [
        item("card.md", "card " * 10, role="card"),
        item("a.md", "alpha " * 10),
        item("big.md", "big " * 100),
        item("small.md", "s"),
    ]
    budget = items[0].tokens + items[1].tokens + 5
    placements = GreedyPruner().prune(items, budget, COUNT)
    assert [p.mode for p in placements] == ["whole", "whole", "dropped", "dropped"]
    assert placements[2].reason == f"needs {items[2].tokens} tokens, 5 left"
    assert placements[3].reason == "after the truncation at big.md"
    assert sum(p.tokens for p in placements) <= budget


def test_the_card_is_kept_even_when_it_alone_is_over() -> None:
    items = [item("card.md", "card " * 50, role="card"), item("a.md", "a")]
    for pruner in (GreedyPruner(), OutlinePruner()):
        assert [p.mode for p in pruner.prune(items, 1, COUNT)] == ["whole", "dropped"]


def test_outline_pruner_outlines_then_continues() -> None:
    big = "# Big\n\nFirst words.\n\n" + "\n\n".join(
        f"## Part {n}\n\nOpening of part {n}.\n\n" + "filler text here. " * 40 for n in range(4)
    )
    items = [
        item("card.md", "card", role="card"),
        item("big.md", big),
        item("sec.md", "## Sec\n\nSection text.", anchor="sec"),
    ]
    budget = items[0].tokens + COUNT(outline(big)) + items[2].tokens
    placements = OutlinePruner().prune(items, budget, COUNT)
    assert [p.mode for p in placements] == ["whole", "outline", "section"]
    assert placements[1].text == outline(big)
    assert placements[1].reason is not None and placements[1].reason.startswith("outline:")
    assert sum(p.tokens for p in placements) <= budget

    tighter = items[0].tokens + COUNT(outline(big, paragraphs=False)) + items[2].tokens
    placements = OutlinePruner().prune(items, tighter, COUNT)
    assert placements[1].text == outline(big, paragraphs=False)
    assert placements[1].reason is not None and placements[1].reason.startswith("headings only")

    placements = OutlinePruner().prune(items, items[0].tokens, COUNT)
    assert [p.mode for p in placements] == ["whole", "dropped", "dropped"]


@pytest.mark.parametrize("name", ["greedy", "outline"])
def test_core_registers_both_pruners(name: str) -> None:
    assert name in get_pruners(make_plugin_host(entry_points=False))


# --- the contract, clause by clause (pruning.CheckedPruner) -----------------------------

CARD = SceneItem("card.md", None, 100, 0, "card", 10, "0" * 64, role="card")
DOC_A = SceneItem("a.md", None, 50, 1, "alpha", 20, "0" * 64)
DOC_B = SceneItem("b.md", "sec", 50, 1, "beta", 30, "0" * 64)
ITEMS = [CARD, DOC_A, DOC_B]


def _whole(item: SceneItem, tokens: int | None = None) -> Placement:
    mode = "section" if item.anchor else "whole"
    return Placement(item, mode, item.text, item.tokens if tokens is None else tokens)


def _dropped(item: SceneItem, tokens: int = 0) -> Placement:
    return Placement(item, "dropped", "", tokens, "no room")


class _Fixed:
    """A pruner that returns what the table row says, whatever the budget."""

    def __init__(self, placements: list[Placement]) -> None:
        self.placements = placements

    def prune(self, items: Any, budget: int, count: Any) -> list[Placement]:
        return list(self.placements)


CONTRACT = [
    # (clause, placements, budget, broken: None when the contract holds)
    ("all whole within the budget", [_whole(CARD), _whole(DOC_A), _whole(DOC_B)], 60, None),
    ("exactly the budget", [_whole(CARD), _whole(DOC_A), _dropped(DOC_B)], 30, None),
    (
        "an outline at its own cost",
        [_whole(CARD), _whole(DOC_A), Placement(DOC_B, "outline", "b", 5, "outline")],
        35,
        None,
    ),
    ("the card alone over the budget", [_whole(CARD), _dropped(DOC_A), _dropped(DOC_B)], 4, None),
    (
        "one placement per item",
        [_whole(CARD), _whole(DOC_A)],
        60,
        "returned 2 placements for 3 items",
    ),
    (
        "in the order given",
        [_whole(CARD), _whole(DOC_B), _whole(DOC_A)],
        60,
        "placement 1 is for b.md#sec, not a.md",
    ),
    (
        "for the item given",
        [_whole(CARD), _whole(attrs.evolve(DOC_A)), _whole(DOC_B)],
        60,
        "placement 1 is for a copy of it, not a.md",
    ),
    (
        "the card kept whole",
        [_dropped(CARD), _whole(DOC_A), _dropped(DOC_B)],
        60,
        "did not keep the active card whole",
    ),
    (
        "no negative tokens",
        [_whole(CARD), Placement(DOC_A, "outline", "a", -1, "x"), _dropped(DOC_B)],
        60,
        "reported -1 tokens for a.md (outline)",
    ),
    (
        "a dropped item costs nothing",
        [_whole(CARD), _whole(DOC_A), _dropped(DOC_B, 3)],
        60,
        "reported 3 tokens for b.md#sec (dropped)",
    ),
    (
        "within the budget, card included",
        [_whole(CARD), _whole(DOC_A), _dropped(DOC_B)],
        29,
        "placed 30 tokens, over its budget of 29",
    ),
    (
        "what is kept whole costs its measure",
        [_whole(CARD), _whole(DOC_A, 0), _dropped(DOC_B)],
        25,
        "placed 30 tokens, over its budget of 25",
    ),
    (
        "the card over the budget leaves no room",
        [_whole(CARD), _whole(DOC_A), _dropped(DOC_B)],
        4,
        "placed 30 tokens, over its budget of 4",
    ),
]


@pytest.mark.parametrize(
    ("clause", "placements", "budget", "broken"), CONTRACT, ids=[row[0] for row in CONTRACT]
)
def test_the_pruner_contract(
    clause: str, placements: list[Placement], budget: int, broken: str | None
) -> None:
    checked = CheckedPruner("table", _Fixed(placements))
    if broken is None:
        assert checked.prune(ITEMS, budget, COUNT) == placements
        return
    with pytest.raises(CueError, match="pruner 'table' broke its contract") as caught:
        checked.prune(ITEMS, budget, COUNT)
    assert broken in caught.value.message
    assert caught.value.data["pruner"] == "table"
