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
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from cuedeck_search.analysis import term_counts, terms

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
class DocumentTerms:
    """The terms of one document's sections: its own vocabulary, then flat arrays.

    Row ``i`` (section ``i``) owns ``row_sizes[i]`` consecutive entries of ``local``
    (indexes into ``vocabulary``) and ``frequencies``; ``lengths`` are the weighted
    section lengths. Kept in the cache as bytes, so a restart tokenises nothing.
    """

    vocabulary: tuple[str, ...]
    local: NDArray[np.int32]
    frequencies: NDArray[np.float32]
    row_sizes: NDArray[np.int32]
    lengths: NDArray[np.float32]

    def to_bytes(self) -> tuple[str, bytes, int, int]:
        """``(vocabulary text, arrays, entries, rows)`` for the cache."""
        blob = b"".join(
            a.tobytes() for a in (self.local, self.frequencies, self.row_sizes, self.lengths)
        )
        return "\n".join(self.vocabulary), blob, len(self.local), len(self.row_sizes)

    @classmethod
    def from_bytes(cls, vocabulary: str, blob: bytes, entries: int, rows: int) -> DocumentTerms:
        """The inverse of :meth:`to_bytes`."""
        local = np.frombuffer(blob, dtype=np.int32, count=entries)
        frequencies = np.frombuffer(blob, dtype=np.float32, count=entries, offset=4 * entries)
        sizes = np.frombuffer(blob, dtype=np.int32, count=rows, offset=8 * entries)
        lengths = np.frombuffer(blob, dtype=np.float32, count=rows, offset=8 * entries + 4 * rows)
        words = tuple(vocabulary.split("\n")) if vocabulary else ()
        return cls(words, local, frequencies, sizes, lengths)


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
        if section.anchor is not None:
            body = body.partition("\n")[2]  # the heading line is a field of its own
        counts = term_counts(body)
        *ancestors, own = section.heading_path or ("",)
        term_counts(own, settings.heading_weight, counts)
        term_counts(" ".join(ancestors), settings.path_weight, counts)
        for term, times in name.items():
            counts[term] = counts.get(term, 0.0) + settings.name_weight * times
        for term, weight in counts.items():
            local.append(vocabulary.setdefault(term, len(vocabulary)))
            values.append(weight)
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
    """Section scores for a query by BM25F over the documents given to :meth:`update`."""

    def __init__(self, settings: KeywordSettings | None = None) -> None:
        self.settings = settings or KeywordSettings()
        self.vocabulary: dict[str, int] = {}
        self._global: dict[tuple[str, str], NDArray[np.int32]] = {}  # key -> term ids
        self._weights: Any = None  # scipy csc_matrix, sections x terms
        self._phrase_texts: list[str | None] = []
        self.sections: list[Section] = []

    def _ids(self, key: tuple[str, str], terms_: DocumentTerms) -> NDArray[np.int32]:
        found = self._global.get(key)
        if found is None:
            vocabulary = self.vocabulary
            mapping = np.fromiter(
                (vocabulary.setdefault(t, len(vocabulary)) for t in terms_.vocabulary),
                dtype=np.int32,
                count=len(terms_.vocabulary),
            )
            found = mapping[terms_.local] if len(terms_.local) else terms_.local
        return found

    def update(
        self, documents: Iterable[tuple[tuple[str, str], Sequence[Section], DocumentTerms]]
    ) -> None:
        """Index exactly these ``((path, sha256), sections, terms)``."""
        from scipy.sparse import csr_matrix

        ids_by_key: dict[tuple[str, str], NDArray[np.int32]] = {}
        parts: list[DocumentTerms] = []
        sections: list[Section] = []
        for key, doc_sections, doc_terms in documents:
            ids_by_key[key] = self._ids(key, doc_terms)
            parts.append(doc_terms)
            sections.extend(doc_sections)
        self._global = ids_by_key
        self.sections = sections
        self._phrase_texts = [None] * len(sections)
        if not parts:
            self._weights = None
            return
        ids = np.concatenate(list(ids_by_key.values()))
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
        sub = self._weights[:, columns]
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
