"""BM25F over sections, scored from postings at query time.

Each section is a bag of terms from three fields: its body, its heading path and the
file name. Field frequencies are weighted and summed before BM25's saturation (the
BM25F way), so a term in the heading counts more than one in a paragraph without letting
one field dominate. Only raw inputs are stored (:mod:`cuedeck_search.postings`):
frequencies and lengths, never scores, so postings saved for unchanged files and postings
of the few files that changed since add up to the exact ranking. A section holding the
query as an exact phrase gets a bonus.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from typing import TYPE_CHECKING

import attrs
import numpy as np

from cuedeck_search.analysis import term_counts, terms

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from numpy.typing import NDArray

    from cuedeck_search.postings import Postings
    from cuedeck_search.sections import Section

_SPACE = re.compile(r"\s+")


@attrs.frozen
class KeywordSettings:
    """Ranking constants; the defaults were tuned on the labelled fastapi queries."""

    k1: float = 1.2
    b: float = 0.75
    heading_weight: float = 3.0
    path_weight: float = 1.0
    name_weight: float = 2.0
    phrase_bonus: float = 0.3


@attrs.frozen
class DocumentTerms:
    """The terms of one document's sections: its own vocabulary, then flat arrays.

    Row ``i`` (section ``i``) owns ``row_sizes[i]`` consecutive entries of ``local``
    (indexes into ``vocabulary``) and ``frequencies``; ``lengths`` are the weighted
    section lengths.
    """

    vocabulary: tuple[str, ...]
    local: NDArray[np.int32]
    frequencies: NDArray[np.float32]
    row_sizes: NDArray[np.int32]
    lengths: NDArray[np.float32]


def name_terms(path: str) -> list[str]:
    """Terms of a file's name (``tutorial/query-params.md`` -> query, param)."""
    stem_ = posixpath.splitext(posixpath.basename(path))[0]
    if stem_.lower() in ("index", "readme"):
        stem_ = posixpath.basename(posixpath.dirname(path)) or stem_
    return terms(stem_.replace("-", " ").replace("_", " "))


def tokenise(path: str, sections: Sequence[Section], settings: KeywordSettings) -> DocumentTerms:
    """The weighted field terms of each section of the document at ``path``."""
    name = Counter(name_terms(path))
    vocabulary: dict[str, int] = {}
    local: list[int] = []
    values: list[float] = []
    sizes: list[int] = []
    lengths: list[float] = []
    for section in sections:
        body = section.text
        if section.anchor is not None and section.kind is None:
            body = body.partition("\n")[2]  # the heading line is a field of its own
        counts = term_counts(body)
        *ancestors, own = section.heading_path or ("",)
        if own:
            term_counts(own, settings.heading_weight, counts)
        if ancestors:
            term_counts(" ".join(ancestors), settings.path_weight, counts)
        for term, times in name.items():
            counts[term] = counts.get(term, 0.0) + settings.name_weight * times
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


class KeywordIndex:
    """BM25F section scores over saved postings, less their dead documents, plus fresh ones.

    Sections are numbered base first, then fresh. Document frequencies, the section count
    and the average length count live sections only, so scores are those of postings
    rebuilt from the live documents alone.
    """

    def __init__(self, settings: KeywordSettings | None = None) -> None:
        from cuedeck_search.postings import empty

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
        total = float(live_lengths.sum(dtype=np.float64)) + float(fresh.lengths.sum())
        self._average = total / self._count if self._count else 1.0

    @property
    def sections(self) -> int:
        """Sections numbered, dead ones included."""
        return self.base.sections + self.fresh.sections

    def scores(
        self, query: str, section_text: Callable[[Sequence[int]], list[str]]
    ) -> NDArray[np.float32]:
        """BM25F score of every section; 0 when nothing matched. ``section_text(ids)``
        gives the text of sections that may get the phrase bonus."""
        result = np.zeros(self.sections, dtype=np.float32)
        if not self._count:
            return result
        k1, b, average = self.settings.k1, self.settings.b, self._average
        count = self._count
        pruned = bool(self.dead.any())
        for term, times in Counter(terms(query)).items():
            rows, tf = self.base.column(term)
            if pruned and len(rows):
                keep = self._live[rows]
                rows, tf = rows[keep], tf[keep]
            fresh_rows, fresh_tf = self.fresh.column(term)
            df = len(rows) + len(fresh_rows)
            if not df:
                continue
            idf = np.float32(np.log1p((count - df + 0.5) / (df + 0.5)))
            for found, freq, lengths, offset in (
                (rows, tf, self.base.lengths, 0),
                (fresh_rows, fresh_tf, self.fresh.lengths, self.base.sections),
            ):
                if len(found):
                    norm = k1 * (1.0 - b + b * lengths[found] / average)
                    saturated = freq * (k1 + 1.0) / (freq + norm)
                    result[found + offset] += np.float32(times) * idf * saturated
        self._phrase(query, result, section_text)
        return result

    def _phrase(
        self,
        query: str,
        result: NDArray[np.float32],
        section_text: Callable[[Sequence[int]], list[str]],
    ) -> None:
        """Multiply the score of sections holding the query verbatim (two words or more)."""
        phrase = _SPACE.sub(" ", query.strip().lower())
        if " " not in phrase or self.settings.phrase_bonus <= 0:
            return
        candidates = np.flatnonzero(result)
        if len(candidates) > 200:  # only the best ones can be lifted into the results
            candidates = candidates[np.argpartition(-result[candidates], 200)[:200]]
        ids = candidates.tolist()
        for index, text in zip(ids, section_text(ids), strict=True):
            if phrase in _SPACE.sub(" ", text.lower()):
                result[index] *= 1.0 + self.settings.phrase_bonus
