"""What the code package's caches depend on besides the files: the parser's and the graph
walkers' revisions, and a graph made by another revision built again."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

pytest.importorskip("cuedeck_code")

from cuedeck_code import revision
from cuedeck_code.intel.store import GraphStore

if TYPE_CHECKING:
    from pathlib import Path

    from tests.conftest import MakeWorkspace


def test_a_revision_follows_the_bytes_of_its_files(tmp_path: Path) -> None:
    module = tmp_path / "parser.py"
    module.write_text("def parse(): return 1\n")
    before = revision._digest([module], grammars=False)
    assert revision._digest([module], grammars=False) == before
    module.write_text("def parse(): return 2\n")
    assert revision._digest([module], grammars=False) != before
    # The grammars' compiled files are part of it: the installed ones are found.
    assert any(line.startswith("tree_sitter_python/") for line in revision._grammar_files())
    assert revision.parser_revision() != revision.graph_revision()


def test_a_graph_of_another_revision_is_built_again(tmp_path: Path) -> None:
    store = GraphStore(tmp_path)
    with store.transaction() as db:
        db.execute(
            "INSERT INTO files (path, sha256, language, ns, interface) "
            "VALUES ('a.py', 'x', 'python', 'a', '')"
        )
        db.execute("UPDATE meta SET value = 'older' WHERE key = 'schema'")
    store.close()
    again = GraphStore(tmp_path)
    assert again.query("SELECT COUNT(*) FROM files") == [(0,)]
    assert again.query("SELECT value FROM meta WHERE key = 'schema'")[0][0].endswith(
        revision.graph_revision()
    )


def test_a_graph_of_the_previous_schema_is_dropped_and_built_again(
    make_workspace: MakeWorkspace,
) -> None:
    """A schema 5 graph (imports and variables as names rows, no bindings table) is
    never read as it is: it is dropped, and the graph built again answers."""
    import sqlite3

    import cuedeck

    root = make_workspace({"a.py": "def f():\n    return g()\n\n\ndef g():\n    return 1\n"})
    path = root / ".cuedeck/.cache/code-intel.sqlite3"
    path.parent.mkdir(parents=True, exist_ok=True)
    old = sqlite3.connect(path)
    old.executescript(
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "CREATE TABLE files (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, "
        "sha256 TEXT NOT NULL, language TEXT NOT NULL, ns TEXT NOT NULL, "
        "interface TEXT NOT NULL, source TEXT NOT NULL DEFAULT 'syntactic');"
        "CREATE TABLE names (id INTEGER PRIMARY KEY, space INTEGER NOT NULL, "
        "key INTEGER NOT NULL, name TEXT NOT NULL, short_key INTEGER, kind TEXT NOT NULL, "
        "file INTEGER NOT NULL, line INTEGER NOT NULL, end_line INTEGER NOT NULL, "
        "target_ns TEXT, target_name TEXT, extra TEXT);"
        "INSERT INTO files VALUES (1, 'a.py', 'stale', 'python', 'a.py', '', 'syntactic');"
        "INSERT INTO names VALUES (1, 1, 0, 'old', NULL, 'import', 1, 1, 1, 'b.py', 'x', NULL);"
    )
    old.execute("INSERT INTO meta VALUES ('schema', ?)", (f"5/{revision.graph_revision()}",))
    old.commit()
    old.close()
    workspace = cuedeck.open_workspace(root)
    store = workspace.service("code_intel").ready()
    columns = {row[1] for row in store.query("PRAGMA table_info(names)")}
    assert "target_ns" not in columns and "digest" in columns
    assert store.query("SELECT name FROM names WHERE name = 'old'") == []
    assert store.query("SELECT COUNT(*) FROM bindings") == [(1,)]
    edges = store.query(
        "SELECT s.name, d.name FROM edges e JOIN names s ON s.id = e.src "
        "JOIN names d ON d.id = e.dst"
    )
    assert ("f", "g") in edges
    store.close()
