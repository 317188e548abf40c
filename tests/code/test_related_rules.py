"""Golden tests of the rules that shape related code and maps, on real files: rich's own
sources (the copy installed with CueDeck, in a git repository made here, with tests we
write beside them) and small Go, TypeScript, Rust and Java packages written here.

- tests are left out unless the card asks for them (its words, a cited test, frames in
  one), and counted in the manifest;
- generated files (a "generated" header, a data table like rich's Unicode width tables)
  are left out of maps and related code, and counted;
- one entry per symbol (a property and its setter are one);
- with an error's frames: the frames, then their callers, before what the words find.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cuedeck import open_workspace
from cuedeck.models import CodeQuery, RankedSymbol, left_out_of
from cuedeck.plugins.host import get_code_rankers
from cuedeck.scene import build_scene
from cuedeck.workspace import Workspace
from cuedeck_code.related_rules import MAX_CALLERS
from tests.code.conftest import Repo, git
from tests.conftest import needs

#: Our tests of rich's code (rich's wheel ships none): they call what they test.
RICH_TESTS = {
    "tests/test_text.py": """from rich.text import Text
from rich.console import Console


def test_wrap_keeps_words() -> None:
    '''Wrapping keeps hyphenated compound words on one line.'''
    lines = Text("hello wide world").wrap(Console(width=8), 8)
    assert len(lines) == 2


def test_wrap_folds_long_words() -> None:
    text = Text("abcdefghijklmnop")
    assert len(text.wrap(Console(), 4, overflow="fold")) == 4


def test_console_width_is_set() -> None:
    console = Console(width=20)
    console.width = 30
    assert console.width == 30
""",
    "tests/conftest.py": """import pytest
from rich.console import Console


@pytest.fixture
def console() -> Console:
    return Console(width=20)
""",
}


@pytest.fixture(scope="module")
def rich_repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """rich's installed sources and our tests, committed, indexed once for the module."""
    import os

    import rich

    root = tmp_path_factory.mktemp("richrepo")
    shutil.copytree(
        Path(rich.__file__).parent, root / "rich", ignore=shutil.ignore_patterns("__pycache__")
    )
    for rel, text in RICH_TESTS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    for sub in ("cards", "docs"):
        (root / ".cuedeck" / sub).mkdir(parents=True)
    (root / ".gitignore").write_text(".cuedeck/.cache/\n", encoding="utf-8")
    environment = {
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Ada",
        "GIT_AUTHOR_EMAIL": "ada@example.org",
        "GIT_COMMITTER_NAME": "Ada",
        "GIT_COMMITTER_EMAIL": "ada@example.org",
    }
    saved = {key: os.environ.get(key) for key in environment}
    os.environ.update(environment)
    try:
        git(root, "init", "--quiet")
        git(root, "add", "--all")
        git(root, "commit", "--quiet", "-m", "rich")
        open_workspace(root).refresh()
        yield root
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def ranked(root: Path, query: CodeQuery) -> list[RankedSymbol]:
    workspace = open_workspace(root)
    return get_code_rankers(workspace.plugins)["importance"].rank(workspace, query)


def card(root: Path, card_id: str, title: str, body: str = "", refs: str = "") -> Workspace:
    text = f"---\nid: {card_id}\ntitle: {title}\nstatus: active\n{refs}---\n# {title}\n\n{body}\n"
    (root / ".cuedeck" / "cards" / f"{card_id}.md").write_text(text, encoding="utf-8")
    return open_workspace(root)


def related(workspace: Workspace, card_id: str, budget: int = 16000, stack: str = "") -> list[str]:
    scene = build_scene(workspace, card_id, budget, stack=stack or None, record=False)
    return [
        f"{c['path']}#{c['anchor']}" for c in scene.manifest["candidates"] if c["role"] == "related"
    ]


@needs("cuedeck_search")
def test_tests_are_left_out_unless_the_card_asks_for_them(rich_repo: Path) -> None:
    title = "Hyphenated compound words break apart"
    workspace = card(rich_repo, "wrap01", title, "Text.wrap splits them at a narrow width.")
    shown = related(workspace, "wrap01")
    assert shown and not [path for path in shown if path.startswith("tests/")]
    assert shown[0] == "rich/text.py#Text.wrap"  # named by the card: first
    # Naming tests, or citing one, brings them in.
    asked = card(rich_repo, "wrap02", "The hyphenated compound words test fails")
    assert any(path.startswith("tests/") for path in related(asked, "wrap02"))
    # Citing a test lets the tests the words find in: here the one folding that string.
    cites = "refs:\n  - code/tests/test_text.py#test_wrap_keeps_words\n"
    cited = card(rich_repo, "wrap03", "Folding abcdefghijklmnop", refs=cites)
    assert "tests/test_text.py#test_wrap_folds_long_words" in related(cited, "wrap03")
    plain = card(rich_repo, "wrap04", "Folding abcdefghijklmnop")
    assert not [p for p in related(plain, "wrap04") if p.startswith("tests/")]


def test_generated_files_are_left_out_of_maps_and_counted(rich_repo: Path) -> None:
    workspace = open_workspace(rich_repo)
    # The Unicode width tables say "Auto generated by tools/make_width_tables.py": the
    # index passes them over. The emoji table says nothing but is one.
    tables = list((rich_repo / "rich" / "_unicode_data").glob("unicode*.py"))
    assert len(tables) >= 10
    assert workspace.fresh_index().summary()["passed_over"]["generated"] == len(tables)
    assert "rich/_emoji_codes.py" in workspace.fresh_index().paths
    reply = workspace.plugins.tools()["repo_map"].call(workspace, {"token_limit": 1024})
    assert "_emoji_codes" not in reply["text"] and reply["left_out"]["generated"] >= 1
    assert "tests/" not in reply["text"] and reply["left_out"]["tests"] > 0
    # A folder of tests maps its tests.
    tests = workspace.plugins.tools()["repo_map"].call(workspace, {"folder": "tests"})
    assert "test_wrap_keeps_words" in tests["text"]
    # Related code leaves the table out too, whatever the card says.
    words = "The ab_button_(blood_type) emoji code is wrong"
    asked = card(rich_repo, "emoji1", words)
    found = ranked(rich_repo, CodeQuery(text=words, limit=300))
    assert found and "rich/_emoji_codes.py" not in {r.path for r in found}
    assert left_out_of(found)["generated"] >= 1
    scene = build_scene(asked, "emoji1", 16000, record=False)
    assert "rich/_emoji_codes.py" not in {c["path"] for c in scene.manifest["candidates"]}
    assert scene.manifest["left_out"]["generated"] >= 1
    assert "Related code left out: " in scene.text and " in generated files" in scene.text
    xml = build_scene(asked, "emoji1", 16000, format="xml", record=False).text
    assert '<left-out reason="generated" count="' in xml
    data = json.loads(build_scene(asked, "emoji1", 16000, format="json", record=False).text)
    assert data["manifest"]["left_out"] == scene.manifest["left_out"]


#: Files a generator wrote, kept by an index told to keep them.
GENERATED = {
    "app/schema.go": "// Code generated by protoc-gen-go. DO NOT EDIT.\npackage app\n\n"
    + "".join(f"func Schema{n}() int {{ return {n} }}\n" for n in range(30)),
    "app/tables.py": "WIDTHS = [\n"
    + "".join(f"    ({n}, {n + 5}, 2),\n" for n in range(300))
    + "]\n",
    "app/width.py": '"""Widths."""\nfrom app.tables import WIDTHS\n\n\n'
    'def schema_width(code: int) -> int:\n    """The width of a schema code."""\n'
    "    return next((w for a, b, w in WIDTHS if a <= code <= b), 1)\n",
}


@needs("cuedeck_search")
def test_generated_files_the_index_keeps_stay_out_of_maps(
    make_repo: Callable[[dict[str, str]], Repo],
) -> None:
    repo = make_repo({**GENERATED, ".cuedeck/config.toml": "[code]\nskip_generated = false\n"})
    workspace = open_workspace(repo.root)
    workspace.refresh()
    assert {"app/schema.go", "app/tables.py"} <= set(workspace.index.paths)
    reply = workspace.plugins.tools()["repo_map"].call(workspace, {"query": "schema width"})
    assert "app/width.py" in reply["text"]
    assert "schema.go" not in reply["text"] and "tables.py" not in reply["text"]
    assert reply["left_out"]["generated"] >= 2


def test_one_entry_per_symbol(rich_repo: Path) -> None:
    found = ranked(rich_repo, CodeQuery(text="Console.width is wrong after a resize", limit=300))
    widths = [r for r in found if (r.path, r.name) == ("rich/console.py", "Console.width")]
    assert len(widths) == 1
    document = open_workspace(rich_repo).document("rich/console.py")
    assert document is not None
    both = [s for s in document.symbols if s.name == "Console.width"]
    assert len(both) == 2  # the property and its setter
    assert (widths[0].line, widths[0].end_line) == (both[0].line, both[1].end_line)
    keys = [(r.path, r.name) for r in found]
    assert len(keys) == len(set(keys))


def test_a_plain_word_is_not_a_name(rich_repo: Path) -> None:
    # "console" in prose is a word: Progress.console and Status.console are not named.
    prose = ranked(rich_repo, CodeQuery(text="Flicker when printing to the console", limit=300))
    named = {r.name: r for r in prose if r.name in ("Progress.console", "Status.console")}
    assert all(dict(r.parts)["text"] < 0.5 * prose[0].score for r in named.values())
    code = ranked(rich_repo, CodeQuery(text="Flicker from `Status.console`", limit=5))
    assert code[0].name == "Status.console"


def test_frames_and_their_callers_come_before_what_the_words_find(rich_repo: Path) -> None:
    workspace = open_workspace(rich_repo)
    cells = workspace.document("rich/cells.py")
    assert cells is not None
    raising = cells.find_symbol("set_cell_size")
    assert raising is not None
    stack = f"rich/cells.py:{raising.line + 2}: ValueError\n"
    found = ranked(
        rich_repo,
        CodeQuery(text="Rule titles and tables with wide characters", stack=stack, limit=30),
    )
    assert (found[0].path, found[0].name) == ("rich/cells.py", "set_cell_size")

    def calls(entry: RankedSymbol) -> bool:
        if entry.kind not in ("function", "method"):
            return False  # a class holds its methods' calls
        text = (rich_repo / entry.path).read_text(encoding="utf-8").split("\n")
        return "set_cell_size(" in "\n".join(text[entry.line - 1 : entry.end_line])

    callers = [entry for entry in found[1:] if calls(entry)]
    assert len(callers) >= 3  # Rule, Segment and Text call it
    first = min(len(callers), MAX_CALLERS)
    assert all(calls(entry) for entry in found[1 : 1 + first])
    assert found[1 + first].parts[-1] == ("stack", 0.0)  # then what the words find
    scene = card(rich_repo, "rule01", "Rule titles and tables with wide characters")
    shown = related(scene, "rule01", stack=stack)
    assert shown[0] == "rich/cells.py#set_cell_size"
    assert {f"{e.path}#{e.name}" for e in found[1 : 1 + first]} <= set(shown[: 1 + first])


#: The same small package in three more languages, each with its tests.
PACKAGES = {
    "go/cart/cart.go": """package cart

// Cart holds items and their quantities.
type Cart struct{ items map[string]int }

// AddItem adds quantity of an item to the cart.
func (c *Cart) AddItem(item string, quantity int) {
	c.items[item] += quantity
}
""",
    "go/cart/cart_test.go": """package cart

import "testing"

func TestAddItemQuantity(t *testing.T) {
	c := &Cart{items: map[string]int{}}
	c.AddItem("pen", 2)
	if c.items["pen"] != 2 {
		t.Fatal("quantity lost")
	}
}
""",
    "ts/cart.ts": """/** Items and their quantities. */
export class Cart {
  items = new Map<string, number>();

  /** Add quantity of an item to the cart. */
  addItem(item: string, quantity: number): void {
    this.items.set(item, (this.items.get(item) ?? 0) + quantity);
  }
}
""",
    "ts/cart.spec.ts": """import { Cart } from "./cart";

describe("addItem quantity", () => {
  it("adds the quantity of an item", () => {
    const cart = new Cart();
    cart.addItem("pen", 2);
    expect(cart.items.get("pen")).toBe(2);
  });
});

export function addItemQuantityCase(): Cart {
  const cart = new Cart();
  cart.addItem("pen", 2);
  return cart;
}
""",
    "rust/src/cart.rs": """use std::collections::HashMap;

/// Items and their quantities.
pub struct Cart {
    items: HashMap<String, u32>,
}

impl Cart {
    /// Add quantity of an item to the cart.
    pub fn add_item(&mut self, item: &str, quantity: u32) {
        *self.items.entry(item.to_string()).or_insert(0) += quantity;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_item_quantity() {
        let mut cart = Cart { items: HashMap::new() };
        cart.add_item("pen", 2);
        assert_eq!(cart.items["pen"], 2);
    }
}
""",
}


@needs("cuedeck_search")
def test_tests_of_go_typescript_and_rust_are_left_out_unless_asked_for(
    make_repo: Callable[[dict[str, str]], Repo],
) -> None:
    repo = make_repo(PACKAGES)
    found = ranked(repo.root, CodeQuery(text="add item quantity to the cart", limit=50))
    names = {f"{r.path}#{r.name}" for r in found}
    assert {
        "go/cart/cart.go#Cart.AddItem",
        "ts/cart.ts#Cart.addItem",
        "rust/src/cart.rs#Cart.add_item",
    } <= names
    assert not [n for n in names if "_test.go" in n or ".spec.ts" in n or "#tests." in n]
    assert left_out_of(found)["tests"] >= 3
    asked = ranked(repo.root, CodeQuery(text="the add item quantity tests fail", limit=50))
    tests = {f"{r.path}#{r.name}" for r in asked}
    assert {
        "go/cart/cart_test.go#TestAddItemQuantity",
        "ts/cart.spec.ts#addItemQuantityCase",
        "rust/src/cart.rs#tests.add_item_quantity",
    } <= tests
    assert "tests" not in left_out_of(asked)


def test_a_file_s_module_is_its_own_not_an_inner_mod(
    make_repo: Callable[[dict[str, str]], Repo],
) -> None:
    # Rust's `mod tests` is a module symbol too: the file's own module (what its
    # top-level lines and its importers' edges belong to) is still the file's.
    repo = make_repo(PACKAGES)
    graph = open_workspace(repo.root).service("code_graph").get()
    file = graph.file_index["rust/src/cart.rs"]
    module = int(graph.modules[file])
    assert graph.kinds[module] == "module" and graph.lines[module] == 1
    assert graph.names[graph.symbol_at(file, 1)] == graph.names[module] != "tests"


def test_small_files_of_the_best_definitions_come_whole(
    make_repo: Callable[[dict[str, str]], Repo],
) -> None:
    from cuedeck.scene.code import WHOLE_FILES

    repo = make_repo(PACKAGES)
    workspace = card(repo.root, "cart01", "Add item quantity to the cart")
    scene = build_scene(workspace, "cart01", 4000, record=False)
    rows = [c for c in scene.manifest["candidates"] if c["role"] == "related"]
    whole = [c["path"] for c in rows if c["anchor"] is None and c["placed"] == "whole"]
    assert {"go/cart/cart.go", "ts/cart.ts", "rust/src/cart.rs"} & set(whole)
    assert len(whole) <= WHOLE_FILES
    assert all(c["note"].startswith("related: the file of ") for c in rows if c["anchor"] is None)
    # Nothing of a file is shown twice: its definitions do not come beside it.
    assert not [c for c in rows if c["anchor"] is not None and c["path"] in whole]


#: Overloads in Java and TypeScript, and a TypeScript cart whose addItem raises.
OVERLOADS = {
    "java/shop/Cart.java": """package shop;

public class Cart {
    /** Add an item to the cart. */
    public void add(Item item) {
        add(item, 1);
    }

    /** Add a quantity of an item to the cart. */
    public void add(Item item, int quantity) {
        items.put(item, quantity);
    }

    public int size() {
        return items.size();
    }
}
""",
    "ts/parse.ts": """export function parseQuantity(raw: string): number;
export function parseQuantity(raw: number): number;
export function parseQuantity(raw: string | number): number {
  return Number(raw);
}
""",
    "ts/cart.ts": """export class Cart {
  items = new Map<string, number>();

  addItem(item: string, quantity: number): void {
    if (quantity < 0) {
      throw new Error("negative quantity");
    }
    this.items.set(item, quantity);
  }
}
""",
    "ts/checkout.ts": """import { Cart } from "./cart";

export function checkout(cart: Cart): void {
  cart.addItem("pen", -1);
}
""",
    "ts/restock.ts": """import { Cart } from "./cart";

export function restock(cart: Cart): void {
  cart.addItem("ink", 5);
}
""",
    "ts/pricing.ts": """/** The price of a quantity, with a discount for a negative balance. */
export function priceOfQuantity(quantity: number, discount: number): number {
  return quantity * 2 - discount;
}
""",
}


@needs("cuedeck_search")
def test_overloads_are_one_entry_in_java_and_typescript(
    make_repo: Callable[[dict[str, str]], Repo],
) -> None:
    repo = make_repo(OVERLOADS)
    found = ranked(repo.root, CodeQuery(text="add a quantity of an item, parse the quantity"))
    spans = {(r.path, r.name): (r.line, r.end_line) for r in found}
    assert len(spans) == len(found)
    assert spans[("java/shop/Cart.java", "Cart.add")] == (5, 12)
    assert spans[("ts/parse.ts", "parseQuantity")] == (1, 5)


@needs("cuedeck_search")
def test_a_node_stack_puts_the_frame_then_its_callers_first(
    make_repo: Callable[[dict[str, str]], Repo],
) -> None:
    repo = make_repo(OVERLOADS)
    stack = "Error: negative quantity\n    at Cart.addItem (/srv/app/ts/cart.ts:6:13)\n"
    query = CodeQuery(text="Negative quantity price discount", stack=stack)
    names = [f"{r.path}#{r.name}" for r in ranked(repo.root, query)]
    assert names[0] == "ts/cart.ts#Cart.addItem"
    assert set(names[1:3]) == {"ts/checkout.ts#checkout", "ts/restock.ts#restock"}
    assert "ts/pricing.ts#priceOfQuantity" in names[3:]
    # Without the stack, the words rank the pricing first.
    plain = ranked(repo.root, CodeQuery(text="Negative quantity price discount"))
    assert f"{plain[0].path}#{plain[0].name}" == "ts/pricing.ts#priceOfQuantity"
