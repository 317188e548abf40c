"""The bulk tokeniser of a cold index against the per-section counts it replaces there.

:func:`cuedeck_search.bm25.section_counts` (a dict per section) is what the quick path
and single edits score with; the tokeniser must give the same postings, array for array.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from cuedeck import open_workspace
from cuedeck.models import Document
from cuedeck.text import split_lines
from cuedeck_search.bm25 import KeywordSettings
from cuedeck_search.keyword import tokenise as tokenise_one
from cuedeck_search.postings import Postings, build, combine, stable_order
from cuedeck_search.sections import keyword_sections, split_sections
from cuedeck_search.weighted_terms import tokenise
from tests.conftest import MakeWorkspace

GOLDEN = Path(__file__).parent / "golden" / "docs"

#: Pages that reach every branch: no heading, frontmatter only, an index page named by
#: its folder, identifiers and dotted names, words ending in ``.``, ``-`` or ``_``,
#: other scripts, repeated words across fields, a fenced block, mkdocs markup, code.
TRICKY = {
    "docs/empty.md": "---\ntitle: Nothing here\n---\n",
    "docs/plain.md": "No heading at all, just words: words, words.\n",
    "docs/guide/index.md": (
        "# Guide\n\nIntro to the guide.\n\n## Install\n\nRun `pip install thing`.\n\n"
        "### On Windows { #windows }\n\nUse the MSI. The MSI is a file.\n"
    ),
    "docs/api_ref.md": (
        "# API: HTTPException and parseURL\n\nCall `Client.send()` or self.transport.request"
        "(method); see jsonable_encoder, x_ and end. a- z.\n\n## Client.send\n\n"
        "```python\nclient.send(request)\n```\n\n{* ../src/app.py hl[3] *}\n"
    ),
    "docs/de/abhängigkeiten.md": (
        "# Abhängigkeiten { #dependencies }\n\nAbhängigkeiten und Parameter. Größe: 3.\n\n"
        "## Запросы\n\nЗапросы и ответы. 请求体 和 响应。 FastAPI的依赖\n"
    ),
    "src/app.py": (
        'import os\n\nLIMIT = 3\n\n\nclass Client:\n    """Sends requests."""\n\n'
        '    def send(self, request):\n        """Send one request."""\n'
        "        return self.transport.request(request)\n"
    ),
    "docs/release-notes.md": "# Release notes\n\n"
    + "\n".join(f"## 0.{n}.0\n\n### Fixes\n\n* Fix the fix of fixes {n}.\n" for n in range(12)),
}


Documents = list[tuple[tuple[str, str], Document, list[str]]]


def workspace_documents(root: Path) -> Documents:
    """Each indexed document of the workspace at ``root``, with its key and lines."""
    workspace = open_workspace(root)
    workspace.refresh()
    found = []
    keys = workspace.index.keys()
    for key in keys:
        document = workspace.index.get(key[0], counted=False)
        assert document is not None
        found.append((key, document, split_lines(workspace.read_text(key[0]))))
    return found


def per_section(documents: Documents, settings: KeywordSettings) -> Postings:
    """The postings as single edits make them: Section objects, a dict per section."""
    made = []
    for key, document, lines in documents:
        sections = split_sections(document, lines)
        made.append((key, tokenise_one(key[0], sections, settings), sections))
    return build(made)


def bulk(documents: Documents, settings: KeywordSettings) -> Postings:
    return tokenise(
        ((key, keyword_sections(document, lines)) for key, document, lines in documents),
        settings,
    )


def assert_same(got: Postings, expected: Postings, *, exact: bool = True) -> None:
    assert got.keys == expected.keys
    assert got.terms.words() == expected.terms.words()
    for name in ("doc_ends", "lines", "hashes", "indptr", "rows"):
        assert np.array_equal(getattr(got, name), getattr(expected, name)), name
    for name in ("lengths", "tf"):
        if exact:
            assert getattr(got, name).tobytes() == getattr(expected, name).tobytes(), name
        else:  # the same sums, added in another grouping: equal to float32 rounding
            np.testing.assert_allclose(getattr(got, name), getattr(expected, name), rtol=1e-6)


@pytest.fixture
def pages(make_workspace: MakeWorkspace, tmp_path: Path) -> Path:
    root = make_workspace(TRICKY)
    shutil.copytree(GOLDEN, root / "golden")
    return root


def test_bulk_postings_are_those_of_the_per_section_counts(pages: Path) -> None:
    documents = workspace_documents(pages)
    assert len(documents) == len(TRICKY) + len(list(GOLDEN.rglob("*.md")))
    settings = KeywordSettings()
    got = bulk(documents, settings)
    assert_same(got, per_section(documents, settings))
    assert got.sections > len(documents)
    assert any(path == "src/app.py" for path, _ in got.keys)  # code sections too
    # The parts a cold index tokenises on each core, joined, are the same again.
    half = len(documents) // 2
    parts = [bulk(documents[:half], settings), bulk(documents[half:], settings)]
    assert_same(combine([(part, None) for part in parts]), got)


def test_other_weights_give_the_same_postings(pages: Path) -> None:
    documents = workspace_documents(pages)
    settings = KeywordSettings(heading_weight=2.5, path_weight=0.0, name_weight=0.3)
    assert_same(bulk(documents, settings), per_section(documents, settings), exact=False)


def test_a_document_the_index_lost_has_no_sections() -> None:
    settings = KeywordSettings()
    got = tokenise([(("gone.md", "0" * 64), ()), (("a.md", "1" * 64), [])], settings)
    assert got.keys == (("gone.md", "0" * 64), ("a.md", "1" * 64))
    assert (got.sections, len(got.terms), got.doc_ends.tolist()) == (0, 0, [0, 0])


@pytest.mark.parametrize("top", [1_000, 2**61])
def test_stable_order_is_a_stable_argsort(top: int) -> None:
    rng = np.random.default_rng(26)
    keys = rng.integers(0, top, 5_000, dtype=np.int64)
    keys[::7] = keys[0]  # ties, kept in input order
    assert np.array_equal(stable_order(keys), np.argsort(keys, kind="stable"))
    assert stable_order(np.zeros(0, dtype=np.int64)).tolist() == []
