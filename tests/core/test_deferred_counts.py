"""A large refresh counts tokens when a document is first read, exactly, and once."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from cuedeck import open_workspace
from cuedeck.index.parsed import DEFER_COUNTS, UNCOUNTED
from cuedeck.layout import INDEX_DB
from tests.conftest import MakeWorkspace


def many(make_workspace: MakeWorkspace, count: int) -> Path:
    return make_workspace(
        {f"docs/p{n}.md": f"# Page {n}\n\n" + "Some words to count. " * n for n in range(count)}
    )


def stored_tokens(root: Path) -> dict[str, int]:
    with sqlite3.connect(root / INDEX_DB) as connection:
        return dict(connection.execute("SELECT sha256, tokens FROM token_counts").fetchall())


def test_a_large_refresh_defers_counting_to_the_first_read(make_workspace: MakeWorkspace) -> None:
    root = many(make_workspace, DEFER_COUNTS + 6)
    workspace = open_workspace(root)
    workspace.refresh()
    assert stored_tokens(root) == {}  # nothing counted while indexing
    counter = workspace.token_counter
    document = workspace.document("docs/p7.md")
    text = (root / "docs/p7.md").read_text(encoding="utf-8")
    assert document.tokens == counter.count(text) > 0  # exact, by the counter in use
    assert stored_tokens(root) == {document.sha256: document.tokens}
    assert open_workspace(root).document("docs/p7.md").tokens == document.tokens
    # Every document read gets its count; the table follows the documents.
    totals = {path: doc.tokens for path, doc in open_workspace(root).documents.items()}
    assert UNCOUNTED not in totals.values()
    assert len(stored_tokens(root)) == DEFER_COUNTS + 6


def test_a_small_refresh_counts_at_once(make_workspace: MakeWorkspace) -> None:
    root = many(make_workspace, 5)
    workspace = open_workspace(root)
    workspace.refresh()
    assert all(doc.tokens > 0 for doc in workspace.documents.values())
    assert stored_tokens(root) == {}  # counted while parsing: nothing deferred


def test_a_large_refresh_still_counts_code_symbols(make_workspace: MakeWorkspace) -> None:
    """The code parser counts each symbol, not only the whole file (it does not set
    ``deferred_counts``): its counts are exact however large the refresh."""
    pytest.importorskip("cuedeck_code")
    body = "".join(f"def f{n}(x):\n    return x + {n}\n\n\n" for n in range(3))
    root = many(make_workspace, DEFER_COUNTS + 6)
    (root / "tool.py").write_text(body)
    workspace = open_workspace(root)
    workspace.refresh()
    document = workspace.index.get("tool.py", counted=False)
    assert document is not None and document.tokens == workspace.token_counter.count(body)
    assert [s.tokens for s in document.symbols if s.kind == "function"] == [
        workspace.token_counter.count(f"def f{n}(x):\n    return x + {n}\n") for n in range(3)
    ]
    assert workspace.index.get("docs/p1.md", counted=False).tokens == UNCOUNTED  # type: ignore[union-attr]
