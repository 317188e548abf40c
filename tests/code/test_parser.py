"""The code parser on realistic files of each language: every definition with its exact
lines, qualified name, kind, signature and docstring; imports resolved to workspace files;
hashes and tokens of each symbol's own lines."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from cuedeck import open_workspace
from cuedeck.models import Document

EXPECTED = {
    "client.py": [
        ("module", "client", 1, 47),
        ("class", "Response", 11, 19),
        ("method", "Response.json", 18, 19),
        ("class", "Client", 22, 40),
        ("method", "Client.__init__", 27, 28),
        ("method", "Client.closed", 30, 32),
        ("method", "Client.send", 34, 40),
        ("function", "handle_request", 43, 47),
        ("function", "handle_request.inner", 44, 45),
    ],
    "router.ts": [
        ("module", "router", 1, 40),
        ("interface", "Handler", 6, 8),
        ("method", "Handler.handle", 7, 7),
        ("type", "Method", 10, 10),
        ("enum", "Status", 12, 15),
        ("class", "Router", 20, 34),
        ("method", "Router.add", 23, 25),
        ("method", "Router.dispatch", 27, 33),
        ("function", "parseURL", 36, 36),
        ("function", "createRouter", 38, 40),
    ],
    "widget.tsx": [
        ("module", "widget", 1, 10),
        ("type", "Props", 3, 3),
        ("function", "Widget", 6, 8),
        ("function", "Badge", 10, 10),
    ],
    "events.js": [
        ("module", "events", 1, 33),
        ("class", "Emitter", 6, 18),
        ("method", "Emitter.constructor", 7, 9),
        ("method", "Emitter.on", 11, 13),
        ("method", "Emitter.emit", 15, 17),
        ("function", "ids", 20, 23),
        ("function", "debounce", 25, 31),
    ],
    "server.go": [
        ("module", "server", 1, 38),
        ("struct", "Server", 12, 14),
        ("interface", "Handler", 17, 19),
        ("method", "Handler.ServeHTTP", 18, 18),
        ("type", "ID", 22, 22),
        ("type", "Names", 23, 23),
        ("function", "New", 27, 29),
        ("method", "Server.ServeHTTP", 32, 34),
        ("method", "Server.Close", 36, 38),
    ],
    "lib.rs": [
        ("module", "lib", 1, 54),
        ("struct", "Cache", 9, 12),
        ("trait", "Store", 15, 18),
        ("method", "Store.get", 16, 16),
        ("method", "Store.put", 17, 17),
        ("enum", "Event", 20, 23),
        ("impl", "Cache", 25, 34),
        ("method", "Cache.new", 27, 29),
        ("method", "Cache.len", 31, 33),
        ("impl", "Cache", 36, 44),
        ("method", "Cache.get", 37, 39),
        ("method", "Cache.put", 41, 43),
        ("function", "verify_token", 46, 48),
        ("macro", "square", 50, 54),
    ],
    "com/acme/Inventory.java": [
        ("module", "Inventory", 1, 31),
        ("class", "Inventory", 10, 31),
        ("method", "Inventory.Inventory", 14, 15),
        ("method", "Inventory.toString", 17, 20),
        ("method", "Inventory.add", 22, 24),
        ("interface", "Inventory.Listener", 26, 28),
        ("method", "Inventory.Listener.changed", 27, 27),
        ("enum", "Inventory.Kind", 30, 30),
    ],
    "buffer.c": [
        ("module", "buffer", 1, 24),
        ("struct", "buffer", 5, 8),
        ("type", "point", 10, 12),
        ("enum", "mode", 14, 14),
        ("function", "buffer_new", 17, 20),
        ("function", "buffer_len", 22, 24),
    ],
    "shapes.cpp": [
        ("module", "shapes", 1, 44),
        ("namespace", "geo", 4, 26),
        ("class", "geo.Shape", 7, 12),
        ("method", "geo.Shape.~Shape", 9, 9),
        ("method", "geo.Shape.twice", 11, 11),
        ("struct", "geo.Point", 14, 17),
        ("function", "geo.clamp", 19, 22),
        ("function", "geo.total", 28, 32),
        ("class", "Circle", 34, 40),
        ("method", "Circle.Circle", 36, 36),
        ("method", "Circle.area", 42, 44),
    ],
    "billing.rb": [
        ("module", "billing", 1, 29),
        ("module", "Billing", 5, 25),
        ("class", "Billing.Invoice", 7, 20),
        ("method", "Billing.Invoice.initialize", 8, 10),
        ("method", "Billing.Invoice.total", 13, 15),
        ("method", "Billing.Invoice.empty", 17, 19),
        ("method", "Billing.currency", 22, 24),
        ("function", "helper", 27, 29),
    ],
}

IMPORTS = {
    "client.py": ["transport.py"],
    "router.ts": ["http.ts", "util/helpers.ts"],
    "widget.tsx": [],
    "events.js": ["format.js"],
    "server.go": ["store/store.go"],
    "lib.rs": ["eviction.rs"],
    "com/acme/Inventory.java": ["com/acme/Item.java"],
    "buffer.c": ["buffer.h"],
    "shapes.cpp": ["buffer.h"],
    "billing.rb": ["money.rb"],
}

LANGUAGES = {
    "client.py": "python",
    "router.ts": "typescript",
    "widget.tsx": "tsx",
    "events.js": "javascript",
    "server.go": "go",
    "lib.rs": "rust",
    "com/acme/Inventory.java": "java",
    "buffer.c": "c",
    "shapes.cpp": "cpp",
    "billing.rb": "ruby",
}


@pytest.fixture(scope="module")
def documents(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Document]:
    import shutil

    from tests.code.conftest import DATA

    root = tmp_path_factory.mktemp("code") / "ws"
    shutil.copytree(DATA, root)
    (root / ".cuedeck" / "docs").mkdir(parents=True)
    workspace = open_workspace(root)
    return dict(workspace.documents)


@pytest.mark.parametrize("path", sorted(EXPECTED))
def test_every_definition_with_its_exact_lines(documents: dict[str, Document], path: str) -> None:
    document = documents[path]
    assert document.language == LANGUAGES[path]
    assert document.problems == ()
    found = [(s.kind, s.name, s.line, s.end_line) for s in document.symbols]
    assert found == EXPECTED[path]


@pytest.mark.parametrize("path", sorted(IMPORTS))
def test_imports_resolve_to_workspace_files(documents: dict[str, Document], path: str) -> None:
    references = documents[path].references
    assert [r.target for r in references] == IMPORTS[path]
    assert {r.kind for r in references} <= {"import"}


def test_each_symbol_hashes_and_counts_its_own_lines(
    documents: dict[str, Document], tmp_path: Path
) -> None:
    from tests.code.conftest import DATA

    for path, document in documents.items():
        if not document.symbols:
            continue
        lines = (DATA / path).read_bytes().splitlines(keepends=True)
        assert document.line_count == len(lines)
        for symbol in document.symbols:
            chunk = b"".join(lines[symbol.line - 1 : symbol.end_line])
            assert symbol.sha256 == hashlib.sha256(chunk).hexdigest(), (path, symbol.name)
            assert 0 < symbol.tokens <= document.tokens


def test_signatures_and_docstrings(documents: dict[str, Document]) -> None:
    def symbol(path: str, name: str) -> tuple[str, str]:
        found = documents[path].find_symbol(name)
        assert found is not None, name
        return found.signature, found.docstring

    assert symbol("client.py", "Client.send") == (
        'def send(self, method: str, url: str, *, body: bytes = b"") -> Response',
        "Send one request; retry up to ``retries`` times.",
    )
    assert symbol("client.py", "client") == (
        "",
        "A small HTTP client: sessions, retries and a transport.",
    )
    assert symbol("router.ts", "Router") == ("class Router", "Matches paths against routes.")
    assert symbol("server.go", "Server.ServeHTTP") == (
        "func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request)",
        "ServeHTTP answers with the item count.",
    )
    assert symbol("lib.rs", "Cache.new") == (
        "pub fn new(capacity: usize) -> Self",
        "A cache holding at most `capacity` entries.",
    )
    assert symbol("com/acme/Inventory.java", "Inventory") == (
        "public class Inventory",
        "Keeps items in stock.",
    )
    assert symbol("billing.rb", "Billing") == ("module Billing", "Billing for customers.")
    assert symbol("buffer.c", "buffer_new")[1] == "Make an empty buffer."


def test_a_short_name_finds_the_one_symbol_that_has_it(documents: dict[str, Document]) -> None:
    client = documents["client.py"]
    assert client.find_symbol("send").name == "Client.send"  # type: ignore[union-attr]
    assert client.find_symbol("CLIENT.SEND").name == "Client.send"  # type: ignore[union-attr]
    cache = documents["lib.rs"]
    assert cache.find_symbol("get") is None  # Store.get and Cache.get: ambiguous
    assert cache.find_section("Cache.get").line == 37  # type: ignore[union-attr]
