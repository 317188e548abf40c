"""The code graph kept in step by refreshes in one long-lived process (as a server
keeps it: its file list, languages and looked-up names cached between refreshes) ends
where a cold build of the same files ends, after body edits, a new function, a rename,
a removed file and a new one, and when another process wrote the graph in between."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import MakeWorkspace

pytest.importorskip("cuedeck_code")

FILES = {
    "shop/base.py": (
        "class Store:\n"
        "    def checkout(self, cart):\n"
        "        total = self.price(cart)\n"
        "        return total\n"
        "\n"
        "    def price(self, cart):\n"
        "        return sum(cart)\n"
    ),
    "shop/discount.py": (
        "from .base import Store\n"
        "\n"
        "\n"
        "class DiscountStore(Store):\n"
        "    def price(self, cart):\n"
        "        return super().price(cart) * 0.9\n"
    ),
    "shop/__init__.py": "from .base import Store as Store\nfrom .discount import *\n",
    "app.py": (
        "from shop import Store as Shop\n"
        "from shop import DiscountStore\n"
        "from shop.base import Store\n"
        "\n"
        "\n"
        "def main(items: list[int]) -> float:\n"
        "    store = Shop()\n"
        "    store.checkout(items)\n"
        "    cheap: DiscountStore = DiscountStore()\n"
        "    return cheap.price(items)\n"
    ),
}


def graph(root: Path) -> set[tuple[Any, ...]]:
    """Every edge of the workspace's graph by file and name (ids differ between builds)."""
    import cuedeck

    workspace = cuedeck.open_workspace(root)
    store = workspace.service("code_intel").ready()
    rows = store.query(
        "SELECT fs.path, s.name, fd.path, d.name, e.pos, e.relation FROM edges e "
        "JOIN names s ON s.id = e.src JOIN files fs ON fs.id = s.file "
        "JOIN names d ON d.id = e.dst JOIN files fd ON fd.id = d.file"
    )
    store.close()
    return set(rows)


def cold(root: Path, into: Path) -> set[tuple[Any, ...]]:
    """The graph a cold build of ``root``'s files makes (in a copy, no graph yet)."""
    shutil.rmtree(into, ignore_errors=True)
    shutil.copytree(root, into, ignore=shutil.ignore_patterns(".cache"))
    return graph(into)


def test_refreshes_in_one_process_end_where_a_cold_build_does(
    make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    import cuedeck

    root = make_workspace(FILES)
    workspace = cuedeck.open_workspace(root)
    intel = workspace.service("code_intel")
    intel.ready()
    other = tmp_path / "cold"

    def step(path: str, text: str | None) -> None:
        target = root / path
        if text is None:
            target.unlink()
        else:
            target.write_text(text, encoding="utf-8")
        workspace.refresh()
        intel.ready()

    def held() -> set[tuple[Any, ...]]:
        rows = intel.store.query(
            "SELECT fs.path, s.name, fd.path, d.name, e.pos, e.relation FROM edges e "
            "JOIN names s ON s.id = e.src JOIN files fs ON fs.id = s.file "
            "JOIN names d ON d.id = e.dst JOIN files fd ON fd.id = d.file"
        )
        return set(rows)

    base = FILES["shop/base.py"]
    checkout = ("app.py", "main", "shop/base.py", "Store.checkout")
    assert checkout in {row[:4] for row in held()}
    # A body edit: lines move, the interface stays.
    step("shop/base.py", "# a comment\n" + base.replace("sum(cart)", "sum(cart) + 0"))
    assert held() == cold(root, other)
    # A new function, used by a file that called nothing by that name before.
    step("shop/base.py", base + "\n\ndef tax(x):\n    return x\n")
    step("app.py", FILES["app.py"] + "\n\ndef total():\n    return tax(1)\n")
    assert held() == cold(root, other)
    step("app.py", FILES["app.py"].replace("import Store\n", "import Store, tax\n") +
         "\n\ndef total():\n    return tax(1)\n")  # fmt: skip
    assert ("app.py", "total", "shop/base.py", "tax") in {row[:4] for row in held()}
    assert held() == cold(root, other)
    # A rename: the caller's edge goes, and comes back when the caller follows.
    step("shop/base.py", base.replace("checkout", "pay") + "\n\ndef tax(x):\n    return x\n")
    assert checkout not in {row[:4] for row in held()}
    assert held() == cold(root, other)
    step("app.py", (root / "app.py").read_text().replace("checkout", "pay"))
    assert ("app.py", "main", "shop/base.py", "Store.pay") in {row[:4] for row in held()}
    assert held() == cold(root, other)
    # A removed file: nothing points into it or out of it; a new one is read.
    step("shop/discount.py", None)
    assert not {row for row in held() if "shop/discount.py" in (row[0], row[2])}
    assert held() == cold(root, other)
    step("shop/discount.py", FILES["shop/discount.py"])
    assert ("app.py", "main", "shop/discount.py", "DiscountStore.price") in {
        row[:4] for row in held()
    }
    assert held() == cold(root, other)


def test_a_graph_another_process_wrote_is_read_again(make_workspace: MakeWorkspace) -> None:
    import cuedeck

    root = make_workspace(FILES)
    first = cuedeck.open_workspace(root)
    intel = first.service("code_intel")
    intel.ready()
    # Another process (its own workspace and connection) refreshes after a rename.
    base = root / "shop/base.py"
    base.write_text(FILES["shop/base.py"].replace("checkout", "pay"), encoding="utf-8")
    assert ("app.py", "main", "shop/base.py", "Store.checkout") not in {
        row[:4] for row in graph(root)
    }
    # This one catches up with the files and ids the other wrote, then edits again.
    first.refresh()
    intel.ready()
    base.write_text(FILES["shop/base.py"], encoding="utf-8")
    first.refresh()
    intel.ready()
    names = intel.store.query("SELECT n.name FROM names n JOIN files f ON f.id = n.file "
                              "WHERE f.path = 'shop/base.py'")  # fmt: skip
    assert ("Store.checkout",) in names and ("Store.pay",) not in names
    assert ("app.py", "main", "shop/base.py", "Store.checkout") in {row[:4] for row in graph(root)}
