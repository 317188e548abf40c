"""The quick keyword path (no numpy) and the engine score with one BM25F scorer
(cuedeck_search.bm25.term_score): for any prose workspace, any edits since the postings
were saved and any query, they give the same results, scores to the last bit."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from cuedeck import open_workspace
from cuedeck_search.quick import keyword_search
from tests.search.test_quick import attr_tuple

VOCABULARY = ["token", "refresh", "webhook", "retry", "ledger", "signing", "key", "queue"]

words = st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=12).map(" ".join)
pages = st.lists(st.tuples(words, words), min_size=1, max_size=4).map(
    lambda parts: "".join(f"## {title.capitalize()}\n\n{body}.\n\n" for title, body in parts)
)
workspaces = st.dictionaries(
    st.sampled_from([f"{name}.md" for name in ("auth", "billing", "faq", "guide/hooks")]),
    pages,
    min_size=1,
)
queries = st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=3).map(" ".join)


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        stamp = path.stat().st_mtime_ns if path.exists() else None
        path.write_text(f"# {rel}\n\n{text}", encoding="utf-8")
        if stamp is not None:  # an edit within the file system's time resolution is seen
            os.utime(path, ns=(stamp, stamp + 10**9))


def _same(root: Path, query: str) -> None:
    engine = open_workspace(root).search(query, mode="keyword", limit=10)
    quick = keyword_search(open_workspace(root), query, 10)
    assert quick is not None
    assert [attr_tuple(r) for r in quick] == [attr_tuple(r) for r in engine], query


@settings(max_examples=12)
@given(saved=workspaces, edited=workspaces, removed=st.booleans(), query=queries)
def test_the_quick_path_and_the_engine_answer_alike(
    saved: dict[str, str], edited: dict[str, str], removed: bool, query: str
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / ".cuedeck").mkdir()
        _write(root, saved)
        open_workspace(root).service("search").sync()  # the postings the quick path reads
        _same(root, query)
        _write(root, edited)  # files changed and added since the postings were saved
        if removed and len(saved) > 1:
            (root / sorted(saved)[0]).unlink()
        _same(root, query)
