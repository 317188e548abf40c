"""Functions and classes a JavaScript or TypeScript file assigns to a member are
definitions: ``res.send = function send(...)``, ``exports.parse = ...``,
``module.exports = function app()``, ``View.prototype.lookup = ...`` (a method of
``View``), ``this.handle = ...``; parsed by the real grammars, found by find_symbol and
by search_code."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cuedeck import open_workspace
from tests.conftest import needs

RESPONSE = """\
'use strict';

var res = Object.create(http.ServerResponse.prototype);

module.exports = res;

/**
 * Set the HTTP status code of the response.
 */
res.status = function status(code) {
  this.statusCode = code;
  return this;
};

/**
 * Send a response body: a string, a Buffer or an object as JSON.
 */
res.send = function send(body) {
  var chunk = body;
  return this.end(chunk);
};

res.links = function(links){
  return this.set('Link', links);
};

res[method] = function () {};
make().later = function () {};
"""
VIEW = """\
function View(name, options) {
  this.name = name;
  this.handle = function handle() {
    return name;
  };
}

/** Find the file of a view by its name. */
View.prototype.lookup = function lookup(name) {
  return name;
};

View.Cache = class {
  get(key) {
    return key;
  }
};
"""
EXPRESS = """\
exports = module.exports = createApplication;

module.exports = function createApplication() {
  return {};
};

exports.json = (options) => options;
module.exports.raw = function* raw() {};
"""
PLUGINS = """\
export const plugins: string[] = [];

exports.register = function register(name: string): void {
  plugins.push(name);
};

Loader.prototype.load = async function load(path: string): Promise<string> {
  return path;
};
"""


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("assigned") / "ws"
    for path, text in {
        "lib/response.js": RESPONSE,
        "lib/view.js": VIEW,
        "lib/express.js": EXPRESS,
        "src/plugins.ts": PLUGINS,
    }.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    for sub in ("cards", "docs"):
        (root / ".cuedeck" / sub).mkdir(parents=True)
    return root


@pytest.fixture(scope="module")
def workspace(root: Path) -> Any:
    return open_workspace(root)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (
            "lib/response.js",
            [
                ("function", "res.status", 10, 13),
                ("function", "res.send", 18, 21),
                ("function", "res.links", 23, 25),
            ],
        ),
        (
            "lib/view.js",
            [
                ("function", "View", 1, 6),
                ("function", "View.handle", 3, 5),
                ("method", "View.lookup", 9, 11),
                ("class", "View.Cache", 13, 17),
                ("method", "View.Cache.get", 14, 16),
            ],
        ),
        (
            "lib/express.js",
            [
                ("function", "createApplication", 3, 5),
                ("function", "json", 7, 7),
                ("function", "raw", 8, 8),
            ],
        ),
        (
            "src/plugins.ts",
            [("function", "register", 3, 5), ("method", "Loader.load", 7, 9)],
        ),
    ],
)
def test_assigned_functions_are_definitions_with_qualified_names(
    workspace: Any, path: str, expected: list[tuple[str, str, int, int]]
) -> None:
    document = workspace.documents[path]
    assert document.problems == ()
    found = [(s.kind, s.name, s.line, s.end_line) for s in document.symbols]
    assert [f for f in found if f[0] != "module"] == expected


def test_their_signatures_and_documentation(workspace: Any) -> None:
    send = workspace.documents["lib/response.js"].find_symbol("res.send")
    assert send.signature == "res.send = function send(body)"
    assert send.docstring == "Send a response body: a string, a Buffer or an object as JSON."
    lookup = workspace.documents["lib/view.js"].find_symbol("View.lookup")
    assert lookup.signature == "View.prototype.lookup = function lookup(name)"
    assert lookup.docstring == "Find the file of a view by its name."


def test_find_symbol_finds_them(workspace: Any) -> None:
    find = workspace.plugins.tools()["find_symbol"]
    hits = find.call(workspace, {"name": "res.send"})["results"]
    assert [(h["path"], h["symbol"], h["kind"]) for h in hits[:1]] == [
        ("lib/response.js", "res.send", "function")
    ]
    hits = find.call(workspace, {"name": "lookup"})["results"]
    assert [(h["path"], h["symbol"], h["kind"]) for h in hits] == [
        ("lib/view.js", "View.lookup", "method")
    ]


@needs("cuedeck_search")
def test_search_code_finds_them(workspace: Any) -> None:
    from cuedeck_code.search_tool import search_code

    first = search_code(workspace, "res.send", mode="keyword", limit=1)["results"][0]
    assert (first["path"], first["symbol"]) == ("lib/response.js", "res.send")
