"""Search results: files ranked by their scores, with their best sections and a snippet.

Everything shown (titles, anchors, snippets) passes the workspace's maskers, one
masking call per result.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from cuedeck.models import SearchResult
from cuedeck_search.analysis import terms
from cuedeck_search.snippets import snippet

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from cuedeck.workspace import Workspace
    from cuedeck_search.catalog import Catalog

MAX_ANCHORS = 3


def ranked_files(
    catalog: Catalog, file_scores: NDArray[np.float32], allowed: NDArray[np.bool_], limit: int
) -> list[int]:
    """The best ``limit`` allowed documents scoring above 0, best first, ties by path."""
    candidates = np.flatnonzero(allowed & (file_scores > 0))
    if len(candidates) > limit:
        top = np.argpartition(-file_scores[candidates], limit - 1)[:limit]
        candidates = candidates[top]
    keys = catalog.keys
    return sorted(candidates.tolist(), key=lambda d: (-file_scores[d], keys[d][0]))


def results(
    workspace: Workspace,
    catalog: Catalog,
    query: str,
    ranked: list[int],
    file_scores: NDArray[np.float32],
    section_scores: NDArray[np.float32],
    *,
    keyword_part: NDArray[np.float32] | None = None,
    semantic_part: NDArray[np.float32] | None = None,
) -> list[SearchResult]:
    """A :class:`SearchResult` per document of ``ranked`` (indexes into the catalog)."""
    session = workspace.mask_session()
    query_terms = [t for t in terms(query) if t.isalnum() or "_" in t]
    keys = catalog.keys
    found: list[SearchResult] = []
    for doc_index in ranked:
        document = workspace.index.get(keys[doc_index][0])
        sections = catalog.sections_of(doc_index)
        first = int(catalog.starts[doc_index])
        # The file may have changed since the index read it: show what it holds now.
        local = section_scores[first : first + len(sections)]
        if document is None or not len(local):
            continue
        order = np.argsort(-local, kind="stable")[: MAX_ANCHORS * 4].tolist()
        anchors: list[str] = []
        for position in order:
            section = sections[position]
            if len(anchors) == MAX_ANCHORS or local[position] <= 0:
                break
            if section.anchor and section.anchor not in anchors:
                anchors.append(section.anchor)
        best = sections[order[0]]
        # One masking call per result: titles, headings and snippet are all shown.
        shown = [document.title, *anchors, snippet(best, query_terms)]
        masked = session.mask("\n".join(shown), path=document.path).split("\n")
        if len(masked) != len(shown):
            masked = [session.mask(text, path=document.path) for text in shown]
        found.append(
            SearchResult(
                path=document.path,
                title=masked[0],
                hash=document.sha256,
                tokens=document.tokens,
                score=round(float(file_scores[doc_index]), 6),
                anchors=tuple(masked[1:-1]),
                line=best.line,
                snippet=masked[-1],
                keyword_score=_part(keyword_part, doc_index),
                semantic_score=_part(semantic_part, doc_index),
            )
        )
    return found


def _part(values: NDArray[np.float32] | None, index: int) -> float | None:
    if values is None or math.isnan(values[index]):
        return None
    return round(float(values[index]), 6)
