"""BM25F over sections, scored from postings at query time.

Each section is a bag of terms from three fields: its body, its heading path and the
file name. Field frequencies are weighted and summed before BM25's saturation (the
BM25F way), so a term in the heading counts more than one in a paragraph without letting
one field dominate. Only raw inputs are stored (:mod:`cuedeck_search.postings`):
frequencies and lengths, never scores, so postings saved for unchanged files and postings
of the few files that changed since add up to the exact ranking. (An exact-phrase
bonus was measured and dropped: the same nDCG@10 on the labelled queries for seven times
the query time, benchmarks/README.md.)
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

import numpy as np

from cuedeck_search.analysis import terms
from cuedeck_search.bm25 import KeywordSettings, idf, section_counts, term_score
from cuedeck_search.postings import DocumentTerms, Postings, empty

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from numpy.typing import NDArray

    from cuedeck_search.sections import Section


def tokenise(path: str, sections: Sequence[Section], settings: KeywordSettings) -> DocumentTerms:
    """The weighted field terms of each section of the document at ``path``."""
    vocabulary: dict[str, int] = {}
    local: list[int] = []
    values: list[float] = []
    sizes: list[int] = []
    lengths: list[float] = []
    for counts in section_counts(path, sections, settings):
        local.extend([vocabulary.setdefault(term, len(vocabulary)) for term in counts])
        values.extend(counts.values())
        sizes.append(len(counts))
        lengths.append(float(sum(counts.values())))
    return DocumentTerms(
        vocabulary=tuple(vocabulary),
        local=np.asarray(local, dtype=np.int32),
        frequencies=np.asarray(values, dtype=np.float32),
        row_sizes=np.asarray(sizes, dtype=np.int32),
        lengths=np.asarray(lengths, dtype=np.float32),
    )


def weighed_terms(query: str, scales: Mapping[str, float] | None = None) -> list[tuple[str, float]]:
    """Each term of ``query`` with its weight: how often the query holds it, times its
    ``scales`` entry if it has one."""
    counts = Counter(terms(query)).items()
    if not scales:
        return [(term, float(count)) for term, count in counts]
    return [(term, count * scales.get(term, 1.0)) for term, count in counts]


class KeywordIndex:
    """BM25F section scores over saved postings, less their dead documents, plus fresh ones.

    Sections are numbered base first, then fresh. Document frequencies, the section count
    and the average length count live sections only, so scores are those of postings
    rebuilt from the live documents alone.
    """

    def __init__(self, settings: KeywordSettings | None = None) -> None:
        self.settings = settings or KeywordSettings()
        self.base = empty()
        self.dead: NDArray[np.bool_] = np.zeros(0, dtype=bool)
        self.fresh = self.base
        self._live: NDArray[np.bool_] = np.zeros(0, dtype=bool)
        self._count = 0
        self._average = 1.0

    def reset(self, base: Postings, dead: NDArray[np.bool_], fresh: Postings) -> None:
        """Score ``base`` without its ``dead`` documents, then ``fresh``."""
        self.base, self.dead, self.fresh = base, dead, fresh
        sizes = np.diff(base.doc_ends, prepend=0)
        self._live = np.repeat(~dead, sizes)
        live_lengths = base.lengths[self._live] if dead.any() else base.lengths
        self._count = len(live_lengths) + fresh.sections
        total = float(live_lengths.sum(dtype=np.float64)) + fresh.total_length
        self._average = total / self._count if self._count else 1.0

    @property
    def sections(self) -> int:
        """Sections numbered, dead ones included."""
        return self.base.sections + self.fresh.sections

    def columns(
        self, query: str, scales: Mapping[str, float] | None = None
    ) -> list[tuple[str, float, NDArray[np.integer[Any]], NDArray[np.floating[Any]]]]:
        """Per query term: the term, how often the query holds it (times its ``scales``
        entry, if any), the live sections holding it (base then fresh numbering) and its
        weighted frequency in each."""
        found = []
        pruned = bool(self.dead.any())
        for term, times in weighed_terms(query, scales):
            rows: NDArray[np.integer[Any]]
            tf: NDArray[np.floating[Any]]
            rows, tf = self.base.column(term)
            if pruned and len(rows):
                keep = self._live[rows]
                rows, tf = rows[keep], tf[keep]
            fresh_rows, fresh_tf = self.fresh.column(term)
            if len(fresh_rows):  # the usual case has none: no copy then
                rows = np.concatenate([rows, fresh_rows.astype(np.int64) + self.base.sections])
                tf = np.concatenate([tf, fresh_tf])
            if len(rows):
                found.append((term, times, rows, tf))
        return found

    def scores(self, query: str, scales: Mapping[str, float] | None = None) -> NDArray[np.float64]:
        """BM25F score of every section; 0 when nothing matched. A term in ``scales``
        weighs that much more (less, below 1)."""
        result = np.zeros(self.sections, dtype=np.float64)
        if not self._count:
            return result
        settings, average = self.settings, self._average
        count = self._count
        pruned = bool(self.dead.any())
        for term, times in weighed_terms(query, scales):
            rows, tf = self.base.column(term)
            if pruned and len(rows):
                keep = self._live[rows]
                rows, tf = rows[keep], tf[keep]
            fresh_rows, fresh_tf = self.fresh.column(term)
            df = len(rows) + len(fresh_rows)
            if not df:
                continue
            weight = times * idf(count, df)
            for found, freq, lengths, offset in (
                (rows, tf, self.base.lengths, 0),
                (fresh_rows, fresh_tf, self.fresh.lengths, self.base.sections),
            ):
                if len(found):
                    # float64, term by term, in the order quick.py adds them: both agree.
                    frequency = freq.astype(np.float64)
                    length = lengths[found].astype(np.float64)
                    result[found + offset] += term_score(
                        weight, frequency, length, settings, average
                    )
        return result
