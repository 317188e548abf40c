"""Search reads reStructuredText, AsciiDoc and plain text by their sections: a Sphinx
project's sections are found by what they say, named by their titles, with snippets
that are prose (no title underlines)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cuedeck import open_workspace
from cuedeck.text import split_lines
from cuedeck_search.sections import split_sections
from tests.conftest import needs

PROJECT = Path(__file__).parents[1] / "core" / "sphinx_project"


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    shutil.copytree(PROJECT, root)
    (root / ".cuedeck").mkdir()
    (root / "docs" / "ops.adoc").write_text(
        "= Operations\n\n== Disputes\n\nA disputed charge is frozen until the bank rules.\n",
        encoding="utf-8",
    )
    (root / "docs" / "runbook.txt").write_text(
        "Runbook\n\nPage the on-call engineer when the reconciler misses a night.\n\n"
        "Restart it with the settle command.\n",
        encoding="utf-8",
    )
    return root


@needs("cuedeck_code")
def test_rst_sections_are_found_by_what_they_say(docs: Path) -> None:
    results = open_workspace(docs).search("refunds settled nightly", mode="keyword")
    # The project holds code: the module, with whole-file evidence, ranks first and the
    # project's prose (rst as much as markdown) after it (docs/search.md, "Ranking code").
    assert [r.path for r in results[:2]] == ["src/shop/refunds.py", "docs/source/install.rst"]
    best = results[1]
    assert (best.path, best.anchors[0]) == ("docs/source/install.rst", "Refund policy")
    assert best.line == 31
    assert best.snippet.startswith("Refunds are settled by the nightly reconciler")


def test_title_underlines_are_no_prose(docs: Path) -> None:
    """What a snippet and the model read of an rst section: its text, not its title's
    underline (nor an overline, nor a setext one)."""
    workspace = open_workspace(docs)
    document = workspace.document("docs/source/changelog.rst")
    lines = split_lines(workspace.read_text(document.path))
    sections = split_sections(document, lines)
    assert [s.anchor for s in sections][:3] == ["Changelog", "2.1.0", "Added"]
    assert [s.prose for s in sections][:3] == [
        "",
        "",
        "* Refunds over 1,000 EUR need a second approval.",
    ]
    results = workspace.search("2.1.0", mode="keyword")
    assert results[0].snippet == "Changelog > 2.1.0"  # the heading path, not "-----"


def test_asciidoc_and_plain_text_sections_are_found(docs: Path) -> None:
    workspace = open_workspace(docs)
    (dispute,) = [r for r in workspace.search("disputed bank", mode="keyword")[:1]]
    assert (dispute.path, dispute.anchors[0]) == ("docs/ops.adoc", "Disputes")
    (page,) = workspace.search("on-call engineer", mode="keyword")[:1]
    assert page.path == "docs/runbook.txt"
    assert page.anchors[0] == "Page the on-call engineer when the reconciler misses a night."
    assert page.line == 3
