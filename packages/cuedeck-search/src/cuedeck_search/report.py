"""What search's indexes hold for a workspace (``register_index_reports``): the keyword
postings of its sections and the vectors semantic search has for them."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cuedeck.serving.indexes import IndexReport
    from cuedeck.workspace import Workspace


def search_report(workspace: Workspace) -> IndexReport:
    """The sections search knows and how many have a vector (nothing is embedded here)."""
    from cuedeck_search.engine import SearchEngine

    engine = workspace.service("search")
    assert isinstance(engine, SearchEngine)  # search's own service: its internals are ours
    with engine.held() as catalog:
        sections = int(catalog.live_sections.sum())
        coverage = engine.vectors.coverage()
        vectors = int(coverage.present.sum())
    model = engine.vectors.cache.model_id
    share = vectors / sections if sections else 1.0
    return {
        "name": "search",
        "ready": sections > 0,
        "summary": (
            f"keyword: {sections:,} sections; semantic: {vectors:,} of {sections:,} "
            f"embedded ({share:.0%}, {model})"
        ),
        "details": {
            "sections": sections,
            "embedded": vectors,
            "embedded_share": round(share, 4),
            "model": model,
        },
    }
