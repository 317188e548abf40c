"""Search results: ranked files with their best sections and a snippet (no numpy here:
the quick keyword path of ``cue search`` uses it too).

Everything shown (titles, anchors, snippets) passes the workspace's maskers, one
masking call per result.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import attrs

from cuedeck.models import SearchResult
from cuedeck_search.analysis import terms
from cuedeck_search.snippets import snippet

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from cuedeck.workspace import Workspace
    from cuedeck_search.sections import Section

MAX_ANCHORS = 3


@attrs.frozen
class Answer:
    """The results of one search and what produced them.

    ``answered_by`` is the side that ranked the results: ``keyword`` (also for a hybrid
    search while not every section has a vector), ``semantic`` (among the files that have
    one) or ``hybrid`` (both, every section embedded). ``semantic_coverage`` is the share
    of sections with a vector (None for keyword searches); ``missing`` how many distinct
    texts still need one.
    """

    results: list[SearchResult]
    mode: str
    answered_by: str
    semantic_coverage: float | None
    missing: int = 0


@attrs.frozen
class Ranked:
    """One file of a ranking: its score, its sections' scores, the section at a position
    (made on demand: a large file's 20,000 sections are not all split for one result),
    and each side's part (None for a side the mode does not use; NaN for a file a side
    could not rank)."""

    path: str
    score: float
    section_scores: Sequence[float]
    section: Callable[[int], Section | None]
    keyword: float | None = None
    semantic: float | None = None


def results(
    workspace: Workspace, query: str, ranked: Iterable[Ranked], *, counted: bool = True
) -> list[SearchResult]:
    """A :class:`SearchResult` per ranked file, in order. ``counted=False`` leaves the
    ``tokens`` of a file whose exact count a large refresh deferred unknown (-1): for
    results shown without them, which need not load the token counter."""
    session = workspace.mask_session()
    query_terms = [t for t in terms(query) if t.isalnum() or "_" in t]
    found: list[SearchResult] = []
    for item in ranked:
        document = workspace.index.get(item.path, counted=counted)
        local = list(item.section_scores)
        order = sorted(range(len(local)), key=lambda i: -local[i])[: MAX_ANCHORS * 4]
        # Only the matching sections (and the best one) can be shown: made alone. The
        # file may have changed since the index read it: they show what it holds now.
        order = [at for n, at in enumerate(order) if n == 0 or local[at] > 0]
        sections = {at: part for at in order if (part := item.section(at)) is not None}
        if document is None or not sections:
            continue
        anchors: list[str] = []
        for position in order:
            section = sections.get(position)
            if len(anchors) == MAX_ANCHORS or local[position] <= 0:
                break
            if section is not None and section.anchor and section.anchor not in anchors:
                anchors.append(section.anchor)
        best = sections[next(at for at in order if at in sections)]
        if not best.anchor and anchors:
            # The best match is the file's unnamed head (a module's docstring and imports,
            # text above the first heading): point at the best named section instead, so
            # the line shown is where the first anchor starts.
            best = next(sections[at] for at in order if sections.get(at) and sections[at].anchor)
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
                score=round(float(item.score), 6),
                anchors=tuple(masked[1:-1]),
                line=best.line,
                snippet=masked[-1],
                keyword_score=_part(item.keyword),
                semantic_score=_part(item.semantic),
            )
        )
    return found


def _part(value: float | None) -> float | None:
    if value is None or math.isnan(value):
        return None
    return round(float(value), 6)
