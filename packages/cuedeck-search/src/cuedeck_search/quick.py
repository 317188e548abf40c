"""Keyword search without numpy, for a process that answers one query (``cue search``).

Importing numpy costs a short-lived command more than its whole search. When the saved
postings (``keyword.postings``) hold the workspace's files, give or take a few changed
since, this module scores the query straight from the mapped file with plain Python:
the postings of the query's terms only, the changed files tokenised on the spot. It
computes exactly what the engine computes (the same float64 expressions in the same
order, :mod:`cuedeck_search.bm25`), so the answer is the engine's; when the file is
missing, from another build, or too many files changed (the engine then merges and
saves them), it answers None and the engine takes over. It also leaves a workspace
holding code to the engine, which ranks code files with whole-file evidence
(:mod:`cuedeck_search.code_files`).

Which files changed since the postings were saved is kept in ``keyword.changes``
(:mod:`cuedeck_search.saved_changes`), as of a point of the index's journal: a query
reads what the journal holds since then, not the stored keys of every file, and
decodes the path of a saved document only for the documents it shows or must order.
"""

from __future__ import annotations

import bisect
import json
import mmap
import os
from array import array
from collections import Counter
from typing import TYPE_CHECKING, Any

from cuedeck.text import split_lines
from cuedeck_search.analysis import terms
from cuedeck_search.bm25 import (
    FORMAT,
    MAGIC,
    POSTINGS_FILE,
    PROSE,
    SUPPORT_DECAY,
    SUPPORT_DEPTH,
    KeywordSettings,
    aligned,
    fingerprint,
    idf,
    section_counts,
    term_score,
)
from cuedeck_search.results import Ranked, results
from cuedeck_search.saved_changes import changed_files
from cuedeck_search.sections import section_of, section_spans, split_sections

if TYPE_CHECKING:
    from cuedeck.models import SearchResult
    from cuedeck.workspace import Workspace
    from cuedeck_search.sections import Section

#: Changed files this path tokenises itself; past it the engine merges them for good.
MAX_CHANGED = 64
_CODES = {"<i8": "q", "<f4": "f", "<i4": "i", "|u1": "B"}


class _Saved:
    """The saved postings as memoryviews of the mapped file; their documents' paths and
    sha256 read one at a time (:meth:`find`, :meth:`path`, :meth:`sha`)."""

    _docs: dict[bytes, int] | None = None  # path -> document, made when first asked

    def __init__(self, mapped: mmap.mmap, wanted: str) -> None:
        if mapped[: len(MAGIC)] != MAGIC:
            raise ValueError("not a postings file")
        size = int.from_bytes(mapped[len(MAGIC) : len(MAGIC) + 8], "little")
        header = json.loads(mapped[len(MAGIC) + 8 : len(MAGIC) + 8 + size])
        if header.get("format") != FORMAT or header.get("fingerprint") != wanted:
            raise ValueError("built by another version or with other settings")
        start = aligned(len(MAGIC) + 8 + size)
        view = memoryview(mapped)
        self.arrays: dict[str, Any] = {}
        for name, (dtype, shape, offset) in header["arrays"].items():
            count = 1
            for extent in shape:
                count *= extent
            code: Any = _CODES[dtype]
            width = array(code).itemsize
            chunk = view[start + offset : start + offset + count * width]
            if len(chunk) != count * width:
                raise ValueError(f"truncated at {name}")
            self.arrays[name] = chunk.cast(code) if code != "B" else chunk
        self.total_length = float(header["total_length"])
        self.code_documents = int(header["code_documents"])
        self.doc_ends = self.arrays["doc_ends"]
        self.documents = len(self.doc_ends)
        # Paths NUL-separated, two NULs, then the 64-character digests (postings.save).
        keys = self.arrays["keys"]
        split = len(keys) - 64 * self.documents
        self.digests = keys[split:]
        self.paths = bytes(keys[: split - 2]).split(b"\0") if self.documents else []
        if split < 2 or keys[split - 2 : split] != b"\0\0" or len(self.paths) != self.documents:
            raise ValueError("documents and keys disagree")
        self.lengths = self.arrays["lengths"]
        self.blob = bytes(self.arrays["blob"])
        self.offsets = self.arrays["offsets"]

    @property
    def sections(self) -> int:
        return len(self.lengths)

    def find(self, path: str) -> int | None:
        """The saved document at ``path``, or None."""
        if self._docs is None:
            self._docs = {name: doc for doc, name in enumerate(self.paths)}
        return self._docs.get(path.encode("utf-8"))

    def sha(self, doc: int) -> str:
        """The sha256 the saved document ``doc`` was tokenised at."""
        return bytes(self.digests[64 * doc : 64 * doc + 64]).decode("ascii")

    def path(self, doc: int) -> str:
        """The path of the saved document ``doc``."""
        return self.paths[doc].decode("utf-8")

    def column(self, term: str) -> tuple[Any, Any]:
        """The rows holding ``term`` and its frequencies there (empty when absent)."""
        key = term.encode("utf-8")
        offsets, blob = self.offsets, self.blob
        low, high = 0, len(offsets) - 1
        while low < high:
            middle = (low + high) // 2
            if blob[offsets[middle] : offsets[middle + 1]] < key:
                low = middle + 1
            else:
                high = middle
        if low >= len(offsets) - 1 or blob[offsets[low] : offsets[low + 1]] != key:
            return memoryview(b"").cast("i"), memoryview(b"").cast("f")
        indptr = self.arrays["indptr"]
        begin, end = indptr[low], indptr[low + 1]
        return self.arrays["rows"][begin:end], self.arrays["tf"][begin:end]


def keyword_search(
    workspace: Workspace, query: str, limit: int, *, counted: bool = True
) -> list[SearchResult] | None:
    """The keyword results for ``query``, or None when the engine must answer
    (``counted``: see :func:`~cuedeck_search.results.results`)."""
    settings = KeywordSettings()
    try:
        with (workspace.root / POSTINGS_FILE).open("rb") as handle:
            found = os.fstat(handle.fileno())
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        saved = _Saved(mapped, fingerprint(settings, workspace.index.parsers.key()))
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError):
        return None
    identity = [found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns]
    index = workspace.fresh_index()
    try:
        changed = changed_files(index, saved, identity)
        if changed is None:
            return None
        fresh_keys = sorted((path, sha) for path, (_, sha) in changed.items() if sha is not None)
        dead_docs = {doc for doc, _ in changed.values() if doc is not None}
        if len(fresh_keys) + len(dead_docs) > MAX_CHANGED:
            return None
        if saved.code_documents or any(
            (index.language(path) or "") not in PROSE for path, _ in fresh_keys
        ):
            return None  # code ranks with whole-file evidence (code_files): the engine's
        search = _Search(workspace, saved, settings, fresh_keys, dead_docs)
        return search.run(query, limit, counted)
    except UnicodeDecodeError:  # a damaged saved key: the engine reads the file, rebuilds it
        return None


class _Search:
    """One query over the saved postings less ``dead_docs``, plus the fresh documents."""

    def __init__(
        self,
        workspace: Workspace,
        saved: _Saved,
        settings: KeywordSettings,
        fresh_keys: list[tuple[str, str]],
        dead_docs: set[int],
    ) -> None:
        self.workspace = workspace
        self.saved = saved
        self.settings = settings
        self.dead = dead_docs
        self.fresh: list[tuple[str, list[Section], list[dict[str, float]], list[float]]] = []
        for path, _ in fresh_keys:
            sections = _split(workspace, path)
            counts = section_counts(path, sections, settings)
            # Stored as float32 by the engine: the same rounding here.
            counts = [dict(zip(c, array("f", c.values()), strict=True)) for c in counts]
            lengths = list(array("f", [float(sum(c.values())) for c in counts]))
            self.fresh.append((path, sections, counts, lengths))
        dead_length = 0.0
        self.dead_sections = 0
        for doc in dead_docs:
            first, last = self._bounds(doc)
            self.dead_sections += last - first
            dead_length += float(sum(saved.lengths[first:last]))
        self.count = saved.sections - self.dead_sections + sum(len(f[1]) for f in self.fresh)
        total = saved.total_length - dead_length + sum(sum(f[3]) for f in self.fresh)
        self.average = total / self.count if self.count else 1.0

    def _bounds(self, doc: int) -> tuple[int, int]:
        ends = self.saved.doc_ends
        return (ends[doc - 1] if doc else 0), ends[doc]

    def _doc(self, row: int) -> int:
        return bisect.bisect_right(self.saved.doc_ends, row)

    def run(self, query: str, limit: int, counted: bool) -> list[SearchResult]:
        settings, average = self.settings, self.average
        scores: dict[tuple[int, int], float] = {}  # (document, section) -> score
        fresh_base = self.saved.documents
        for term, times in Counter(terms(query)).items():
            rows, tf = self.saved.column(term)
            postings: list[tuple[tuple[int, int], float, float]] = []
            lengths = self.saved.lengths
            for row, frequency in zip(rows, tf, strict=True):
                doc = self._doc(row)
                if doc not in self.dead:
                    postings.append(((doc, row), frequency, lengths[row]))
            for number, (_, _, counts, section_lengths) in enumerate(self.fresh):
                for at, section in enumerate(counts):
                    if term in section:
                        key = (fresh_base + number, at)
                        postings.append((key, section[term], section_lengths[at]))
            if not postings:
                continue
            weight = times * idf(self.count, len(postings))
            for key, frequency, length in postings:
                score = term_score(weight, frequency, length, settings, average)
                scores[key] = scores.get(key, 0.0) + score
        return self._results(query, scores, limit, counted)

    def _results(
        self, query: str, scores: dict[tuple[int, int], float], limit: int, counted: bool
    ) -> list[SearchResult]:
        by_doc: dict[int, list[float]] = {}
        for (doc, _), score in scores.items():
            if score > 0:
                by_doc.setdefault(doc, []).append(score)
        files: dict[int, float] = {}
        for doc, found in by_doc.items():
            total = 0.0
            for rank, score in enumerate(sorted(found, reverse=True)[:SUPPORT_DEPTH]):
                total += score * SUPPORT_DECAY**rank
            files[doc] = total
        # Ties are ordered by path: only the files that can be shown (those scoring at
        # least the limit-th score) have theirs decoded.
        ranked = sorted(files, key=lambda d: -files[d])
        if len(ranked) > limit:
            cutoff = files[ranked[limit - 1]]
            ranked = [doc for doc in ranked if files[doc] >= cutoff]
        ranked = sorted(ranked, key=lambda d: (-files[d], self._path(d)))[:limit]
        shown = (self._ranked(doc, files[doc], scores) for doc in ranked)
        return results(self.workspace, query, shown, counted=counted)

    def _path(self, doc: int) -> str:
        fresh_base = self.saved.documents
        return self.saved.path(doc) if doc < fresh_base else self.fresh[doc - fresh_base][0]

    def _ranked(self, doc: int, score: float, scores: dict[tuple[int, int], float]) -> Ranked:
        fresh_base = self.saved.documents
        if doc >= fresh_base:
            path, sections, _, _ = self.fresh[doc - fresh_base]
            local = [scores.get((doc, at), 0.0) for at in range(len(sections))]
            return Ranked(path, score, local, lambda at: sections[at], keyword=score)
        path = self.saved.path(doc)
        first, last = self._bounds(doc)
        local = [scores.get((doc, row), 0.0) for row in range(first, last)]
        return Ranked(path, score, local, _Sections(self.workspace, path).at, keyword=score)


class _Sections:
    """The sections of one saved file, each split when asked for."""

    def __init__(self, workspace: Workspace, path: str) -> None:
        self.document = workspace.index.get(path, counted=False)
        try:
            self.lines = split_lines(workspace.read_text(path))
        except Exception:  # gone since the refresh: no text
            self.lines = []
        self.spans = section_spans(self.document, self.lines) if self.document else []

    def at(self, position: int) -> Section | None:
        if self.document is None:
            return None
        if not self.spans:  # no heading and no text: the one section split_sections makes
            whole = split_sections(self.document, self.lines)
            return whole[position] if position < len(whole) else None
        if position >= len(self.spans):
            return None
        return section_of(self.document, self.lines, self.spans[position])


def _split(workspace: Workspace, path: str) -> list[Section]:
    document = workspace.index.get(path, counted=False)
    if document is None:
        return []
    try:
        lines = split_lines(workspace.read_text(path))
    except Exception:  # gone since the refresh: no text
        lines = []
    return split_sections(document, lines)
