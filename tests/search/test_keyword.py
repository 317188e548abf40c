"""Keyword mode: BM25F over sections, through the public search API."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path
from typing import Any

import pytest

from cuedeck import open_workspace
from tests.conftest import MakeWorkspace, run_script


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


def test_word_order_does_not_matter(make_workspace: MakeWorkspace) -> None:
    """No phrase bonus (dropped: same quality, seven times the query time)."""
    root = make_workspace(
        {
            "one.md": "# One\n\nThe token is checked, then the access is logged.\n",
            "two.md": "# Two\n\nThe access token is checked and logged.\n",
        }
    )
    one, two = sorted(open_workspace(root).search("access token", mode="keyword"),
                      key=lambda r: r.path)  # fmt: skip
    assert two.score == pytest.approx(one.score, rel=1e-6)


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


POSTINGS = ".cuedeck/.cache/keyword.postings"


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda data: b"", id="empty"),
        pytest.param(lambda data: data[: len(data) // 2], id="truncated"),
        pytest.param(lambda data: b"garbage" + data[7:], id="bad-magic"),
        pytest.param(
            lambda data: data.replace(b"cuedeck-postings/3", b"cuedeck-postings/1"),
            id="other-format",
        ),
    ],
)
def test_damaged_saved_postings_are_rebuilt(small_workspace: Path, damage: Any) -> None:
    first = open_workspace(small_workspace)
    expected = first.search("refunds", mode="keyword")
    saved = small_workspace / POSTINGS
    saved.write_bytes(damage(saved.read_bytes()))

    again = open_workspace(small_workspace)
    assert again.search("refunds", mode="keyword") == expected
    stats = again.service("search").stats
    assert (stats.documents_loaded, stats.documents_split) == (6, 6)  # split again, whole
    third = open_workspace(small_workspace)
    assert third.search("refunds", mode="keyword") == expected
    assert third.service("search").stats.documents_split == 0  # the rebuilt file is used


def test_postings_pointing_outside_the_sections_are_rebuilt(small_workspace: Path) -> None:
    import numpy as np

    first = open_workspace(small_workspace)
    expected = first.search("refunds", mode="keyword")
    saved = small_workspace / POSTINGS
    data = bytearray(saved.read_bytes())
    header = json.loads(data[16 : 16 + int.from_bytes(data[8:16], "little")])
    start = (16 + int.from_bytes(data[8:16], "little") + 63) // 64 * 64
    _, shape, offset = header["arrays"]["rows"]
    rows = np.full(shape, 10_000, dtype=np.int32)  # every posting past the last section
    data[start + offset : start + offset + rows.nbytes] = rows.tobytes()
    saved.write_bytes(bytes(data))

    again = open_workspace(small_workspace)
    assert again.search("refunds", mode="keyword") == expected


def test_changes_made_while_no_process_ran_are_seen(small_workspace: Path) -> None:
    open_workspace(small_workspace).search("refunds", mode="keyword")
    (small_workspace / "notes/bread.md").write_text("# Rye\n\nA sourdough rye loaf.\n")
    (small_workspace / ".cuedeck/docs/billing.md").unlink()

    again = open_workspace(small_workspace)
    assert again.search("refunds", mode="keyword") == []
    assert [r.path for r in again.search("rye", mode="keyword")] == ["notes/bread.md"]
    stats = again.service("search").stats
    assert (stats.documents_split, stats.documents_loaded) == (1, 5)  # the new file only


def forty_files() -> dict[str, str]:
    """Forty small docs over eight words, each mixed differently (varied BM25 inputs)."""
    words = ["alpha", "beta", "gamma", "delta", "token", "access", "refresh", "cache"]
    return {
        f"docs/d{n}.md": f"# Doc {n}\n\n" + " ".join(words[(n * k) % 8] for k in range(n + 3))
        for n in range(40)
    }


def test_saved_plus_fresh_postings_score_as_a_rebuild(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(forty_files())
    open_workspace(root).search("alpha", mode="keyword")  # saves postings of 40 files
    for n in (3, 7):  # fewer than MERGE_MIN changes: scored as saved plus fresh
        (root / f"docs/d{n}.md").write_text(f"# Doc {n}\n\naccess token access cache\n")
    (root / "docs/d11.md").unlink()
    (root / "docs/new.md").write_text("# New\n\nrefresh the access token\n")

    incremental = open_workspace(root)
    queries = ["access token", "alpha beta", "cache", "refresh"]
    mixed = [incremental.search(q, mode="keyword", limit=50) for q in queries]
    engine = incremental.service("search")
    assert engine.catalog.keyword.dead.sum() == 3 and engine.stats.documents_split == 3
    (root / POSTINGS).unlink()
    rebuilt = open_workspace(root)
    whole = [rebuilt.search(q, mode="keyword", limit=50) for q in queries]
    assert rebuilt.service("search").stats.documents_split == 40
    for got, expected in zip(mixed, whole, strict=True):
        assert [r.path for r in got] == [r.path for r in expected]
        assert [r.score for r in got] == pytest.approx([r.score for r in expected], rel=1e-5)


def test_many_changes_are_merged_into_the_saved_postings(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({f"docs/d{n}.md": f"# Doc {n}\n\nword{n} shared\n" for n in range(80)})
    open_workspace(root).search("shared", mode="keyword")
    for n in range(70):
        (root / f"docs/d{n}.md").write_text(f"# Doc {n}\n\nchanged{n} shared\n")
    again = open_workspace(root)
    assert again.search("changed", mode="keyword", limit=100)[0].path == "docs/d0.md"
    assert len(again.search("changed", mode="keyword", limit=100)) == 70
    engine = again.service("search")
    assert engine.stats.catalog.merges == 1 and not engine.catalog.keyword.dead.any()
    third = open_workspace(root)
    assert len(third.search("changed", mode="keyword", limit=100)) == 70
    assert third.service("search").stats.documents_split == 0


def test_a_long_lived_engine_follows_reported_files_exactly(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(forty_files())
    workspace = open_workspace(root)
    workspace.search("alpha", mode="keyword")
    engine = workspace.service("search")
    split = engine.stats.documents_split
    (root / "docs/d3.md").write_text("# Doc 3\n\naccess token access cache\n")
    (root / "docs/d11.md").unlink()
    (root / "docs/new.md").write_text("# New\n\nrefresh the access token\n")
    workspace.refresh_paths(["docs/d3.md", "docs/d11.md", "docs/new.md"])  # a watcher's report
    queries = ["access token", "alpha beta", "cache", "refresh"]
    followed = [workspace.search(q, mode="keyword", limit=50) for q in queries]
    assert engine.stats.documents_split == split + 2  # the edited and the new file only

    (root / POSTINGS).unlink()
    rebuilt = open_workspace(root)
    for got, query in zip(followed, queries, strict=True):
        expected = rebuilt.search(query, mode="keyword", limit=50)
        assert [r.path for r in got] == [r.path for r in expected]
        assert [r.score for r in got] == pytest.approx([r.score for r in expected], rel=1e-5)


BUILD = textwrap.dedent("""
    import json
    from cuedeck import open_workspace
    from cuedeck.system import parallel

    parallel.MIN_ITEMS = 10
    forked = []
    original = parallel._forked
    parallel._forked = lambda *args: forked.append(True) or original(*args)
    workspace = open_workspace(ROOT)
    answers = {
        query: [[r.path, r.line, r.score] for r in workspace.search(query, mode="keyword")]
        for query in ("access token", "alpha beta", "cache", "refresh doc")
    }
    stats = workspace.service("search").stats
    print(json.dumps({
        "forked": len(forked), "answers": answers, "split": stats.documents_split,
    }))
""")


@pytest.mark.slow
def test_postings_tokenised_by_workers_equal_those_made_here(make_workspace: MakeWorkspace) -> None:
    roots = [make_workspace(forty_files()) for _ in range(2)]
    forked = run_script(BUILD.replace("ROOT", repr(str(roots[0]))), CUEDECK_WORKERS="2")
    here = run_script(BUILD.replace("ROOT", repr(str(roots[1]))), CUEDECK_WORKERS="1")
    # Indexing and tokenising each forked once there, never here.
    assert (forked.pop("forked"), here.pop("forked")) == (2, 0)
    assert forked == here and forked["split"] == 40
    assert all(forked["answers"].values())
    assert (roots[0] / POSTINGS).read_bytes() == (roots[1] / POSTINGS).read_bytes()


def test_index_rebuild_rebuilds_the_saved_postings(small_workspace: Path) -> None:
    from click.testing import CliRunner

    from cuedeck_cli.app import make_cli

    postings = small_workspace / ".cuedeck/.cache/keyword.postings"
    assert CliRunner().invoke(make_cli(), ["-C", str(small_workspace), "index"]).exit_code == 0
    before = postings.stat().st_mtime_ns
    os.utime(postings, ns=(before - 10**9, before - 10**9))  # older, whatever the clock
    result = CliRunner().invoke(make_cli(), ["-C", str(small_workspace), "index", "--rebuild"])
    assert result.exit_code == 0, result.output
    assert postings.stat().st_mtime_ns > before - 10**9
    assert open_workspace(small_workspace).search("refunds", mode="keyword")[0].path == (
        ".cuedeck/docs/billing.md"
    )


def test_a_large_file_is_not_split_again_to_show_a_result(make_workspace: MakeWorkspace) -> None:
    parts = [f"## Part {n}\n\nOrdinary words about topic {n}.\n" for n in range(3000)]
    parts[1234] = "## The needle\n\nA zanzibar appears here once.\n"
    root = make_workspace({"big.md": "# Big\n\n" + "\n".join(parts), "small.md": "# Small\n"})
    open_workspace(root).search("topic", mode="keyword")  # tokenises, saves the postings
    workspace = open_workspace(root)
    (found,) = workspace.search("zanzibar", mode="keyword")
    assert (found.path, found.anchors, found.line) == ("big.md", ("The needle",), 3 + 4 * 1234)
    assert found.snippet == "A zanzibar appears here once."
    stats = workspace.service("search").stats.catalog
    assert (stats.documents_split, stats.files_split) == (0, 0)  # one section made, no split


def test_a_built_engine_follows_the_index_without_a_search(make_workspace: MakeWorkspace) -> None:
    """cuedeck_after_refresh: an engine the workspace built learns of a file the index
    read (a watcher's report) before any search; a workspace that built none builds
    none."""
    from cuedeck.plugins.services import SearchService

    root = make_workspace({"a.md": "# A\n\nalpha\n"})
    bare = open_workspace(root)
    bare.refresh()
    assert bare.built_service(SearchService) is None  # a refresh builds no engine
    workspace = open_workspace(root)
    engine = workspace.service(SearchService)
    workspace.refresh()
    assert "a.md" in engine.paths  # type: ignore[attr-defined]
    (root / "b.md").write_text("# B\n\nbeta\n")
    workspace.refresh_paths(["b.md"])
    assert "b.md" in engine.paths  # type: ignore[attr-defined]
