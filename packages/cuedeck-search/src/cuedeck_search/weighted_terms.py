"""Sections into BM25F's weighted term frequencies, many documents at a time, as arrays.

A cold index reads every section of every file once, here. The result is what
:func:`cuedeck_search.bm25.section_counts` gives each section (the quick path and single
edits use that), made without a dict per section: Python's work is one pattern search
per field and one dictionary lookup per word, numbering it; each distinct word is
analysed into terms once; numpy does the rest. Sorting ``(field, word)`` pairs gives
each field's counts in order of first occurrence, as a ``Counter`` holds them, and
sorting ``(term, section)`` pairs sums each section's weighted counts in the order
``section_counts`` adds them (body, heading, enclosing headings, file name), so the
frequencies come out the same (to the bit for weights that are whole numbers, as the
defaults are; to float32 rounding otherwise)."""

from __future__ import annotations

from collections import defaultdict
from itertools import chain, count
from typing import TYPE_CHECKING

import numpy as np

from cuedeck_search.analysis import TRAILING, WORD, word_terms
from cuedeck_search.bm25 import name_text
from cuedeck_search.postings import Key, Postings, assemble, hash_array, stable_order

if TYPE_CHECKING:
    from collections.abc import Iterable

    from numpy.typing import NDArray

    from cuedeck_search.bm25 import KeywordSettings
    from cuedeck_search.sections import KeywordSection


class Tokeniser:
    """Collects documents (:meth:`add`), then gives their postings (:meth:`postings`)."""

    def __init__(self, settings: KeywordSettings) -> None:
        self.settings = settings
        self.keys: list[Key] = []
        self._sizes: list[int] = []  # sections per document
        self._sections = 0
        self._lines: list[int] = []  # first and last line of each section, flat
        self._hashes: list[str] = []
        # One group per (section, field): its section, weight and number of words.
        self._groups: list[int] = []
        self._weights: list[float] = []
        self._widths: list[int] = []
        # Words numbered by first appearance (in C: a defaultdict counting).
        self._word_ids: defaultdict[str, int] = defaultdict(count().__next__)
        self._words: list[int] = []  # every word of each group, group after group

    def add(self, key: Key, sections: Iterable[KeywordSection]) -> None:
        """Take the sections of the document at ``key``."""
        settings = self.settings
        name = WORD.findall(name_text(key[0]))
        section = first = self._sections
        for body, heading_path, line, end_line, digest in sections:
            self._group(section, WORD.findall(body), 1.0)
            *ancestors, own = heading_path or ("",)
            if own:
                self._group(section, WORD.findall(own), settings.heading_weight)
            if ancestors:
                self._group(section, WORD.findall(" ".join(ancestors)), settings.path_weight)
            if name:
                self._group(section, name, settings.name_weight)
            self._lines += (line, end_line)
            self._hashes.append(digest)
            section += 1
        self.keys.append(key)
        self._sizes.append(section - first)
        self._sections = section

    def _group(self, section: int, words: list[str], weight: float) -> None:
        self._groups.append(section)
        self._weights.append(weight)
        self._widths.append(len(words))
        self._words += map(self._word_ids.__getitem__, words)

    def postings(self) -> Postings:
        """The postings of the documents added, in the order they were added."""
        sections = self._sections
        # Each distinct word analysed once; terms numbered by first appearance.
        analysed = [word_terms(word.rstrip(TRAILING)) for word in self._word_ids]
        flat = list(chain.from_iterable(analysed))
        term_ids: defaultdict[str, int] = defaultdict(count().__next__)
        term_of = np.fromiter(map(term_ids.__getitem__, flat), np.int64, len(flat))
        ends = np.zeros(len(analysed) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, analysed), np.int64, len(analysed)), out=ends[1:])
        # Each group's distinct words in order of first occurrence, with their counts:
        # what a Counter of the group's words holds (counted by one sort, not a dict).
        widths = np.asarray(self._widths, dtype=np.int64)
        occurrences = np.asarray(self._words, dtype=np.int64)
        group_of = np.repeat(np.arange(len(widths), dtype=np.int64), widths)
        order, _, run = _grouped(group_of * max(len(analysed), 1) + occurrences)
        starts = np.flatnonzero(np.diff(run, prepend=-1))
        firsts = order[starts]  # where each (group, word) first occurs
        counted = np.zeros(len(occurrences), dtype=np.int64)
        counted[firsts] = np.diff(starts, append=len(run))
        ordered = np.sort(firsts)
        rows, group = occurrences[ordered], group_of[ordered]
        value = counted[ordered] * np.asarray(self._weights, dtype=np.float64)[group]
        section = np.asarray(self._groups, dtype=np.int64)[group]
        # Each word's count, once per term of the word (none for a stop word).
        per_word = ends[rows + 1] - ends[rows]
        entry = np.repeat(np.arange(len(rows), dtype=np.int64), per_word)
        within = np.arange(len(entry), dtype=np.int64) - np.repeat(
            np.cumsum(per_word) - per_word, per_word
        )
        term = term_of[ends[rows][entry] + within]
        # Terms in the file's order (UTF-8 bytes); postings column-major, rows ascending.
        names = [t.encode("utf-8") for t in term_ids]
        by_name = sorted(range(len(names)), key=names.__getitem__)
        rank = np.empty(len(names), dtype=np.int64)
        rank[by_name] = np.arange(len(names), dtype=np.int64)
        order, pairs, group = _grouped(rank[term] * sections + section[entry])
        # bincount adds in input order (the sort is stable): each pair's counts in the
        # order section_counts adds them.
        tf = np.bincount(group, weights=value[entry][order], minlength=len(pairs))
        columns, at = np.divmod(pairs, max(sections, 1))
        lengths = np.bincount(at, weights=tf, minlength=sections)
        return assemble(
            tuple(self.keys),
            np.cumsum(np.asarray(self._sizes, dtype=np.int64)),
            lengths.astype(np.float32),
            np.asarray(self._lines, dtype=np.int32).reshape(-1, 2),
            hash_array(self._hashes),
            [names[i] for i in by_name],
            columns,
            at,
            tf.astype(np.float32),
            ordered=True,
        )


def tokenise(
    documents: Iterable[tuple[Key, Iterable[KeywordSection]]], settings: KeywordSettings
) -> Postings:
    """The postings of ``(key, sections)`` per document, in that order."""
    tokeniser = Tokeniser(settings)
    for key, sections in documents:
        tokeniser.add(key, sections)
    return tokeniser.postings()


def _grouped(
    keys: NDArray[np.int64],
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """``keys`` (not negative) sorted stably: the order, the distinct keys ascending, and
    the group of each key in sorted order."""
    order = stable_order(keys)
    ordered = keys[order]
    first = np.empty(len(keys), dtype=bool)
    first[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    return order, ordered[first], np.cumsum(first, dtype=np.int64) - 1
