"""Hybrid fusion on the real engine: weighted fusion min-max scales each side per query."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from cuedeck.models import SearchFilters
from cuedeck.workspace import open_workspace
from cuedeck_search.settings import SearchSettings
from tests.search.conftest import FILES

if TYPE_CHECKING:
    from cuedeck_search.engine import SearchEngine
    from tests.conftest import MakeWorkspace

pytest.importorskip("cuedeck_search")

QUERY = "refund the customer's money"


def engine_of(root: Path) -> SearchEngine:
    engine: SearchEngine = open_workspace(root).service("search")
    return engine


def expected_parts(
    engine: SearchEngine, query: str, *, semantic_weight: float = 0.7, keyword_weight: float = 0.3
) -> dict[str, tuple[float, float]]:
    """Per path: the keyword and semantic parts min-max scaling predicts, computed from
    the engine's own per-file scores of each side (files with a vector only)."""
    keyword = engine.keyword_scores(query).files.tolist()
    semantic = engine.semantic_scores(query).files.tolist()
    embedded = [score for score in semantic if score > -1]
    low, high = min(embedded), max(embedded)
    kw_high = max(keyword)
    parts = {}
    for path, kw, sem in zip(engine.paths, keyword, semantic, strict=True):
        kw_part = keyword_weight * kw / kw_high if kw > 0 else 0.0
        sem_part = semantic_weight * (sem - low) / (high - low) if sem > -1 else 0.0
        parts[path] = (kw_part, sem_part)
    return parts


def test_weighted_fusion_is_min_max_of_each_side(small_workspace: Path) -> None:
    engine = engine_of(small_workspace)
    results = engine.search(QUERY, mode="hybrid", limit=50, fusion="weighted")
    expected = expected_parts(engine, QUERY)
    assert results[0].path == ".cuedeck/docs/billing.md"
    assert results[0].semantic_score == pytest.approx(0.7)  # the best cosine scales to 1
    for result in results:
        kw_part, sem_part = expected[result.path]
        assert result.keyword_score == pytest.approx(kw_part, abs=2e-6)
        assert result.semantic_score == pytest.approx(sem_part, abs=2e-6)
        assert result.score == pytest.approx(kw_part + sem_part, abs=4e-6)
    # The file least like the query scales to 0: with no keyword match it is no result.
    least = min(expected, key=lambda path: expected[path][1])
    assert expected[least][1] == 0.0
    assert least not in {r.path for r in results if r.keyword_score == 0}


def test_weights_come_from_the_config(small_workspace: Path) -> None:
    (small_workspace / ".cuedeck/config.toml").write_text(
        '[search]\nwait = true\nfusion = "weighted"\nsemantic_weight = 0.4\nkeyword_weight = 0.6\n'
    )
    engine = engine_of(small_workspace)
    results = engine.search(QUERY, limit=50)
    expected = expected_parts(engine, QUERY, semantic_weight=0.4, keyword_weight=0.6)
    assert max(r.semantic_score or 0 for r in results) == pytest.approx(0.4)
    assert max(r.keyword_score or 0 for r in results) == pytest.approx(0.6)
    for result in results:
        assert (result.keyword_score, result.semantic_score) == (
            pytest.approx(expected[result.path][0], abs=2e-6),
            pytest.approx(expected[result.path][1], abs=2e-6),
        )


def test_files_not_embedded_yet_do_not_stretch_the_scale(
    make_workspace: MakeWorkspace,
) -> None:
    """fuse() scales the semantic side over the files that have a vector (the engine
    itself answers by keyword until all have one: see test_golden.py)."""
    import numpy as np

    from cuedeck_search.fusion import fuse

    root = make_workspace(FILES)  # no [search] wait: searches use the vectors there are
    engine = engine_of(root)
    engine.background = False  # nothing embeds behind the test's back
    engine.sync()
    embedded_paths = {".cuedeck/docs/billing.md", ".cuedeck/docs/deploy.md", "notes/cooking.md"}
    engine.embed_sections([s for s in engine.sections if s.path in embedded_paths])
    answer = engine.answer(QUERY, mode="hybrid", limit=50, fusion="weighted")
    assert answer.answered_by == "keyword" and 0 < answer.semantic_coverage < 1  # type: ignore[operator]
    keyword, semantic = engine.keyword_scores(QUERY), engine.semantic_scores(QUERY)
    allowed = np.ones(len(engine.paths), dtype=bool)
    fused = fuse(
        engine.workspace.config.section("search", SearchSettings), "weighted",
        keyword.files, keyword.sections, semantic.files, semantic.sections, allowed,
    )  # fmt: skip
    expected = expected_parts(engine, QUERY)
    parts = dict(zip(engine.paths, fused.semantic_part.tolist(), strict=True))
    assert parts[".cuedeck/docs/billing.md"] == pytest.approx(0.7)
    for path, part in parts.items():
        assert part == pytest.approx(expected[path][1], abs=2e-6)
        if path not in embedded_paths:
            assert part == 0.0  # no vector: no semantic part
    # The least similar embedded file is the bottom of the scale, not the missing ones.
    least = min(embedded_paths, key=lambda path: expected[path][1])
    assert parts[least] == expected[least][1] == 0.0


def test_the_scale_spans_only_the_files_a_filter_allows(small_workspace: Path) -> None:
    engine = engine_of(small_workspace)
    payments = SearchFilters(tags=("payments",))  # billing.md and one card
    results = engine.search(QUERY, mode="hybrid", limit=50, fusion="weighted", filters=payments)
    assert {r.path for r in results} <= {".cuedeck/docs/billing.md", ".cuedeck/cards/a1b2c3.md"}
    # Each side's best allowed file gets the whole weight, its worst allowed one nothing.
    assert max(r.semantic_score or 0 for r in results) == pytest.approx(0.7)
    assert max(r.keyword_score or 0 for r in results) == pytest.approx(0.3)
    ci = SearchFilters(tags=("ci",))  # one file: alone, it is the best of its scale
    (alone,) = engine.search("speed up the tests", mode="hybrid", fusion="weighted", filters=ci)
    assert alone.path == ".cuedeck/cards/d4e5f6.md"
    assert (alone.semantic_score, alone.keyword_score) == (pytest.approx(0.7), pytest.approx(0.3))


def test_weighted_is_the_default_and_rrf_ignores_scales(small_workspace: Path) -> None:
    engine = engine_of(small_workspace)
    default = engine.search(QUERY, limit=50)
    weighted = engine.search(QUERY, limit=50, fusion="weighted")
    assert [(r.path, r.score) for r in default] == [(r.path, r.score) for r in weighted]
    rrf = engine.search(QUERY, limit=50, fusion="rrf")
    top = rrf[0]
    assert top.path == ".cuedeck/docs/billing.md"
    assert (top.keyword_score, top.semantic_score) == (
        pytest.approx(1 / 61, abs=2e-6),
        pytest.approx(1 / 61, abs=2e-6),
    )
