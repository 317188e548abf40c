"""Past changes as evidence: the titles of the commits that modified each file.

A change's title says what it did in the words a later request shares ("fix the proxy on
redirects"), and the files it modified are where such work happens. So in a workspace
inside a git repository, the titles of the last ``[search] history_commits`` commits of
HEAD (merges left out, and commits modifying more than ``MAX_FILES`` files of the
workspace: a sweeping rename or reformat says nothing about one file) are gathered per
file they modified, and the keyword side scores each code file's titles with BM25, as
one more piece of evidence beside its text (:mod:`cuedeck_search.code_files`).

Only HEAD's own history is read (``git log``, bounded in time), once per HEAD: kept in
``.cuedeck/.cache/search-history.json``. Titles are terms for scoring, never shown.
Outside git, or when git fails, there is no such evidence and the ranking is the one of
the files alone.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from typing import TYPE_CHECKING, Any

import numpy as np

from cuedeck.errors import CueError
from cuedeck.layout import CACHE_DIR
from cuedeck_search.analysis import terms
from cuedeck_search.bm25 import idf

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from pathlib import Path

    from numpy.typing import NDArray

    from cuedeck_search.catalog import Catalog

HISTORY_FILE = f"{CACHE_DIR}/search-history.json"
SCHEMA = 2  # 2: the titles saved tokenised
#: A commit modifying more files of the workspace than this is left out.
MAX_FILES = 10
#: Seconds ``git log`` may take; past that, no evidence from history.
GIT_TIMEOUT = 10.0
_RECORD = "\x1e"

log = logging.getLogger("cuedeck")

#: ``(title, paths relative to the workspace root)`` per commit, newest first.
Changes = list[tuple[str, list[str]]]


def read_changes(root: Path, commits: int) -> Changes | None:
    """HEAD's last ``commits`` changes from git, newest first; None outside git or when
    git fails or takes longer than ``GIT_TIMEOUT``."""
    if commits <= 0:
        return []
    return _git_log(root, commits)


def load_titles(root: Path, commits: int, head: str | None) -> ChangeTitles:
    """The change titles of ``head`` (the short commit HEAD names; None: no history):
    from the saved file when it was made at the same HEAD for as many commits, else from
    git, then saved (tokenised: a new process does not analyse 1,000 titles again)."""
    if head is None or commits <= 0:
        return ChangeTitles(())
    saved_at = root / HISTORY_FILE
    try:
        saved = json.loads(saved_at.read_text(encoding="utf-8"))
        if saved["schema"] == SCHEMA and saved["head"] == head and saved["commits"] == commits:
            return ChangeTitles.loaded(saved["titles"])
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        pass
    titles = ChangeTitles(read_changes(root, commits) or ())
    try:
        from cuedeck.writes import atomic_write

        payload = {"schema": SCHEMA, "head": head, "commits": commits, "titles": titles.saved()}
        atomic_write(saved_at, json.dumps(payload, separators=(",", ":")), display=HISTORY_FILE)
    except (OSError, CueError) as exc:  # only a cache: read from git again next time
        log.info("search history not saved: %s", exc)
    return titles


def _git_log(root: Path, commits: int) -> Changes | None:
    """``git log`` read-only through core's runner (the repository found by path, never a
    folder git would take as a bare one), in the workspace's folder."""
    from cuedeck.system.git import Git, GitTimedOut, find_repository

    found = find_repository(root)
    if found is None:
        return None
    args = [
        "log", "HEAD", "--no-merges", f"-n{commits}", "--name-only", "--no-renames",
        "--relative", "--no-ext-diff", "--no-textconv", f"--format={_RECORD}%s", "--", ".",
    ]  # fmt: skip
    try:
        done = Git(found, cwd=root, read_only=True).run(args, timeout=GIT_TIMEOUT)
    except (OSError, GitTimedOut) as exc:
        log.info("search history not read: %s", exc)
        return None
    if done.returncode != 0:
        return None
    return parse_log(done.stdout.decode("utf-8", errors="replace"))


def parse_log(text: str) -> Changes:
    """The changes of ``git log --name-only --format=<RS>%s`` output, newest first (those
    modifying more than ``MAX_FILES`` files left out)."""
    changes: Changes = []
    for record in text.split(_RECORD)[1:]:
        title, _, names = record.partition("\n")
        paths = [line for line in names.split("\n") if line.strip()]
        if paths and len(paths) <= MAX_FILES:
            changes.append((title.strip(), paths))
    return changes


class ChangeTitles:
    """The titles of each file's past changes, as term postings per file (one sorted
    array of ``(term, file)`` pairs: building a dict of arrays per term cost 35 ms for
    1,000 titles, this 5).

    Files are numbered in the order of :attr:`paths`; :meth:`scores` maps them onto a
    caller's documents.
    """

    def __init__(self, changes: Iterable[tuple[str, Sequence[str]]]) -> None:
        files: dict[str, int] = {}
        vocabulary: dict[str, int] = {}
        pairs: dict[tuple[int, int], float] = {}
        for title, paths in changes:
            found = Counter(terms(title))
            if not found:
                continue
            numbers = [files.setdefault(path, len(files)) for path in paths]
            for term, count in found.items():
                term_number = vocabulary.setdefault(term, len(vocabulary))
                for number in numbers:
                    pair = (term_number, number)
                    pairs[pair] = pairs.get(pair, 0.0) + count
        keys = np.asarray(list(pairs), dtype=np.int64).reshape(-1, 2)
        values = np.fromiter(pairs.values(), dtype=np.float64, count=len(pairs))
        order = np.lexsort((keys[:, 1], keys[:, 0]))
        starts = np.searchsorted(keys[order, 0], np.arange(len(vocabulary) + 1))
        self._set(list(files), list(vocabulary), starts, keys[order, 1], values[order])

    def _set(
        self,
        paths: list[str],
        vocabulary: list[str],
        starts: NDArray[np.int64],
        rows: NDArray[np.int64],
        tf: NDArray[np.float64],
    ) -> None:
        self.paths = paths
        self._vocabulary = {term: number for number, term in enumerate(vocabulary)}
        self._starts, self._rows, self._tf = starts, rows, tf
        self.lengths = np.bincount(rows, weights=tf, minlength=len(paths)).astype(np.float64)

    def saved(self) -> dict[str, list[Any]]:
        """The postings as JSON values (:meth:`loaded` reads them back)."""
        return {
            "paths": self.paths,
            "terms": list(self._vocabulary),
            "starts": self._starts.tolist(),
            "rows": self._rows.tolist(),
            "tf": self._tf.tolist(),
        }

    @classmethod
    def loaded(cls, saved: dict[str, list[Any]]) -> ChangeTitles:
        """The titles :meth:`saved` gave (checked to fit together: ValueError if not)."""
        titles = cls(())
        starts = np.asarray(saved["starts"], dtype=np.int64)
        rows = np.asarray(saved["rows"], dtype=np.int64)
        tf = np.asarray(saved["tf"], dtype=np.float64)
        paths = [str(p) for p in saved["paths"]]
        vocabulary = [str(t) for t in saved["terms"]]
        fits = len(starts) == len(vocabulary) + 1 and len(rows) == len(tf) == starts[-1]
        if not fits or (len(rows) and (rows.min() < 0 or rows.max() >= len(paths))):
            raise ValueError("saved change titles do not fit together")
        titles._set(paths, vocabulary, starts, rows, tf)
        return titles

    def __len__(self) -> int:
        return len(self.paths)

    def documents(self, position: dict[str, int]) -> NDArray[np.int64]:
        """Each file's document by ``position`` (path -> document), -1 where none."""
        return np.fromiter((position.get(p, -1) for p in self.paths), np.int64, len(self.paths))

    def scores(
        self,
        query_terms: Sequence[str],
        documents: NDArray[np.int64],
        count: int,
        k1: float,
        b: float,
    ) -> NDArray[np.float64]:
        """BM25 of each document's past titles for the query, over ``count`` documents
        (``documents`` from :meth:`documents`: files without one are left out)."""
        scores = np.zeros(count, dtype=np.float64)
        present = documents >= 0
        kept = int(present.sum())
        if not kept:
            return scores
        average = float(self.lengths[present].mean()) or 1.0
        norm = k1 * (1.0 - b + b * self.lengths / average)
        for term, times in Counter(query_terms).items():
            number = self._vocabulary.get(term)
            if number is None:
                continue
            first, end = self._starts[number], self._starts[number + 1]
            rows, tf = self._rows[first:end], self._tf[first:end]
            keep = present[rows]
            if not keep.any():
                continue
            rows, tf = rows[keep], tf[keep]
            weight = times * idf(kept, len(rows))
            np.add.at(scores, documents[rows], weight * tf * (k1 + 1.0) / (tf + norm[rows]))
        return scores


class History:
    """A workspace's past change titles, mapped onto its catalog's documents: read again
    when HEAD, the index generation or the number of commits asked for changes."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._key: tuple[str | None, int | None, int] | None = None
        self._titles = ChangeTitles(())
        self._documents: NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        #: HEAD when the titles were last brought in step (None: outside git, or never).
        self.head: str | None = None

    def update(
        self, catalog: Catalog, generation: int | None, commits: int, head: str | None
    ) -> None:
        """Bring the titles in step with ``head`` (``head_commit`` of the root, which the
        caller reads once per query) and the catalog's documents."""
        key = (head, generation, commits)
        if key == self._key:
            return
        self._titles = load_titles(self.root, commits, head)
        live = catalog.live_docs
        position = {path: doc for doc, (path, _) in enumerate(catalog.keys) if live[doc]}
        self._documents = self._titles.documents(position)
        self._key = key
        self.head = head

    @property
    def present(self) -> bool:
        """Whether any live document has past changes (as of the last :meth:`update`)."""
        return bool((self._documents >= 0).any())

    def scores(self, catalog: Catalog, query: str) -> NDArray[np.float64] | None:
        """BM25 of each code document's past titles for ``query`` (evidence documents
        only, cuedeck_search.code_files), or None when there is no history."""
        if not self.present:
            return None
        settings = catalog.keyword.settings
        found = self._titles.scores(
            terms(query), self._documents, len(catalog.keys), settings.k1, settings.b
        )
        return found * catalog.evidence_docs
