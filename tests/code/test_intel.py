"""The syntactic code graph on real code of every indexed language: a call through an
import alias, a method called on ``self``/``this``, an overridden method, a re-export,
each answered by the scip_* tools as a program calls them; kept fresh by a refresh."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import MakeWorkspace

pytest.importorskip("cuedeck_code")

CUE = str(Path(sys.executable).with_name("cue"))


def call(root: Path, tool: str, **arguments: Any) -> Any:
    import cuedeck

    workspace = cuedeck.open_workspace(root)
    return workspace.plugins.tools()[tool].call(workspace, arguments)


def sites(root: Path, symbol: str, **more: Any) -> set[tuple[str, int, str]]:
    """``(file, line, relationship)`` of each reference to ``symbol``."""
    found = call(root, "scip_references", symbol=symbol, exact=True, **more)
    return {(r["file_path"], r["line"], r["relationship"]) for r in found["results"]}


PYTHON = {
    "shop/base.py": (
        "class Store:\n"  # 1
        "    def checkout(self, cart):\n"  # 2
        "        total = self.price(cart)\n"  # 3
        "        return total\n"  # 4
        "\n"
        "    def price(self, cart):\n"  # 6
        "        return sum(cart)\n"  # 7
    ),
    "shop/discount.py": (
        "from .base import Store\n"  # 1
        "\n"
        "\n"
        "class DiscountStore(Store):\n"  # 4
        "    def price(self, cart):\n"  # 5
        "        return super().price(cart) * 0.9\n"  # 6
    ),
    "shop/__init__.py": "from .base import Store as Store\nfrom .discount import *\n",
    "app.py": (
        "from shop import Store as Shop\n"  # 1
        "from shop import DiscountStore\n"  # 2
        "\n"
        "\n"
        "def main(items: list[int]) -> float:\n"  # 5
        "    store = Shop()\n"  # 6
        "    store.checkout(items)\n"  # 7
        "    cheap: DiscountStore = DiscountStore()\n"  # 8
        "    return cheap.price(items)\n"  # 9
    ),
}


def test_python(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(PYTHON)
    # Through the alias and the package's re-export, to the definition in base.py.
    assert ("app.py", 7, "call") in sites(root, "Store.checkout")
    assert ("app.py", 6, "call") in sites(root, "Store")
    assert ("app.py", 1, "import") in sites(root, "Store")
    # self.price resolves to Store.price; super().price in the override too.
    assert sites(root, "Store.price") >= {
        ("shop/base.py", 3, "call"),
        ("shop/discount.py", 6, "call"),
    }
    # The override is called on an instance of the subclass: DiscountStore.price.
    assert ("app.py", 9, "call") in sites(root, "DiscountStore.price")
    assert ("app.py", 9, "call") not in sites(root, "Store.price")
    dependents = call(root, "scip_dependents", symbol="Store", exact=True)
    assert {"shop.discount/DiscountStore#", "app/main()"} <= {
        r["symbol"] for r in dependents["results"]
    }
    chain = call(root, "scip_callchain", from_symbol="main", to_symbol="Store.price")
    assert chain["chains"][0]["length"] == 2
    assert [s["symbol"] for s in chain["chains"][0]["path"]] == [
        "app/main()",
        "shop.base/Store#checkout()",
        "shop.base/Store#price()",
    ]
    assert "shop.base/Store#price() (shop/base.py:6)" in chain["text"]


TYPESCRIPT = {
    "src/base.ts": (
        "export class Store {\n"  # 1
        "  checkout(cart: number[]): number {\n"  # 2
        "    return this.price(cart);\n"  # 3
        "  }\n"
        "  price(cart: number[]): number {\n"  # 5
        "    return cart.length;\n"
        "  }\n"
        "}\n"
    ),
    "src/discount.ts": (
        "import { Store } from './base';\n"  # 1
        "export class DiscountStore extends Store {\n"  # 2
        "  price(cart: number[]): number {\n"  # 3
        "    return super.price(cart) * 0.9;\n"  # 4
        "  }\n"
        "}\n"
    ),
    "src/index.ts": "export { Store as Shop } from './base';\nexport * from './discount';\n",
    "src/app.ts": (
        "import { Shop as S, DiscountStore } from './index';\n"  # 1
        "export function main(items: number[]): number {\n"  # 2
        "  const store = new S();\n"  # 3
        "  store.checkout(items);\n"  # 4
        "  const cheap: DiscountStore = new DiscountStore();\n"  # 5
        "  return cheap.price(items);\n"  # 6
        "}\n"
    ),
}


@pytest.mark.parametrize("suffix", [".ts", ".tsx", ".js"])
def test_scripts(make_workspace: MakeWorkspace, suffix: str) -> None:
    files = {}
    for path, text in TYPESCRIPT.items():
        if suffix == ".js":  # the same code without its types
            for typed in (": number[]", ": number", ": DiscountStore"):
                text = text.replace(typed, "")
        files[path.replace(".ts", suffix)] = text
    root = make_workspace(files)
    app = f"src/app{suffix}"
    assert (app, 4, "call") in sites(root, "Store.checkout")
    assert (app, 3, "call") in sites(root, "Store")
    base, discount = f"src/base{suffix}", f"src/discount{suffix}"
    assert sites(root, "Store.price") >= {(base, 3, "call"), (discount, 4, "call")}
    assert (app, 6, "call") in sites(root, "DiscountStore.price")
    assert (discount, 2, "inherit") in sites(root, "Store")


def test_go(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(
        {
            "go.mod": "module example.com/shop\n",
            "store/store.go": (
                "package store\n"  # 1
                "\n"
                "type Store struct{}\n"  # 3
                "\n"
                "func New() *Store { return &Store{} }\n"  # 5
                "\n"
                "func (s *Store) Checkout(cart []int) int {\n"  # 7
                "\treturn s.Price(cart)\n"  # 8
                "}\n"
                "\n"
                "func (s *Store) Price(cart []int) int { return len(cart) }\n"  # 11
            ),
            "store/alias.go": (
                "package store\n\n// Shop is Store under another name.\ntype Shop = Store\n"
            ),
            "main.go": (
                "package main\n"  # 1
                "\n"
                'import shop "example.com/shop/store"\n'  # 3
                "\n"
                "func main() {\n"  # 5
                "\ts := shop.New()\n"  # 6
                "\tvar t *shop.Store\n"  # 7
                "\tt.Price(nil)\n"  # 8
                "\t_ = s\n"
                "}\n"
            ),
        }
    )
    assert ("main.go", 6, "call") in sites(root, "New")  # through the import alias
    assert ("store/store.go", 8, "call") in sites(root, "Store.Price")  # the receiver
    assert ("main.go", 8, "call") in sites(root, "Store.Price")  # a typed variable
    assert ("store/alias.go", 4, "type") in sites(root, "Store")


def test_rust(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(
        {
            "src/lib.rs": "mod store;\npub use store::Store as Shop;\n",
            "src/store.rs": (
                "pub trait Priced {\n"  # 1
                "    fn price(&self) -> u32 { 0 }\n"  # 2
                "}\n"
                "pub struct Store;\n"  # 4
                "impl Store {\n"  # 5
                "    pub fn new() -> Store { Store }\n"  # 6
                "    pub fn checkout(&self) -> u32 { self.total() }\n"  # 7
                "    fn total(&self) -> u32 { 1 }\n"  # 8
                "}\n"
                "impl Priced for Store {\n"  # 10
                "    fn price(&self) -> u32 { 2 }\n"  # 11
                "}\n"
            ),
            "src/main.rs": (
                "use crate::store::Store as S;\n"  # 1
                "fn main() {\n"  # 2
                "    let s = S::new();\n"  # 3
                "    s.checkout();\n"  # 4
                "}\n"
            ),
        }
    )
    assert ("src/main.rs", 3, "call") in sites(root, "Store.new")  # through `as S`
    assert ("src/main.rs", 4, "call") in sites(root, "Store.checkout")
    assert ("src/store.rs", 7, "call") in sites(root, "Store.total")  # self.total()
    assert ("src/lib.rs", 2, "import") in sites(root, "Store")  # the re-export
    definitions = call(root, "scip_definition", symbol="price")
    assert {r["name"] for r in definitions["results"]} == {"Priced.price", "Store.price"}


def test_java(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(
        {
            "src/com/shop/Store.java": (
                "package com.shop;\n"  # 1
                "public class Store {\n"  # 2
                "    public int checkout(int[] cart) { return price(cart); }\n"  # 3
                "    public int price(int[] cart) { return cart.length; }\n"  # 4
                "}\n"
            ),
            "src/com/shop/DiscountStore.java": (
                "package com.shop;\n"  # 1
                "public class DiscountStore extends Store {\n"  # 2
                "    @Override\n"
                "    public int price(int[] cart) { return super.price(cart) - 1; }\n"  # 4
                "}\n"
            ),
            "src/com/app/App.java": (
                "package com.app;\n"  # 1
                "import com.shop.DiscountStore;\n"  # 2
                "public class App {\n"  # 3
                "    public static void main(String[] args) {\n"  # 4
                "        DiscountStore store = new DiscountStore();\n"  # 5
                "        store.checkout(new int[0]);\n"  # 6
                "        store.price(new int[0]);\n"  # 7
                "    }\n"
                "}\n"
            ),
        }
    )
    assert ("src/com/shop/Store.java", 3, "call") in sites(root, "Store.price")  # this, implied
    assert ("src/com/shop/DiscountStore.java", 4, "call") in sites(root, "Store.price")
    assert ("src/com/app/App.java", 6, "call") in sites(root, "Store.checkout")  # inherited
    assert ("src/com/app/App.java", 7, "call") in sites(root, "DiscountStore.price")
    assert ("src/com/shop/DiscountStore.java", 2, "inherit") in sites(root, "Store")


def test_c_and_cpp(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(
        {
            "util.h": "int add(int a, int b);\n",
            "util.c": '#include "util.h"\nint add(int a, int b) { return a + b; }\n',
            "main.c": '#include "util.h"\nint main(void) { return add(1, 2); }\n',
            "shape.hpp": (
                "class Shape {\n"  # 1
                "public:\n"
                "    virtual double area() { return 0; }\n"  # 3
                "    double twice() { return this->area() * 2; }\n"  # 4
                "};\n"
                "class Circle : public Shape {\n"  # 6
                "public:\n"
                "    double area() override { return 3; }\n"  # 8
                "};\n"
            ),
            "main.cpp": (
                '#include "shape.hpp"\n'  # 1
                "int run() {\n"  # 2
                "    Circle c;\n"  # 3
                "    return c.twice() + c.area();\n"  # 4
                "}\n"
            ),
        }
    )
    assert ("main.c", 2, "call") in sites(root, "add")
    assert ("shape.hpp", 4, "call") in sites(root, "Shape.area")  # this->area()
    assert ("main.cpp", 4, "call") in sites(root, "Shape.twice")  # inherited
    assert ("main.cpp", 4, "call") in sites(root, "Circle.area")  # the override
    assert ("shape.hpp", 6, "inherit") in sites(root, "Shape")


def test_ruby(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(
        {
            "lib/store.rb": (
                "class Store\n"  # 1
                "  def checkout(cart)\n"  # 2
                "    price(cart)\n"  # 3
                "  end\n"
                "  def price(cart)\n"  # 5
                "    cart.size\n"
                "  end\n"
                "end\n"
            ),
            "lib/discount_store.rb": (
                "require_relative 'store'\n"  # 1
                "class DiscountStore < Store\n"  # 2
                "  def price(cart)\n"  # 3
                "    self.checkout(cart)\n"  # 4
                "  end\n"
                "end\n"
            ),
            "app.rb": "require_relative 'lib/discount_store'\nDiscountStore.new.checkout([1])\n",
        }
    )
    assert ("lib/store.rb", 3, "call") in sites(root, "Store.price")  # self, implied
    assert ("lib/discount_store.rb", 4, "call") in sites(root, "Store.checkout")  # inherited
    assert ("lib/discount_store.rb", 2, "inherit") in sites(root, "Store")
    assert ("app.rb", 2, "reference") in sites(root, "DiscountStore")


def test_the_graph_follows_a_refresh(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(PYTHON)
    assert ("app.py", 7, "call") in sites(root, "Store.checkout")
    # checkout renamed: the file that called it is resolved again, the edge is gone.
    base = root / "shop/base.py"
    base.write_text(base.read_text().replace("checkout", "pay"), encoding="utf-8")
    from cuedeck.errors import FileNotFound

    with pytest.raises(FileNotFound) as caught:
        call(root, "scip_references", symbol="Store.checkout", exact=True)
    assert caught.value.code == 1001
    assert sites(root, "Store.pay") == set()
    app = root / "app.py"
    app.write_text(app.read_text().replace("checkout", "pay"), encoding="utf-8")
    assert ("app.py", 7, "call") in sites(root, "Store.pay")


def test_impact_context_and_call_graph(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(PYTHON)
    impact = call(root, "scip_impact", symbol="Store.price", depth=2, exact=True)
    depths = {a["symbol"]: a["depth"] for a in impact["affected_symbols"]}
    assert depths["shop.base/Store#checkout()"] == 1
    assert depths["app/main()"] == 2
    assert {f["path"] for f in impact["affected_files"]} >= {"app.py", "shop/base.py"}
    shallow = call(root, "scip_impact", symbol="Store.price", depth=1, exact=True)
    assert "app/main()" not in {a["symbol"] for a in shallow["affected_symbols"]}
    context = call(root, "scip_context", symbol="Store.checkout", exact=True)
    assert context["files"][0]["path"] == "shop/base.py"
    assert context["files"][0]["read_priority"] == 1
    graph = call(root, "scip_call_graph", symbol="Store.checkout", exact=True)
    assert [n["symbol"] for n in graph["callers"]] == ["app/main()"]
    assert [n["symbol"] for n in graph["callees"]] == ["shop.base/Store#price()"]
    assert graph["text"].splitlines()[0] == "shop.base/Store#checkout() (shop/base.py:2)"
    definition = call(root, "scip_definition", symbol="Stor")  # fuzzy: names holding it
    assert {r["name"] for r in definition["results"]} >= {"Store", "DiscountStore"}
    status = call(root, "scip_status")
    assert status["files"] == 4 and status["edges"]["syntactic"] > 0


def test_a_missing_indexer_is_a_note(
    make_workspace: MakeWorkspace, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    root = make_workspace(PYTHON)
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no indexer on this machine
    reply = call(root, "scip_generate", wait=True)
    entries = {e["name"]: e for e in reply["indexers"]}
    assert reply["state"] == "done"
    assert entries["scip-python"]["state"] == "missing"
    assert "npm install -g @sourcegraph/scip-python" in entries["scip-python"]["note"]
    assert entries["scip-go"]["state"] == "skipped"
    assert ("app.py", 7, "call") in sites(root, "Store.checkout")  # the syntactic graph


@pytest.mark.slow
@pytest.mark.skipif(
    shutil.which("scip-python") is None,
    reason="scip-python is not installed (npm install -g @sourcegraph/scip-python; "
    ".ci/run installs it when npm is there)",
)
def test_a_real_scip_python_index(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(PYTHON)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    done = subprocess.run(
        [CUE, "-C", str(root), "index", "--scip", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    graph = json.loads(done.stdout)["code_graph"]
    python = next(e for e in graph["scip"] if e["name"] == "scip-python")
    assert python["state"] == "done" and python["documents"] == 4
    found = call(root, "scip_references", symbol="Store.price", exact=True)
    precise = {
        (r["file_path"], r["line"], r["relationship"], r["source"]) for r in found["results"]
    }
    assert ("shop/base.py", 3, "call", "scip") in precise  # self.price
    assert ("shop/discount.py", 6, "call", "scip") in precise  # super().price
    status = call(root, "scip_status")
    assert status["precise_files"] == 4 and status["edges"]["scip"] > 0
    # A file changed since the index was made answers syntactically again.
    base = root / "shop/base.py"
    base.write_text(base.read_text() + "\n\ndef helper():\n    return Store().price([])\n")
    after = call(root, "scip_references", symbol="Store.price", exact=True)["results"]
    assert {r["source"] for r in after if r["file_path"] == "shop/base.py"} == {"syntactic"}
    assert {r["source"] for r in after if r["file_path"] == "shop/discount.py"} == {"scip"}


def test_scenes_add_callers_and_callees_with_their_reason(make_workspace: MakeWorkspace) -> None:
    import cuedeck
    from cuedeck.scene import build_scene

    card = (
        "---\nstatus: active\n---\n# Fix pricing\n\nTotals are wrong: see "
        "@code/shop/base.py#Store.price\n\n```\nTraceback (most recent call last):\n"
        '  File "shop/base.py", line 3, in checkout\n    total = self.price(cart)\n'
        "ValueError: bad cart\n```\n"
    )
    root = make_workspace({**PYTHON, ".cuedeck/cards/abc123.md": card})
    scene = build_scene(cuedeck.open_workspace(root), "abc123", token_limit=4000)
    assert "| shop/base.py#Store.checkout | " in scene.text
    assert "caller of Store.price |" in scene.text  # the reason, in the manifest
    assert "callee of" not in scene.text  # Store.price calls nothing of the repository
    assert "| app.py#main | " in scene.text
    assert "caller of frame Store.checkout |" in scene.text  # main calls checkout
    off = make_workspace(
        {**PYTHON, ".cuedeck/cards/abc123.md": card}, config="[code]\nscene_graph = false\n"
    )
    quiet = build_scene(cuedeck.open_workspace(off), "abc123", token_limit=4000)
    assert "caller of" not in quiet.text


def test_the_map_ranks_by_the_call_graph(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(PYTHON)
    found = call(root, "repo_map", token_limit=300)
    assert "ranked by the call graph" in found["text"]
    # Store.price is the most called: its file comes first.
    assert found["text"].split("\n")[2] == "shop/base.py:"


def test_search_code_takes_the_specifications_search_mode(make_workspace: MakeWorkspace) -> None:
    pytest.importorskip("cuedeck_search")
    from cuedeck.errors import InvalidInput

    root = make_workspace(PYTHON)
    fts = call(root, "search_code", query="checkout price", search_mode="fts")
    keyword = call(root, "search_code", query="checkout price", mode="keyword")
    assert fts["answered_by"] == "keyword"
    assert [r["symbol"] for r in fts["results"]] == [r["symbol"] for r in keyword["results"]]
    with pytest.raises(InvalidInput) as caught:
        call(root, "search_code", query="checkout", mode="keyword", search_mode="semantic")
    assert caught.value.code == 1004
