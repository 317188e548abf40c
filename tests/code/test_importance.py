"""Importance on a real repository made here, history included: each part of the score
moves a definition up when its signal is there, and a traceback pulls its frames in."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from cuedeck import open_workspace
from cuedeck.models import CodeQuery, RankedSymbol
from cuedeck.plugins.host import get_code_rankers
from cuedeck_code.frames import frames, resolve
from cuedeck_code.importance import ImportanceRanker, Weights
from tests.code.conftest import Repo
from tests.conftest import needs

#: Four modules alike in size and shape: only the signal under test tells them apart.
FILES = {
    "shop/pricing.py": '''"""Prices."""


def unit_price(item: str) -> float:
    """The price of one item."""
    return 1.0


def discount(total: float) -> float:
    """Money off a large order."""
    return total * 0.1
''',
    "shop/stock.py": '''"""Stock."""


def reserve(item: str) -> bool:
    """Hold one item back."""
    return True


def release(item: str) -> bool:
    """Give a held item back."""
    return True
''',
    "shop/checkout.py": '''"""Checkout."""
from shop.pricing import unit_price


def pay(items: list[str]) -> float:
    """Charge for the items."""
    return sum(unit_price(item) for item in items)


def receipt(items: list[str]) -> str:
    """Print what was bought."""
    return ", ".join(items)
''',
    "shop/shipping.py": '''"""Shipping."""


def parcel(items: list[str]) -> int:
    """How many parcels the items need."""
    return len(items) // 10 + 1


def courier(weight: float) -> str:
    """Who carries a parcel of this weight."""
    return "post"
''',
}


@pytest.fixture
def shop(make_repo: Callable[[dict[str, str]], Repo]) -> Repo:
    return make_repo(FILES)


def ranked(repo: Repo, query: CodeQuery, weights: Weights | None = None) -> list[RankedSymbol]:
    workspace = open_workspace(repo.root)
    ranker = get_code_rankers(workspace.plugins)["importance"]
    if weights is not None:
        ranker = ImportanceRanker(weights)
    return ranker.rank(workspace, query)


def names(found: list[RankedSymbol]) -> list[str]:
    return [f"{r.path}#{r.name}" for r in found]


def parts(found: list[RankedSymbol], key: str) -> dict[str, float]:
    return dict(next(r for r in found if f"{r.path}#{r.name}" == key).parts)


@needs("cuedeck_search")
def test_the_text_part_puts_what_the_card_says_first(shop: Repo) -> None:
    found = ranked(shop, CodeQuery(text="Couriers refuse heavy parcels"), Weights(1, 0, 0, 0))
    assert names(found)[:2] == ["shop/shipping.py#courier", "shop/shipping.py#parcel"]
    assert parts(found, "shop/shipping.py#courier")["text"] == 1.0
    # Naming a definition counts as much as its own words.
    named = ranked(
        shop, CodeQuery(text="Why does unit_price ignore the item?"), Weights(1, 0, 0, 0)
    )
    assert names(named)[0] == "shop/pricing.py#unit_price"


def test_the_graph_part_puts_what_cited_code_uses_first(shop: Repo) -> None:
    query = CodeQuery(cited=(("shop/checkout.py", "pay"),))
    without = ranked(shop, CodeQuery(), Weights(0, 1, 0, 0))
    found = ranked(shop, query, Weights(0, 1, 0, 0))
    # checkout.py mentions unit_price (and imports pricing): the walk starts there.
    assert names(found)[0] == "shop/pricing.py#unit_price"
    assert parts(found, "shop/pricing.py#unit_price")["graph"] == 1.0
    # stock.py is neither mentioned nor imported by checkout.py: nothing points at it.
    assert not [name for name in names(found) if name.startswith("shop/stock.py")]
    # The cited definition itself is personalisation, not a result.
    assert "shop/checkout.py#pay" not in names(found)
    # Without the citation the walk starts anywhere: unit_price is second, far behind.
    assert names(without)[:2] == ["shop/shipping.py#parcel", "shop/pricing.py#unit_price"]
    assert parts(without, "shop/pricing.py#unit_price")["graph"] < 0.05


def test_the_recent_part_puts_what_git_changed_lately_first(shop: Repo) -> None:
    for n in range(3):
        shop.write(
            {
                "shop/stock.py": FILES["shop/stock.py"].replace(
                    "return True\n\n\n", f"return {n} > -1\n\n\n"
                )
            }
        )
        shop.commit(f"reserve, take {n}", when=f"2026-02-0{n + 1}T10:00:00")
    found = ranked(shop, CodeQuery(), Weights(0, 0, 1, 0))
    assert names(found)[0] == "shop/stock.py#reserve"
    recent = parts(found, "shop/stock.py#reserve")["recent"]
    assert recent == 1.0
    # Every definition was written by the first commit; reserve changed three times since.
    first = parts(found, "shop/shipping.py#courier")["recent"]
    assert 0 < first == parts(found, "shop/stock.py#release")["recent"] < recent


def test_the_stack_part_puts_the_raising_frame_first(shop: Repo) -> None:
    stack = (
        "Traceback (most recent call last):\n"
        '  File "/srv/app/shop/checkout.py", line 6, in pay\n'
        '  File "/srv/app/shop/shipping.py", line 11, in courier\n'
        "ValueError: too heavy\n"
    )
    found = ranked(shop, CodeQuery(stack=stack), Weights(0, 0, 0, 1))
    assert names(found)[:2] == ["shop/shipping.py#courier", "shop/checkout.py#pay"]
    assert parts(found, "shop/shipping.py#courier")["stack"] == 1.0
    assert parts(found, "shop/checkout.py#pay")["stack"] == pytest.approx(0.6)


@needs("cuedeck_search")
def test_the_default_weights_add_the_parts_up(shop: Repo) -> None:
    found = ranked(shop, CodeQuery(text="courier for heavy parcels", limit=3))
    # Only what the words find: the rest has recent changes alone, which say nothing.
    assert len(found) == 2
    for entry in found:
        assert entry.score == pytest.approx(sum(value for _, value in entry.parts), abs=1e-5)
    assert names(found)[:2] == ["shop/shipping.py#courier", "shop/shipping.py#parcel"]
    assert found[0].why().startswith("text ")
    assert found[0].signature == "def courier(weight: float) -> str"
    assert found[0].docstring == "Who carries a parcel of this weight."


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            'Traceback (most recent call last):\n  File "/a/shop/cart.py", line 12, in add\n',
            [("python", "/a/shop/cart.py", 12, 0)],
        ),
        (
            "tests/test_cart.py:8: in test_add\nshop/cart.py:12: ValueError\n",
            [("pytest", "tests/test_cart.py", 8, 1), ("pytest", "shop/cart.py", 12, 0)],
        ),
        (
            "TypeError: x\n    at Cart.add (/srv/src/cart.js:12:5)\n    at /srv/src/index.js:3:1\n",
            [("node", "/srv/src/cart.js", 12, 0), ("node", "/srv/src/index.js", 3, 1)],
        ),
        (
            "goroutine 1 [running]:\nmain.add()\n\t/home/u/shop/cart.go:12 +0x1d\n",
            [("go", "/home/u/shop/cart.go", 12, 0)],
        ),
        ("thread 'main' panicked at src/cart.rs:12:5:\nboom\n", [("rust", "src/cart.rs", 12, 0)]),
        (
            "java.lang.IllegalStateException\n\tat com.acme.shop.Cart.add(Cart.java:12)\n",
            [("java", "Cart.java", 12, 0)],
        ),
    ],
)
def test_stack_formats(text: str, expected: list[tuple[str, str, int, int]]) -> None:
    assert [(f.format, f.path, f.line, f.depth) for f in frames(text)] == expected


def test_frames_resolve_onto_indexed_paths() -> None:
    paths = {"shop/cart.py", "src/main/java/com/acme/shop/Cart.java", "lib/cart.py"}
    python, java = frames(
        '  File "/srv/app/shop/cart.py", line 3, in add\n'
        "\tat com.acme.shop.Cart.add(Cart.java:12)\n"
    )
    assert resolve(python, paths) == "shop/cart.py"
    assert resolve(java, paths) == "src/main/java/com/acme/shop/Cart.java"
    (elsewhere,) = frames('  File "/usr/lib/python3/json/decoder.py", line 3, in x\n')
    assert resolve(elsewhere, paths) is None
