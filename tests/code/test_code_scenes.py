"""Scenes that carry code, on a real repository made here: cited symbols with their drift
labels, signatures before dropping (never over the budget), related code within its
share, a traceback's frames, changes since a commit as hunks, and the repository map."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from click.testing import CliRunner

from cuedeck import open_workspace
from cuedeck.refs.delta import UnknownBaseline
from cuedeck.scene import build_scene
from cuedeck_cli.app import make_cli
from tests.code.conftest import Repo

CART = '''"""A shopping cart."""


class Cart:
    """Items and their quantities.

    Quantities are whole numbers.
    """

    def __init__(self) -> None:
        self.items: dict[str, int] = {}

    def add(self, item: str, quantity: int = 1) -> None:
        """Add ``quantity`` of ``item``."""
        self.items[item] = self.items.get(item, 0) + quantity

    def remove(self, item: str) -> None:
        """Take ``item`` out of the cart, whatever its quantity."""
        self.items.pop(item, None)

    def total(self, prices: dict[str, float]) -> float:
        """What the items cost."""
        return sum(prices[name] * count for name, count in self.items.items())
'''
TAX = '''"""Taxes."""


def vat(amount: float, country: str) -> float:
    """Value added tax on ``amount``."""
    rates = {"fr": 0.2, "de": 0.19}
    return amount * rates[country]


def duty(amount: float) -> float:
    """Import duty."""
    return amount * 0.05
'''
CHECKOUT = '''"""Checkout."""
from shop.cart import Cart
from shop.tax import vat


def pay(cart: Cart, country: str) -> float:
    """Charge for the cart."""
    net = cart.total({"apple": 1.0})
    return net + vat(net, country)
'''


def card(body: str, refs: str = "") -> str:
    front = f"refs:\n{refs}" if refs else ""
    head = f"---\nid: abc123\ntitle: Fix checkout\nstatus: active\n{front}---\n"
    return f"{head}# Fix checkout\n\n{body}\n"


@pytest.fixture
def shop(make_repo: Callable[[dict[str, str]], Repo]) -> Repo:
    return make_repo(
        {
            "shop/cart.py": CART,
            "shop/tax.py": TAX,
            "shop/checkout.py": CHECKOUT,
            ".cuedeck/config.toml": "[scene]\nclipboard = false\n",
            ".cuedeck/cards/abc123.md": card(
                "Paying twice adds the items again: @code/shop/cart.py#Cart.add."
            ),
        }
    )


def candidates(scene: object) -> list[tuple[str, str, str]]:
    return [
        (c["path"] + (f"#{c['anchor']}" if c["anchor"] else ""), c["role"], c["placed"])
        for c in scene.manifest["candidates"]  # type: ignore[attr-defined]
    ]


def test_a_cited_symbol_is_placed_with_its_lines_and_language(shop: Repo) -> None:
    workspace = open_workspace(shop.root)
    scene = build_scene(workspace, "abc123", 2000, record=False)
    assert candidates(scene)[:2] == [
        (".cuedeck/cards/abc123.md", "card", "whole"),
        ("shop/cart.py#Cart.add", "direct", "section"),
    ]
    block = (
        "## shop/cart.py#Cart.add · L13-L15\n\n```python\n"
        "    def add(self, item: str, quantity: int = 1) -> None:\n"
        '        """Add ``quantity`` of ``item``."""\n'
        "        self.items[item] = self.items.get(item, 0) + quantity\n```\n"
    )
    assert block in scene.text
    entry = scene.manifest["candidates"][1]
    assert (entry["lines"], entry["note"]) == ("L13-L15", None)  # not recorded: a dry build
    assert not (shop.root / ".cuedeck" / "code-refs.json").exists()


def test_the_first_scene_records_and_later_ones_label_the_drift(shop: Repo) -> None:
    scene = build_scene(open_workspace(shop.root), "abc123", 2000)
    assert scene.manifest["candidates"][1]["note"] == "recorded now"
    record = json.loads((shop.root / ".cuedeck" / "code-refs.json").read_text(encoding="utf-8"))
    assert list(record["references"][".cuedeck/cards/abc123.md"]) == ["shop/cart.py#Cart.add"]
    shop.write(
        {"shop/cart.py": CART.replace("self.items.get(item, 0)", "self.items.setdefault(item, 0)")}
    )
    shop.commit("setdefault")
    scene = build_scene(open_workspace(shop.root), "abc123", 2000)
    note = scene.manifest["candidates"][1]["note"]
    assert note.startswith("drifted: +1 -1 lines since 20")
    assert f"| direct, {note} |" in scene.text


def test_an_orphaned_reference_is_missing_with_its_new_home_and_strict_fails(shop: Repo) -> None:
    build_scene(open_workspace(shop.root), "abc123", 2000)
    shop.write({"shop/cart.py": CART.replace("    def add(", "    def put(")})
    shop.commit("add is put")
    scene = build_scene(open_workspace(shop.root), "abc123", 2000)
    (missing,) = scene.manifest["missing"]
    assert missing["path"] == ".cuedeck/cards/abc123.md" and missing["line"] == 8
    assert missing["message"].startswith(
        "code reference '@code/shop/cart.py#Cart.add.' orphaned: shop/cart.py has no Cart.add"
    )
    assert missing["message"].endswith(
        "likeliest new home: shop/cart.py#Cart.put (67% of lines alike)"
    )
    result = CliRunner().invoke(make_cli(), ["-C", str(shop.root), "scene", "--strict", "-d"])
    assert result.exit_code == 1
    assert "error[1001]" in result.stderr and "orphaned" in result.stderr


def test_compression_keeps_signatures_and_never_exceeds_the_budget(shop: Repo) -> None:
    shop.write({".cuedeck/cards/abc123.md": card("The cart: @code/shop/cart.py.")})
    workspace = open_workspace(shop.root)
    count = workspace.count_tokens
    placed: dict[str, str] = {}
    for limit in range(240, 700, 12):
        scene = build_scene(workspace, "abc123", limit, record=False)
        assert scene.tokens <= limit and count(scene.text) == scene.tokens
        entry = next(c for c in scene.manifest["candidates"] if c["path"] == "shop/cart.py")
        placed.setdefault(entry["placed"], scene.text)
        if entry["placed"] == "signatures":
            assert entry["reason"].startswith("its signature: the full text needs 178 tokens")
    assert {"dropped", "signatures", "whole"} <= set(placed)
    # A small, well documented file: its signatures are no smaller than the code, so the
    # outermost signature, its docstring's summary and the pointer stand in for it.
    assert (
        "## shop/cart.py · signatures (the full text has 178 tokens)\n\n```python\n"
        "# shop/cart.py:L1-23 as signatures; read_doc shop/cart.py for the full text\n"
        "class Cart  # L4-23\n"
        '    """Items and their quantities."""\n```\n'
    ) in placed["signatures"]
    assert (
        "> [!WARNING]\n> Context truncated: 1 compressed to signatures of" in placed["signatures"]
    )
    assert "; its signature: the full text needs 178 tokens, " in placed["signatures"]


def test_related_code_stays_within_its_share_and_says_why(shop: Repo) -> None:
    shop.write({".cuedeck/config.toml": "[scene]\nclipboard = false\ncode_share = 0.5\n"})
    workspace = open_workspace(shop.root)
    scene = build_scene(workspace, "abc123", 1200, record=False)
    related = [c for c in scene.manifest["candidates"] if c["role"] == "related"]
    assert related and sum(c["tokens"] for c in related) <= 600
    assert all(c["note"].startswith("related: ") for c in related)
    assert "Cart.add" not in [c["anchor"] for c in related]  # cited already
    shop.write({".cuedeck/config.toml": "[scene]\nclipboard = false\ncode_share = 0\n"})
    scene = build_scene(open_workspace(shop.root), "abc123", 1200, record=False)
    assert not [c for c in scene.manifest["candidates"] if c["role"] == "related"]


def test_a_traceback_pulls_in_its_frames(shop: Repo) -> None:
    stack = (
        "Traceback (most recent call last):\n"
        '  File "/srv/app/shop/checkout.py", line 9, in pay\n'
        "    return net + vat(net, country)\n"
        '  File "/srv/app/shop/tax.py", line 7, in vat\n'
        "    return amount * rates[country]\n"
        "KeyError: 'us'\n"
    )
    workspace = open_workspace(shop.root)
    scene = build_scene(workspace, "abc123", 3000, record=False, stack=stack)
    notes = {
        (c["path"], c["anchor"]): c["note"]
        for c in scene.manifest["candidates"]
        if c["role"] == "related"
    }
    # Both frames come first (the card's title, "Fix checkout", puts pay before vat).
    assert list(notes)[:2] == [("shop/checkout.py", "pay"), ("shop/tax.py", "vat")]
    assert "stack .50" in notes[("shop/tax.py", "vat")]  # where it was raised
    assert "stack .30" in notes[("shop/checkout.py", "pay")]  # one frame out: 0.6 of it
    # The same traceback written in the card does the same (its text names vat now).
    shop.write({".cuedeck/cards/abc123.md": card(f"It fails:\n\n```\n{stack}```")})
    scene = build_scene(open_workspace(shop.root), "abc123", 3000, record=False)
    related = [
        (c["path"], c["anchor"]) for c in scene.manifest["candidates"] if c["role"] == "related"
    ]
    assert related[:2] == [("shop/tax.py", "vat"), ("shop/checkout.py", "pay")]


def test_changes_since_a_commit_are_exactly_their_hunks(shop: Repo) -> None:
    start = shop.commit("nothing yet")
    shop.write({"shop/tax.py": TAX.replace('"de": 0.19', '"de": 0.19, "us": 0.0')})
    shop.write(
        {
            "shop/cart.py": CART.replace(
                "        self.items.pop(item, None)\n", "        del self.items[item]\n"
            )
        }
    )
    shop.commit("taxes for the us; remove raises")
    workspace = open_workspace(shop.root)
    scene = build_scene(workspace, "abc123", 4000, record=False, since=start)
    deltas = [p for p in scene.placements if p.item.role == "delta"]
    assert [(p.item.path, p.mode) for p in deltas] == [
        ("shop/cart.py", "delta"),
        ("shop/tax.py", "delta"),
    ]
    assert deltas[1].text == (
        "@@ shop/tax.py L4-L8: +1 -1\n"
        "     4 | def vat(amount: float, country: str) -> float:\n"
        '     5 |     """Value added tax on ``amount``."""\n'
        '-    6 |     rates = {"fr": 0.2, "de": 0.19}\n'
        '+    6 |     rates = {"fr": 0.2, "de": 0.19, "us": 0.0}\n'
        "     7 |     return amount * rates[country]\n"
        "     8 | \n"
        "⋮ 4 unchanged lines"
    )
    assert (
        deltas[0].text.startswith("⋮") is False
        and "-   19 |         self.items.pop(item, None)" in deltas[0].text
    )
    assert scene.manifest["since"] == f"{start} ({start[:12]})"
    assert "## shop/tax.py · changes\n\n```diff\n@@ shop/tax.py L4-L8: +1 -1" in scene.text
    with pytest.raises(UnknownBaseline) as caught:
        build_scene(workspace, "abc123", 4000, record=False, since="no-such-ref")
    assert caught.value.code == 1143


# The whole reply fits the budget: its header and reflects block take about 90 tokens.
@pytest.mark.parametrize("budget", [120, 150, 400, 2000])
def test_the_map_respects_its_budget(shop: Repo, budget: int) -> None:
    workspace = open_workspace(shop.root)
    reply = workspace.plugins.tools()["repo_map"].call(workspace, {"token_limit": budget})
    assert reply["tokens"] <= budget and workspace.count_tokens(reply["text"]) == reply["tokens"]
    assert reply["text"].startswith(
        "# Map of the repository, ranked by references and recent changes\n"
    )
    if budget >= 400:
        assert reply["symbols"] == 8 and reply["files"] == 3
        assert (
            "shop/cart.py:\n  L4-23 class Cart\n    L10-11 def __init__(self) -> None\n"
            in reply["text"]
        )


def test_a_method_shown_without_its_class_says_whose_it_is() -> None:
    from cuedeck.models import RankedSymbol
    from cuedeck_code.repomap import render

    def symbol(name: str, line: int, signature: str) -> RankedSymbol:
        return RankedSymbol("a.py", name, "method", line, line + 1, 10, 1.0, signature=signature)

    text = render(
        [
            symbol("Cart.total", 12, "def total(self) -> float"),
            symbol("Cart.add", 8, "def add(self, item: str) -> None"),
            symbol("Shelf.Slot.take", 30, "def take(self) -> str"),
            symbol("Shelf", 20, "class Shelf"),
            RankedSymbol("b.js", "jquery.min", "module", 1, 2, 10, 1.0),
        ],
        "# Map",
    )
    assert text == (
        "# Map\n\na.py:\n"
        "  ⋮ Cart\n"
        "    L8-9 def add(self, item: str) -> None\n"
        "    L12-13 def total(self) -> float\n"
        "  L20-21 class Shelf\n"
        "    ⋮ Slot\n"
        "      L30-31 def take(self) -> str\n"
        "b.js:\n"
        "  L1-2 module b.js\n"
    )


def test_a_map_for_a_query_or_a_folder(shop: Repo) -> None:
    workspace = open_workspace(shop.root)
    tool = workspace.plugins.tools()["repo_map"]
    reply = tool.call(workspace, {"token_limit": 160, "query": "value added tax"})
    assert reply["personalised_on"] == ["query"]
    assert reply["text"].split("\n")[2] == "shop/tax.py:"
    result = CliRunner().invoke(
        make_cli(), ["-C", str(shop.root), "map", "shop", "-t", "200", "-c", "abc123"]
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("# Map of shop/, ranked for card abc123\n")
    result = CliRunner().invoke(make_cli(), ["-C", str(shop.root), "map", "nowhere"])
    assert result.exit_code != 0 and "error[1004]" in result.stderr


def test_the_map_budget_is_token_limit_as_for_scenes(shop: Repo) -> None:
    """One name for a budget everywhere (`cue scene --token-limit`, the tools'
    token_limit); the map's old `--tokens` still works, unlisted."""

    def tokens_of(*args: str) -> str:
        result = CliRunner().invoke(make_cli(), ["-C", str(shop.root), "map", *args])
        assert result.exit_code == 0, result.output
        return result.stderr.rsplit(", ", 1)[-1].strip()  # "N/LIMIT tokens"

    assert tokens_of("--token-limit", "100").endswith("/100 tokens")
    assert tokens_of("--tokens", "120").endswith("/120 tokens")
    listed = CliRunner().invoke(make_cli(), ["map", "--help"]).stdout
    assert "--token-limit" in listed and "--tokens " not in listed
    assert "--token-limit" in CliRunner().invoke(make_cli(), ["scene", "--help"]).stdout
    both = CliRunner().invoke(
        make_cli(), ["-C", str(shop.root), "map", "--tokens", "100", "--token-limit", "90"]
    )
    assert both.exit_code == 1 and "give --token-limit once" in both.stderr


def test_a_delta_since_a_task_snapshot_shows_exactly_the_changed_hunks(shop: Repo) -> None:
    pytest.importorskip("cuedeck_memory")
    workspace = open_workspace(shop.root)
    tools = workspace.plugins.tools()
    # The task touched tax.py: committed, then snapshotted with what the card cites.
    shop.write({"shop/tax.py": TAX.replace('"de": 0.19', '"de": 0.19, "us": 0.0')})
    shop.commit("taxes for the us")
    made = tools["context_create_task_snapshot"].call(
        workspace,
        {"project_id": "shop", "task_id": "abc123", "files": ["shop/tax.py", "shop/cart.py"]},
    )
    assert sorted(made["files"]) == ["shop/cart.py", "shop/tax.py"]
    assert len(made["commit"]) == 40
    # Work goes on: remove() changes, tax.py does not.
    shop.write(
        {
            "shop/cart.py": CART.replace(
                "        self.items.pop(item, None)\n", "        del self.items[item]\n"
            )
        }
    )
    workspace = open_workspace(shop.root)
    scene = build_scene(workspace, "abc123", 4000, record=False, since=made["snapshot_id"])
    deltas = [p for p in scene.placements if p.item.role == "delta"]
    expected = (
        "@@ shop/cart.py L17-L21: +1 -1\n"
        "    17 |     def remove(self, item: str) -> None:\n"
        '    18 |         """Take ``item`` out of the cart, whatever its quantity."""\n'
        "-   19 |         self.items.pop(item, None)\n"
        "+   19 |         del self.items[item]\n"
        "    20 | \n"
        "    21 |     def total(self, prices: dict[str, float]) -> float:\n"
        "⋮ 2 unchanged lines"
    )
    assert [(p.item.path, p.text) for p in deltas] == [("shop/cart.py", expected)]
    assert scene.manifest["since"].startswith(f"snapshot {made['snapshot_id']} (")
    context = workspace.plugins.tools()["context_get_task_context"].call(
        workspace, {"project_id": "shop", "task_id": "abc123"}
    )
    assert context["snapshot_id"] == made["snapshot_id"]
    assert context["files"] == made["files"]
    assert context["delta"] == [
        {
            "path": "shop/cart.py",
            "status": "modified",
            "summary": "modified: +1 -1 in 1 hunk",
            "hunks": expected,
        }
    ]


def test_a_file_the_snapshot_saw_uncommitted_is_known_only_to_have_changed(shop: Repo) -> None:
    pytest.importorskip("cuedeck_memory")
    shop.write({"shop/tax.py": TAX.replace("0.05", "0.06")})  # touched, not committed
    workspace = open_workspace(shop.root)
    tools = workspace.plugins.tools()
    made = tools["context_create_task_snapshot"].call(
        workspace, {"project_id": "shop", "task_id": "abc123"}
    )
    # By default: the files that differ from HEAD, and what the card cites.
    assert sorted(made["files"]) == ["shop/cart.py", "shop/tax.py"]
    shop.write({"shop/tax.py": TAX.replace("0.05", "0.07")})
    scene = build_scene(
        open_workspace(shop.root), "abc123", 4000, record=False, since=made["snapshot_id"]
    )
    (delta,) = [c for c in scene.manifest["candidates"] if c["role"] == "delta"]
    assert (delta["path"], delta["placed"]) == ("shop/tax.py", "delta")
    assert delta["note"].endswith(": changed (its earlier text is not known)")
