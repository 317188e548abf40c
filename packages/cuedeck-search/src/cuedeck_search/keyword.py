"""BM25F over sections, on a scipy sparse matrix, rebuilt incrementally.

Each section is a bag of terms from three fields: its body, its heading path and the
file name. Field frequencies are weighted and summed before BM25's saturation (the
BM25F way), so a term in the heading counts more than one in a paragraph without letting
one field dominate. Terms of a document are kept by its path and sha256: a refresh
re-tokenises only files whose content changed, then reassembles the matrix, which costs
a few array concatenations. A section holding the query as an exact phrase gets a bonus.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from typing import TYPE_CHECKING

import attrs
import numpy as np

from cuedeck_search.analysis import terms

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from numpy.typing import NDArray

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
class _DocumentTerms:
    """The term ids, weighted frequencies and lengths of one document's sections."""

    ids: NDArray[np.int32]
    frequencies: NDArray[np.float32]
    row_sizes: NDArray[np.int32]
    lengths: NDArray[np.float32]


def name_terms(path: str) -> list[str]:
    """Terms of a file's name (``tutorial/query-params.md`` -> query, param)."""
    stem_ = posixpath.splitext(posixpath.basename(path))[0]
    if stem_.lower() in ("index", "readme"):
        stem_ = posixpath.basename(posixpath.dirname(path)) or stem_
    return terms(stem_.replace("-", " ").replace("_", " "))


class KeywordIndex:
    """Section scores for a query by BM25F; :meth:`update` keeps it in step."""

    def __init__(self, settings: KeywordSettings | None = None) -> None:
        self.settings = settings or KeywordSettings()
        self.vocabulary: dict[str, int] = {}
        self._documents: dict[tuple[str, str], _DocumentTerms] = {}
        self._weights: object = None  # scipy csc_matrix, sections x terms
        self._phrase_texts: list[str | None] = []
        self.sections: list[Section] = []
        self.tokenised = 0  # documents tokenised so far (tests and benchmarks read it)

    def _term_ids(self, counts: Counter[str]) -> tuple[list[int], list[float]]:
        ids: list[int] = []
        values: list[float] = []
        vocabulary = self.vocabulary
        for term, count in counts.items():
            index = vocabulary.get(term)
            if index is None:
                index = vocabulary[term] = len(vocabulary)
            ids.append(index)
            values.append(count)
        return ids, values

    def _tokenise(self, path: str, sections: Sequence[Section]) -> _DocumentTerms:
        settings = self.settings
        name = Counter(name_terms(path))
        all_ids: list[int] = []
        all_values: list[float] = []
        sizes: list[int] = []
        lengths: list[float] = []
        for section in sections:
            counts: Counter[str] = Counter()
            body = section.text
            if section.anchor is not None:
                body = body.partition("\n")[2]  # the heading line is a field of its own
            for term in terms(body):
                counts[term] += 1
            *ancestors, own = section.heading_path or ("",)
            for term in terms(own):
                counts[term] += settings.heading_weight  # type: ignore[assignment]
            for term in terms(" ".join(ancestors)):
                counts[term] += settings.path_weight  # type: ignore[assignment]
            for term, count in name.items():
                counts[term] += settings.name_weight * count  # type: ignore[assignment]
            ids, values = self._term_ids(counts)
            all_ids.extend(ids)
            all_values.extend(values)
            sizes.append(len(ids))
            lengths.append(float(sum(values)))
        return _DocumentTerms(
            ids=np.asarray(all_ids, dtype=np.int32),
            frequencies=np.asarray(all_values, dtype=np.float32),
            row_sizes=np.asarray(sizes, dtype=np.int32),
            lengths=np.asarray(lengths, dtype=np.float32),
        )

    def update(self, documents: Iterable[tuple[str, str, Sequence[Section]]]) -> None:
        """Index exactly these ``(path, sha256, sections)``; only new content is tokenised."""
        from scipy.sparse import csr_matrix

        kept: dict[tuple[str, str], _DocumentTerms] = {}
        sections: list[Section] = []
        for path, sha, doc_sections in documents:
            key = (path, sha)
            found = self._documents.get(key)
            if found is None:
                found = self._tokenise(path, doc_sections)
                self.tokenised += 1
            kept[key] = found
            sections.extend(doc_sections)
        self._documents = kept
        self.sections = sections
        self._phrase_texts = [None] * len(sections)
        parts = list(kept.values())
        if not parts:
            self._weights = None
            return
        ids = np.concatenate([p.ids for p in parts])
        tf = np.concatenate([p.frequencies for p in parts])
        sizes = np.concatenate([p.row_sizes for p in parts])
        lengths = np.concatenate([p.lengths for p in parts])
        count = len(sizes)
        indptr = np.zeros(count + 1, dtype=np.int64)
        np.cumsum(sizes, out=indptr[1:])
        vocabulary_size = len(self.vocabulary)
        df = np.bincount(ids, minlength=vocabulary_size).astype(np.float32)
        idf = np.log1p((count - df + 0.5) / (df + 0.5)).astype(np.float32)
        average = float(lengths.mean()) or 1.0
        k1, b = self.settings.k1, self.settings.b
        row_lengths = np.repeat(lengths, sizes)
        saturated = tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * row_lengths / average))
        weights = csr_matrix((idf[ids] * saturated, ids, indptr), shape=(count, vocabulary_size))
        self._weights = weights.tocsc()

    def scores(self, query: str) -> NDArray[np.float32]:
        """BM25F score of every section (in :attr:`sections` order); 0 when nothing matched."""
        count = len(self.sections)
        if self._weights is None or not count:
            return np.zeros(count, dtype=np.float32)
        wanted = Counter(t for t in terms(query) if t in self.vocabulary)
        if not wanted:
            return np.zeros(count, dtype=np.float32)
        columns = [self.vocabulary[t] for t in wanted]
        repeats = np.asarray(list(wanted.values()), dtype=np.float32)
        sub = self._weights[:, columns]  # type: ignore[index]
        result = np.asarray(sub @ repeats, dtype=np.float32).ravel()
        self._phrase(query, result)
        return result

    def _phrase(self, query: str, result: NDArray[np.float32]) -> None:
        """Multiply the score of sections holding the query verbatim (two words or more)."""
        phrase = _SPACE.sub(" ", query.strip().lower())
        if " " not in phrase or self.settings.phrase_bonus <= 0:
            return
        candidates = np.flatnonzero(result)
        if len(candidates) > 200:  # only the best ones can be lifted into the results
            candidates = candidates[np.argpartition(-result[candidates], 200)[:200]]
        for index in candidates:
            text = self._phrase_texts[index]
            if text is None:
                section = self.sections[index]
                text = _SPACE.sub(" ", f"{section.context}\n{section.text}".lower())
                self._phrase_texts[index] = text
            if phrase in text:
                result[index] *= 1.0 + self.settings.phrase_bonus
