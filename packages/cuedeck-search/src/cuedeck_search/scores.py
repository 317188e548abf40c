"""One query's scores: per section, per file, and how section scores become file scores.

Keyword: a file scores its best section plus a decaying share of the next ones (a page
with several matching sections beats a stub whose one short section matches as well);
where the workspace holds code, code files add their whole-file evidence and their past
changes' titles, and tests are demoted (:mod:`cuedeck_search.code_files`). Semantic: a
file scores its best section.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from cuedeck_search.bm25 import SUPPORT_DECAY, SUPPORT_DEPTH
from cuedeck_search.code_files import combine, whole_files

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from cuedeck_search.catalog import Catalog


@attrs.frozen
class Scored:
    """Per-file scores of one side (keyword or semantic) and the per-section ones."""

    sections: NDArray[np.floating[Any]]
    files: NDArray[np.floating[Any]]


@attrs.frozen
class SectionScores:
    """Both sides' scores of one query per section (indexed like the catalog's sections),
    for rankers of sections such as cuedeck-code's ``search_code``.

    ``semantic`` is the cosine similarity, -1 for a section without a vector, or None
    when the keyword side answers: a keyword search, or a hybrid one while not every
    section has a vector (fusing part of the sections pushes that part up).
    ``coverage`` is the share of sections with a vector (None for keyword searches).
    """

    keyword: NDArray[np.floating[Any]]
    semantic: NDArray[np.floating[Any]] | None
    answered_by: str
    coverage: float | None
    #: The keyword side for rankers of definitions: code sections with their file's
    #: evidence, tests demoted (:func:`cuedeck_search.code_files.definitions`).
    definitions: NDArray[np.floating[Any]] | None = None
    #: The semantic side's weight when a ranker of definitions fuses the two (the
    #: workspace's hybrid weight, ``SearchEngine.fusion_settings``).
    semantic_weight: float = 0.3
    #: Sections of the definitions the query names, to rank first
    #: (``SearchEngine.named_sections``).
    named: tuple[int, ...] = ()


def best_per_file(catalog: Catalog, sections: NDArray[np.floating[Any]]) -> NDArray[np.float32]:
    """Each document's best section score (0 for a document without sections)."""
    if not len(sections):
        return np.zeros(len(catalog.keys), dtype=np.float32)
    return np.maximum.reduceat(sections, catalog.starts).astype(np.float32)


def with_support(catalog: Catalog, sections: NDArray[np.floating[Any]]) -> NDArray[np.float64]:
    """Per file: its best section plus a decaying share of the next ones.

    (Measured: +0.065 nDCG@10 for keyword on the labelled queries, none for semantic,
    whose best section alone ranks best.)
    """
    positive = np.flatnonzero(sections > 0)
    files = np.zeros(len(catalog.keys), dtype=np.float64)
    if not len(positive):
        return files
    section_doc = catalog.section_doc
    docs = section_doc[positive]
    order = positive[np.lexsort((-sections[positive], docs))]
    docs = section_doc[order]
    rank = np.arange(len(order)) - np.searchsorted(docs, docs, side="left")
    kept = rank < SUPPORT_DEPTH
    weights = SUPPORT_DECAY ** rank[kept].astype(np.float64)
    np.add.at(files, docs[kept], sections[order][kept] * weights)
    return files  # float64, summed best first: quick.py sums the same way


def code_files(
    catalog: Catalog,
    query: str,
    files: NDArray[np.float64],
    history: NDArray[np.float64] | None,
    factors: NDArray[np.float64],
    scales: dict[str, float] | None = None,
) -> NDArray[np.float64]:
    """File scores of a workspace holding code: ``files`` (best section plus support) with
    whole-file evidence (query terms weighed by ``scales``), the past changes' ``history``
    scores and each file's factor (:mod:`cuedeck_search.code_files`)."""
    settings = catalog.keyword.settings
    columns = [
        (term, times, catalog.section_doc[rows], tf)
        for term, times, rows, tf in catalog.keyword.columns(query, scales)
    ]
    whole = whole_files(
        columns, catalog.doc_lengths, catalog.evidence_docs, settings.k1, settings.b
    )
    return combine(files, whole, factors, history)


def demoted(files: NDArray[np.floating[Any]], factors: NDArray[np.float64]) -> NDArray[np.float32]:
    """Semantic file scores with each file's factor applied to a positive cosine (tests
    and examples demoted as on the keyword side; the order of the rest is kept)."""
    return np.where(files > 0, files * factors, files).astype(np.float32)
