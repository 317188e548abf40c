"""References to code (``@code/path#Symbol``, ``#L10-L20``): recorded, then labelled fresh,
moved, drifted or orphaned as the repository's history changes the code they cite."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from cuedeck import open_workspace
from cuedeck.doctor import diagnose
from cuedeck.errors import FileNotFound
from cuedeck.refs.drift import label_references, record_references
from tests.code.conftest import Repo
from tests.conftest import needs

CART = '''"""A shopping cart."""


class Cart:
    """Items and their quantities."""

    def __init__(self) -> None:
        self.items: dict[str, int] = {}

    def add(self, item: str, quantity: int = 1) -> None:
        """Add ``quantity`` of ``item``."""
        self.items[item] = self.items.get(item, 0) + quantity

    def total(self, prices: dict[str, float]) -> float:
        """What the items cost."""
        return sum(prices[name] * count for name, count in self.items.items())
'''
CARD_ID = "abc123"
CARD_PATH = f".cuedeck/cards/{CARD_ID}.md"
CARD = """---
id: abc123
title: Fix cart adding
status: active
refs:
  - code/src/shop/cart.py#L14-L16
---
# Fix cart adding

Adding twice loses items: see @code/src/shop/cart.py#Cart.add and @code/src/shop/cart.py.
"""
ADD = "src/shop/cart.py#Cart.add"
TOTAL_LINES = "src/shop/cart.py#L14-L16"
FILE = "src/shop/cart.py"


@pytest.fixture
def shop(make_repo: Callable[[dict[str, str]], Repo]) -> Repo:
    """The shop repository, its card's code references recorded at the first commit."""
    repo = make_repo({"src/shop/cart.py": CART, CARD_PATH: CARD})
    record_references(open_workspace(repo.root), CARD_PATH)
    repo.commit("record the card's references")
    return repo


def labels(repo: Repo) -> dict[str, str]:
    return {label.key: label.describe() for label in label_references(open_workspace(repo.root))}


def test_recorded_references_are_fresh_and_the_record_is_sorted_json(shop: Repo) -> None:
    assert labels(shop) == {ADD: "fresh", TOTAL_LINES: "fresh", FILE: "fresh"}
    record = json.loads((shop.root / ".cuedeck/code-refs.json").read_text(encoding="utf-8"))
    entries = record["references"][CARD_PATH]
    assert list(entries) == sorted(entries) == [FILE, ADD, TOTAL_LINES]
    assert entries[ADD]["symbol"] == "Cart.add"
    assert entries[ADD]["lines"] == "L10-L12"
    assert entries[TOTAL_LINES] | {"sha256": "", "recorded": ""} == {
        "symbol": None,
        "lines": "L14-L16",
        "sha256": "",
        "fingerprint": entries[TOTAL_LINES]["fingerprint"],
        "recorded": "",
    }
    assert len(entries[TOTAL_LINES]["fingerprint"]) == 3 * 4  # four hex digits a line


def test_lines_added_above_move_a_symbol_and_a_line_range(shop: Repo) -> None:
    shop.write(
        {
            "src/shop/cart.py": CART.replace(
                '"""A shopping cart."""\n', '"""Cart."""\n\nimport os\n\n'
            )
        }
    )
    shop.commit("import os")
    found = labels(shop)
    assert found[ADD] == "moved: L10-L12 -> L13-L15 (same text)"
    assert found[TOTAL_LINES] == "moved: L14-L16 -> L17-L19 (same text)"
    assert found[FILE].startswith("drifted: +4 -1 lines since ")
    # The symbol still resolves by name: only the line range is worth a warning.
    problems = [p for p in diagnose(open_workspace(shop.root)) if p.code in (1140, 1141, 1142)]
    assert [(p.severity, p.code, p.line) for p in problems] == [
        ("warning", 1142, 6),
        ("warning", 1140, 10),
    ]
    assert problems[0].help == "cite code/src/shop/cart.py#L17-L19, or the symbol by name"


def test_a_changed_body_drifts_with_its_diff_size(shop: Repo) -> None:
    changed = CART.replace(
        "        self.items[item] = self.items.get(item, 0) + quantity\n",
        "        if quantity < 1:\n"
        "            raise ValueError(quantity)\n"
        "        self.items[item] = self.items.setdefault(item, 0) + quantity\n",
    )
    shop.write({"src/shop/cart.py": changed})
    shop.commit("refuse nothing")
    found = labels(shop)
    assert found[ADD].startswith("drifted: +3 -1 lines since 20")
    # The cited lines hold other text now; their text is two lines down.
    assert found[TOTAL_LINES] == "moved: L14-L16 -> L16-L18 (same text)"
    (warning,) = [
        p
        for p in diagnose(open_workspace(shop.root))
        if p.code == 1140 and "#Cart.add" in p.message
    ]
    assert warning.message.startswith(
        "code reference '@code/src/shop/cart.py#Cart.add' drifted: +3 -1 lines since "
    )
    assert warning.help == (
        f"read it again, then record it anew: cue card update {CARD_ID} --ref "
        "code/src/shop/cart.py#Cart.add"
    )
    # Recording it again accepts the drift.
    record_references(open_workspace(shop.root), CARD_PATH, keys=[ADD], replace=True)
    assert labels(shop)[ADD] == "fresh"


@needs("cuedeck_tasks")
def test_cue_card_update_ref_records_a_drifted_reference_anew(shop: Repo) -> None:
    from click.testing import CliRunner

    from cuedeck_cli.app import make_cli

    shop.write({"src/shop/cart.py": CART.replace("quantity: int = 1", "quantity: int = 2")})
    shop.commit("add two by default")
    assert labels(shop)[ADD].startswith("drifted: +1 -1 lines since 20")
    update = ["-C", str(shop.root), "card", "update", "abc123"]
    typo = CliRunner().invoke(make_cli(), [*update, "--json", "--ref", "code/" + ADD[:-1]])
    assert typo.exit_code == 1
    assert json.loads(typo.output)["error"]["code"] == 1001
    assert labels(shop)[ADD].startswith("drifted: ")
    before = (shop.root / CARD_PATH).read_text(encoding="utf-8")
    done = CliRunner().invoke(make_cli(), [*update, "--ref", "code/" + ADD])
    assert done.exit_code == 0, done.output
    assert labels(shop)[ADD] == "fresh"
    # The body cites it: recorded anew, not added to refs: (the card is as it was).
    assert (shop.root / CARD_PATH).read_text(encoding="utf-8") == before
    assert f"recorded code/{ADD}" in done.output
    # A reference the card does not cite yet is added to refs: and recorded.
    shop.write({"src/shop/tax.py": "def vat(amount: float) -> float:\n    return amount\n"})
    shop.commit("tax")
    added = CliRunner().invoke(make_cli(), [*update, "--ref", "code/src/shop/tax.py#vat"])
    assert added.exit_code == 0, added.output
    card = (shop.root / CARD_PATH).read_text(encoding="utf-8")
    assert 'refs: ["code/src/shop/cart.py#L14-L16", "code/src/shop/tax.py#vat"]\n' in card
    assert card.count("code/src/shop/cart.py#Cart.add") == 1


def test_an_orphan_moved_unchanged_points_at_the_same_text(shop: Repo) -> None:
    basket = CART.replace("class Cart:", "class Basket:").replace("A shopping cart", "A basket")
    shop.write({"src/shop/basket.py": basket, "src/shop/cart.py": '"""Gone."""\n'})
    shop.commit("the cart is a basket now")
    found = labels(shop)
    assert found[ADD] == (
        "orphaned: src/shop/cart.py has no Cart.add (recorded at L10-L12 on 2026-"
        + found[ADD].split(" on 2026-")[1].split(")")[0]
        + "); likeliest new home: src/shop/basket.py#Basket.add (same text)"
    )
    problems = diagnose(open_workspace(shop.root))
    orphan = next(p for p in problems if p.code == 1141 and p.line == 10)
    assert (orphan.severity, orphan.help) == (
        "error",
        "point it at code/src/shop/basket.py#Basket.add",
    )
    # One problem per reference: the dead anchor is not reported a second time.
    assert not [p for p in problems if p.code == 1001 and p.line == 10]


def test_an_orphan_changed_elsewhere_points_at_the_same_name(shop: Repo) -> None:
    basket = (
        "class Basket:\n"
        "    def add(self, item: str, quantity: int = 1) -> None:\n"
        '        """Add ``quantity`` of ``item``."""\n'
        "        self.items[item] = self.items.get(item, 0) + quantity\n"
        "        self.log.append(item)\n"
    )
    shop.write({"src/shop/basket.py": basket})
    shop.write({"src/shop/cart.py": CART.replace("    def add(", "    def _old_add(")})
    shop.commit("add moves to the basket")
    found = labels(shop)
    assert found[ADD].endswith(
        "likeliest new home: src/shop/basket.py#Basket.add (same name, 86% of lines alike)"
    )


def test_an_orphan_renamed_in_place_points_at_the_most_similar_text(shop: Repo) -> None:
    shop.write({"src/shop/cart.py": CART.replace("    def add(", "    def put(")})
    shop.commit("add is put")
    workspace = open_workspace(shop.root)
    (label,) = [x for x in label_references(workspace) if x.key == ADD]
    assert label.state == "orphaned"
    assert label.suggestions[0] == "src/shop/cart.py#Cart.put (67% of lines alike)"


def test_a_whole_file_moved_by_git_mv_is_found_by_its_bytes(shop: Repo) -> None:
    shop.write({"src/shop/basket.py": CART})
    shop.remove("src/shop/cart.py")
    shop.commit("rename the module")
    found = labels(shop)
    assert found[FILE].startswith("orphaned: src/shop/cart.py is gone (recorded at L1-L16 on ")
    assert found[FILE].endswith("likeliest new home: src/shop/basket.py (same text)")


@needs("cuedeck_tasks")
def test_update_task_records_a_code_reference_and_refuses_a_typo(shop: Repo) -> None:
    workspace = open_workspace(shop.root)
    update = workspace.plugins.tools()["update_task"]
    with pytest.raises(FileNotFound) as caught:
        update.call(
            workspace,
            {"id": "abc123", "updates": {"add_refs": ["code/src/shop/cart.py#Cart.totl"]}},
        )
    assert caught.value.data["suggestion"] == "Did you mean 'Cart.total'?"
    reply = update.call(
        workspace, {"id": "abc123", "updates": {"add_refs": ["code/src/shop/cart.py#Cart.total"]}}
    )
    assert reply["recorded"] == ["src/shop/cart.py#Cart.total"]
    assert reply["refs"] == ["code/src/shop/cart.py#L14-L16", "code/src/shop/cart.py#Cart.total"]
    assert labels(shop)["src/shop/cart.py#Cart.total"] == "fresh"
    # Removing the reference removes its record.
    reply = update.call(
        workspace,
        {"id": "abc123", "updates": {"remove_refs": ["@code/src/shop/cart.py#Cart.total"]}},
    )
    assert reply["refs"] == ["code/src/shop/cart.py#L14-L16"]
    record = json.loads((shop.root / ".cuedeck/code-refs.json").read_text(encoding="utf-8"))
    assert "src/shop/cart.py#Cart.total" not in record["references"][CARD_PATH]


@needs("cuedeck_tasks", "cuedeck_search")
def test_the_board_shows_each_cards_code_references_with_their_label(shop: Repo) -> None:
    from cuedeck_cli.board.api import BoardApi

    shop.write(
        {
            "src/shop/cart.py": CART.replace(
                "self.items.get(item, 0)", "self.items.setdefault(item, 0)"
            )
        }
    )
    shop.commit("setdefault")
    (card,) = BoardApi(open_workspace(shop.root)).cards()["cards"]
    refs = {ref["ref"]: (ref["state"], ref["label"]) for ref in card["code_refs"]}
    assert refs["code/src/shop/cart.py#L14-L16"] == ("fresh", "fresh")
    state, label = refs["code/src/shop/cart.py#Cart.add"]
    assert state == "drifted" and label.startswith("drifted: +1 -1 lines since ")
