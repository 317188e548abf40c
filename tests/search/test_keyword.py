"""Keyword mode: BM25F over sections, through the public search API."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cuedeck import open_workspace
from tests.conftest import MakeWorkspace


def test_exact_identifier_ranks_first(small_workspace: Path) -> None:
    results = open_workspace(small_workspace).search("refresh_access_token", mode="keyword")
    assert results[0].path == ".cuedeck/docs/auth.md"
    assert results[0].anchors[0] == "Token refresh"
    assert results[0].line == 13  # the line of the best section's heading
    assert results[0].keyword_score == results[0].score
    assert results[0].semantic_score is None


def test_stemming_matches_other_word_forms(small_workspace: Path) -> None:
    results = open_workspace(small_workspace).search("refunded customers", mode="keyword")
    assert [r.path for r in results] == [".cuedeck/docs/billing.md"]
    assert results[0].anchors == ("Refunds",)


def test_no_match_is_no_result(small_workspace: Path) -> None:
    assert open_workspace(small_workspace).search("xylophone", mode="keyword") == []


def test_heading_and_file_name_outweigh_a_passing_mention(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(
        {
            "docs/middleware.md": "# Middleware\n\nWraps every request.\n",
            "docs/other.md": "# Other\n\nSome text that mentions middleware once among many "
            "other words about routing, handlers, templates and static files.\n",
        }
    )
    results = open_workspace(root).search("middleware", mode="keyword")
    assert [r.path for r in results] == ["docs/middleware.md", "docs/other.md"]


def test_exact_phrase_gets_a_bonus(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(
        {
            "one.md": "# One\n\nThe token is checked, then the access is logged.\n",
            "two.md": "# Two\n\nThe access token is checked and logged.\n",
        }
    )
    one, two = sorted(open_workspace(root).search("access token", mode="keyword"),
                      key=lambda r: r.path)  # fmt: skip
    assert two.score == pytest.approx(one.score * 1.3, rel=1e-4)


def test_only_changed_files_are_tokenised_again(small_workspace: Path) -> None:
    workspace = open_workspace(small_workspace)
    workspace.search("billing", mode="keyword")
    engine = workspace.service("search")
    assert engine.stats.documents_split == 6
    path = small_workspace / ".cuedeck/docs/billing.md"
    path.write_text(path.read_text() + "\n## Chargebacks\n\nDisputed payments.\n")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    workspace.refresh()
    results = workspace.search("chargebacks", mode="keyword")
    assert engine.stats.documents_split == 7  # one more: the edited file only
    assert results[0].anchors == ("Chargebacks",)


def test_filters_by_tag_priority_and_assignee(small_workspace: Path) -> None:
    from cuedeck.models import SearchFilters

    workspace = open_workspace(small_workspace)
    by_tag = workspace.search(
        "rates invoices", mode="keyword", filters=SearchFilters(tags=("PAYMENTS",))
    )
    assert {r.path for r in by_tag} == {".cuedeck/docs/billing.md", ".cuedeck/cards/a1b2c3.md"}
    by_priority = workspace.search(
        "cache rates", mode="keyword", filters=SearchFilters(priority="high")
    )
    assert [r.path for r in by_priority] == [".cuedeck/cards/a1b2c3.md"]
    assert (
        workspace.search("cache rates", mode="keyword", filters=SearchFilters(priority="low")) == []
    )
    by_assignee = workspace.search("tests", mode="keyword", filters=SearchFilters(assignee="BOB"))
    assert [r.path for r in by_assignee] == [".cuedeck/cards/d4e5f6.md"]


def test_a_long_lived_workspace_sees_edits_after_invalidate(small_workspace: Path) -> None:
    workspace = open_workspace(small_workspace)
    assert workspace.search("sourdough", mode="keyword")[0].path == "notes/cooking.md"
    (small_workspace / "notes/bread.md").write_text("# Rye\n\nA sourdough rye loaf.\n")
    workspace.invalidate()
    paths = {r.path for r in workspace.search("sourdough rye", mode="keyword")}
    assert paths == {"notes/cooking.md", "notes/bread.md"}


def test_a_restart_loads_sections_and_terms_instead_of_tokenising(small_workspace: Path) -> None:
    first = open_workspace(small_workspace)
    expected = first.search("refunds", mode="keyword")
    assert first.service("search").stats.documents_split == 6

    again = open_workspace(small_workspace)
    assert again.search("refunds", mode="keyword") == expected
    stats = again.service("search").stats
    assert (stats.documents_split, stats.documents_loaded) == (0, 6)


def test_a_damaged_stored_document_is_split_again(small_workspace: Path) -> None:
    import sqlite3

    from cuedeck import open_workspace

    first = open_workspace(small_workspace).service("search")
    first.sync()
    database = small_workspace / ".cuedeck/.cache/index.sqlite3"
    with sqlite3.connect(database) as connection:
        connection.execute("UPDATE search_sections SET payload = x'00ff00'")
    again = open_workspace(small_workspace).service("search")
    results = again.search("refunds", mode="keyword")
    assert results and again.stats.documents_loaded == 0  # nothing usable was stored
    assert again.stats.documents_split == len(again.documents)
    fresh = open_workspace(small_workspace).service("search")
    fresh.sync()
    assert fresh.stats.documents_loaded == len(fresh.documents)  # rewritten, whole
