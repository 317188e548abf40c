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
