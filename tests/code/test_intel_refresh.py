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


#: Every edge by file and name (ids differ between builds).
EDGES_BY_NAME = (
    "SELECT fs.path, s.name, fd.path, d.name, e.pos, e.relation FROM edges e "
    "JOIN names s ON s.id = e.src JOIN files fs ON fs.id = s.file "
    "JOIN names d ON d.id = e.dst JOIN files fd ON fd.id = d.file"
)


def graph(root: Path) -> set[tuple[Any, ...]]:
    """Every edge of the workspace's graph by file and name (ids differ between builds)."""
    import cuedeck

    workspace = cuedeck.open_workspace(root)
    store = workspace.service("code_intel").ready()
    rows = store.query(EDGES_BY_NAME)
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
        rows = intel.store.query(EDGES_BY_NAME)
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
    assert _rows_of(root) == _rows_of(other)  # names and bindings too, not only edges


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


SCOPES = {
    "shop/base.py": FILES["shop/base.py"],
    "shop/discount.py": FILES["shop/discount.py"],
    "shop/__init__.py": FILES["shop/__init__.py"],
    "orders.py": (
        "from shop.base import Store\n"
        "from shop.discount import DiscountStore\n"
        "\n"
        "\n"
        "def first(cart):\n"
        "    return Store().checkout(cart)\n"
        "\n"
        "\n"
        "def outer(cart):\n"
        "    shop = Store()\n"
        "\n"
        "    def inner():\n"
        "        return shop.price(cart)\n"
        "\n"
        "    return inner()\n"
        "\n"
        "\n"
        "def last(cart):\n"
        "    return total(cart)\n"
    ),
}


def test_a_refresh_keeps_only_the_edges_of_definitions_that_resolve_as_before(
    make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    """One file edited again and again: the definitions whose chains and scopes did not
    change keep their edges (moved with their lines), the others are resolved again,
    and the graph is the cold build's after every step."""
    import cuedeck

    root = make_workspace(SCOPES)
    workspace = cuedeck.open_workspace(root)
    intel = workspace.service("code_intel")
    intel.ready()
    other = tmp_path / "cold"
    orders = SCOPES["orders.py"]

    def step(text: str) -> set[tuple[Any, ...]]:
        (root / "orders.py").write_text(text, encoding="utf-8")
        workspace.refresh()
        intel.ready()
        assert intel.last is not None and intel.last.read == 1
        rows = intel.store.query(EDGES_BY_NAME)
        assert set(rows) == cold(root, other)
        return {row[:4] for row in rows}

    def line_of(edge: tuple[str, str, str, str]) -> set[int]:
        return {row[4] // 4096 for row in graph(root) if row[:4] == edge}

    first = ("orders.py", "first", "shop/base.py", "Store.checkout")
    assert line_of(first) == {6}
    # Lines move above every definition: all keep their edges, one line further down.
    step("# orders\n" + orders)
    assert intel.last is not None and intel.last.kept == 4
    assert line_of(first) == {7}
    # A local of the enclosing function changes: the nested function's own text did
    # not, but what its chain names did.
    edges = step("# orders\n" + orders.replace("shop = Store()", "shop = DiscountStore()"))
    assert ("orders.py", "outer.inner", "shop/discount.py", "DiscountStore.price") in edges
    assert ("orders.py", "outer.inner", "shop/base.py", "Store.price") not in edges
    assert intel.last is not None and intel.last.kept == 3  # first, last, the imports
    # A function comes that a kept definition named before it existed, then goes.
    added = orders + "\n\ndef total(cart):\n    return sum(cart)\n"
    assert ("orders.py", "last", "orders.py", "total") in step(added)
    assert ("orders.py", "last", "orders.py", "total") not in step(orders)
    # A function renamed: its own edges go with it, the others stay.
    edges = step(orders.replace("def first(", "def opening("))
    assert ("orders.py", "opening", "shop/base.py", "Store.checkout") in edges
    assert not {edge for edge in edges if edge[1] == "first"}


def test_owner_digests_are_the_same_in_another_process(make_workspace: MakeWorkspace) -> None:
    """The digests a cold build's worker writes are the ones a refresh in another
    process computes for the same text (another hash seed): else nothing is kept."""
    import json
    import os
    import subprocess
    import sys

    from cuedeck_code.intel.extract import SyntacticExtractor
    from cuedeck_code.intel.owners import owner_digests

    root = make_workspace(SCOPES)
    paths = frozenset(SCOPES)
    facts = SyntacticExtractor().facts("orders.py", (root / "orders.py").read_bytes(), paths)
    assert facts is not None
    here = owner_digests(facts)
    assert {"", "first", "outer", "outer.inner", "last"} <= set(here)
    script = (
        "import json, sys\n"
        "from cuedeck_code.intel.owners import owner_digests\n"
        "print(json.dumps(owner_digests(json.loads(sys.stdin.read()))))\n"
    )
    seeded = {**os.environ, "PYTHONHASHSEED": "12345"}
    done = subprocess.run(
        [sys.executable, "-c", script],
        input=json.dumps(facts),
        capture_output=True,
        text=True,
        check=True,
        env=seeded,
    )
    assert json.loads(done.stdout) == here


GO = {
    "go.mod": "module example.com/shop\n\ngo 1.21\n",
    "store/client.go": (
        "package store\n"
        "\n"
        "type Client struct{}\n"
        "\n"
        "func (c *Client) Send() {}\n"
        "\n"
        "var Default Client\n"
    ),
    "store/run.go": "package store\n\nfunc Run() {\n\tDefault.Send()\n}\n",
}


def test_a_shared_namespace_refreshes_as_a_cold_build_does(
    make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    """Go's package is one namespace for its files: a typed name one file binds is read
    by another (their bindings rows), and a refresh of either ends as a cold build."""
    import cuedeck

    root = make_workspace(GO)
    workspace = cuedeck.open_workspace(root)
    intel = workspace.service("code_intel")
    intel.ready()
    other = tmp_path / "cold"
    run = ("store/run.go", "Run", "store/client.go", "Client.Send")
    assert run in {row[:4] for row in graph(root)}
    for path, text in (
        ("store/run.go", GO["store/run.go"].replace("func Run", "// run\nfunc Run")),
        ("store/client.go", GO["store/client.go"].replace("Send", "Post")),
        ("store/run.go", GO["store/run.go"].replace("Send", "Post")),
    ):
        (root / path).write_text(text, encoding="utf-8")
        workspace.refresh()
        intel.ready()
        assert graph(root) == cold(root, other)
    assert ("store/run.go", "Run", "store/client.go", "Client.Post") in {
        row[:4] for row in graph(root)
    }


def _rows_of(root: Path) -> set[tuple[Any, ...]]:
    """What the graph holds of each file apart from edges: its interface digest, its
    bindings (imports and typed names) and its definitions, by path and name."""
    import cuedeck

    store = cuedeck.open_workspace(root).service("code_intel").ready()
    rows = set(store.query(
        "SELECT f.path, f.interface, b.data FROM files f LEFT JOIN bindings b ON b.file = f.id"
    ))  # fmt: skip
    rows |= set(store.query(
        "SELECT f.path, n.name, n.kind, n.line, n.extra FROM names n JOIN files f ON f.id = n.file"
    ))  # fmt: skip
    store.close()
    return rows


def test_a_file_whose_imports_now_resolve_is_written_as_a_cold_build_writes_it(
    make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    import cuedeck

    root = make_workspace({"app.py": FILES["app.py"]})  # shop/ does not exist yet
    workspace = cuedeck.open_workspace(root)
    intel = workspace.service("code_intel")
    intel.ready()
    for path in ("shop/base.py", "shop/discount.py", "shop/__init__.py"):
        (root / path).parent.mkdir(exist_ok=True)
        (root / path).write_text(FILES[path])
    workspace.refresh()
    intel.sync()  # app.py is read again: its imports now name shop's modules
    assert graph(root) == cold(root, tmp_path / "cold")
    assert _rows_of(root) == _rows_of(tmp_path / "cold")


SHOP = "class Store:\n    def checkout(self):\n        return 1\n"
RESOLVE = """
import json, pathlib
from cuedeck import open_workspace
from cuedeck.system import parallel
from cuedeck_code.intel import service

service.FORKED = 10
forked = []
original = parallel._forked
parallel._forked = lambda *args: forked.append(args[1]) or original(*args)
root = pathlib.Path(ROOT)
workspace = open_workspace(root)
intel = workspace.service("code_intel")
intel.ready()
cold = sorted(intel.store.query(EDGES))
(root / "shop.py").write_text(SHOP + "    def total(self):\\n        return 2\\n")
workspace.refresh()
intel.ready()
print(json.dumps({
    "forked": [len(items) for items in forked], "resolved": intel.last.resolved,
    "cold": cold, "refreshed": sorted(intel.store.query(EDGES)),
}))
"""


def test_files_resolved_by_forked_workers_give_the_edges_resolved_here(
    make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    """Chains resolved in forked workers (a cold build, then a refresh that resolves
    every file using the one edited again) give the edges resolving them here gives."""
    from tests.conftest import run_script

    files = {"shop.py": SHOP}
    for k in range(24):
        files[f"use{k}.py"] = (
            "from shop import Store\n\n\n"
            f"def buy{k}():\n    return Store().checkout()\n\n\n"
            f"class Till{k}(Store):\n    def ring(self):\n        return self.total()\n"
        )
    roots = [make_workspace(files) for _ in range(2)]

    def build(root: Path, workers: str) -> Any:
        script = RESOLVE.replace("ROOT", repr(str(root))).replace("EDGES", repr(EDGES_BY_NAME))
        return run_script(script.replace("SHOP", repr(SHOP)), CUEDECK_WORKERS=workers)

    forked, here = build(roots[0], "2"), build(roots[1], "1")
    # The cold build's 25 files, then the edited file and its 24 users: in workers there.
    assert (forked.pop("forked"), here.pop("forked")) == ([25, 25], [])
    assert forked == here and forked["resolved"] == 25
    refreshed = {tuple(row) for row in forked["refreshed"]}
    assert ("use7.py", "Till7.ring", "shop.py", "Store.total") in {r[:4] for r in refreshed}
    assert refreshed == cold(roots[0], tmp_path / "cold")
