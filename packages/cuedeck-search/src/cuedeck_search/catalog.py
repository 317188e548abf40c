"""What the engine searches: the indexed documents, their sections and keyword postings.

:class:`Catalog` follows the index by ``(path, sha256)``. At its first sync it maps the
postings saved in ``.cuedeck/.cache/keyword.postings``; documents added or changed since
are split and tokenised into fresh postings, and saved documents that changed or went
away are marked dead. When fresh and dead documents pass a share of the whole, both parts
are merged and saved again, so the next process starts from a file that matches. So a
query process reads the few pages of the terms it scores, and an edit costs its own
file, not a rebuild. Section text is split again from the file only for what a result
shows.
"""

from __future__ import annotations

import logging
import sqlite3
from collections import OrderedDict
from typing import TYPE_CHECKING

import attrs
import numpy as np

from cuedeck.errors import PermissionDenied
from cuedeck.progress import report
from cuedeck.system import parallel
from cuedeck.text import split_lines
from cuedeck_search.bm25 import POSTINGS_FILE, PROSE, fingerprint
from cuedeck_search.code_files import OWN_DOCS, is_outside, path_factor
from cuedeck_search.keyword import KeywordIndex, tokenise
from cuedeck_search.postings import (
    Postings,
    PostingsError,
    build,
    combine,
    empty,
    hex_hashes,
    load,
    merge,
    save,
)
from cuedeck_search.sections import keyword_sections, section_of, section_spans, split_sections
from cuedeck_search.weighted_terms import Tokeniser

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from numpy.typing import NDArray

    from cuedeck.workspace import Workspace
    from cuedeck_search.bm25 import KeywordSettings
    from cuedeck_search.postings import DocumentTerms
    from cuedeck_search.sections import Section, Span

log = logging.getLogger("cuedeck")

#: Fresh plus dead documents beyond this share of all (and at least MERGE_MIN) are merged
#: into the saved postings: small enough that scoring two parts costs nothing noticeable,
#: large enough that a stream of single edits never rewrites the file each time.
MERGE_SHARE = 0.05
MERGE_MIN = 64
SECTION_CACHE = 512  # documents whose split sections are kept for results

Key = tuple[str, str]


@attrs.define
class CatalogStats:
    """What the catalog did (tests and benchmarks read it)."""

    documents_split: int = 0  # read, split and tokenised
    documents_loaded: int = 0  # taken from saved postings instead
    merges: int = 0  # saved postings written
    files_split: int = 0  # files split into all their sections (tokenising, embedding)


class Catalog:
    """Documents (base then fresh), their sections as arrays, and the keyword index."""

    def __init__(self, workspace: Workspace, settings: KeywordSettings) -> None:
        self.workspace = workspace
        self.keyword = KeywordIndex(settings)
        # Sections come from parsed documents: a parser's new revision splits them again.
        self.fingerprint = fingerprint(settings, workspace.index.parsers.key())
        self.path = workspace.root / POSTINGS_FILE
        self.stats = CatalogStats()
        self.keys: list[Key] = []
        self.starts: NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self.ends: NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self.section_doc: NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self.live_docs: NDArray[np.bool_] = np.zeros(0, dtype=bool)
        self.live_sections: NDArray[np.bool_] = np.zeros(0, dtype=bool)
        self._positions: dict[str, int] | None = None
        self._fresh: dict[Key, tuple[DocumentTerms, list[Section]]] = {}
        self._sections: OrderedDict[Key, list[Section]] = OrderedDict()
        self._spans: OrderedDict[Key, list[Span]] = OrderedDict()  # results' sections...
        self._made: OrderedDict[tuple[Key, int], Section] = OrderedDict()  # ...made alone
        self._lines: OrderedDict[Key, list[str]] = OrderedDict()
        self._hashes: list[str] | None = None
        self._loaded = False
        #: Per document: code (not prose), its keyword factor (tests and examples below
        #: 1, cuedeck_search.code_files) and its weighted length (its sections' sum).
        self.code_docs: NDArray[np.bool_] = np.zeros(0, dtype=bool)
        #: Documents scored with whole-file evidence: code, and CueDeck's own docs and
        #: cards (cuedeck_search.code_files).
        self.evidence_docs: NDArray[np.bool_] = np.zeros(0, dtype=bool)
        self.path_factors: NDArray[np.float64] = np.zeros(0, dtype=np.float64)
        #: Code documents outside the project's source (their factor is lifted when the
        #: query asks for them: cuedeck_search.code_files.asks_for_outside).
        self.outside_docs: NDArray[np.bool_] = np.zeros(0, dtype=bool)
        self.doc_lengths: NDArray[np.float64] = np.zeros(0, dtype=np.float64)
        self.code_share = 0.0  # live sections in code documents, of all live sections
        self.section_lines: NDArray[np.int32] = np.zeros((0, 2), dtype=np.int32)
        self._languages: dict[str, bool] = {}  # path -> code, as the index says

    # -- keeping in step -------------------------------------------------------------------

    def sync(self, keys: Sequence[Key]) -> None:
        """Follow the index's ``(path, sha256)`` list (every file is compared)."""
        base = self._base()
        fresh: dict[Key, tuple[DocumentTerms, list[Section]]] = {}
        if base.keys == tuple(keys):  # the usual case for a new process: nothing changed
            dead = np.zeros(len(keys), dtype=bool)
        else:  # set differences: both sides are usually almost equal
            known = set(base.keys)
            added = [key for key in keys if key not in known]
            gone = known.difference(keys)
            dead = np.zeros(len(base.keys), dtype=bool)
            if gone:
                dead[[i for i, key in enumerate(base.keys) if key in gone]] = True
            if len(added) > 500:  # read in one query, not one per file (or per worker)
                self.workspace.index.fetch(key[0] for key in added)
            if self._merges(base, len(added) + len(gone), len(keys)):
                base = self._merged(base, dead, self._postings_of(added))
                dead = np.zeros(len(base.keys), dtype=bool)
            else:
                for done, key in enumerate(added, start=1):
                    fresh[key] = self._fresh.get(key) or self._tokenise(key)
                    if done % 64 == 0 or done == len(added):
                        report(done, len(added), "Tokenising files for search")
        self._finish(base, dead, fresh)

    def apply(self, changed: set[str], sha_of: Callable[[str], str | None]) -> None:
        """Follow the index after the files at ``changed`` were added, edited or removed
        (``sha_of(path)`` is the indexed sha256, None when gone): costs those files."""
        base = self._base()
        dead = self.keyword.dead.copy()
        fresh = {key: entry for key, entry in self._fresh.items() if key[0] not in changed}
        if self._positions is None:
            self._positions = {path: i for i, (path, _) in enumerate(base.keys)}
        for path in sorted(changed):
            sha = sha_of(path)
            at = self._positions.get(path)
            saved = at is not None and base.keys[at][1] == sha
            if at is not None:
                dead[at] = not saved
            if sha is not None and not saved:
                key = (path, sha)
                fresh[key] = self._fresh.get(key) or self._tokenise(key)
        self._finish(base, dead, fresh)

    def _finish(
        self,
        base: Postings,
        dead: NDArray[np.bool_],
        fresh: dict[Key, tuple[DocumentTerms, list[Section]]],
    ) -> None:
        """Merge when the changes have grown large, then lay out the section arrays."""
        changed = len(fresh) + int(dead.sum())
        documents = len(base.keys) - int(dead.sum()) + len(fresh)
        if self._merges(base, changed, documents):
            base = self._merged(base, dead, _postings(fresh))
            dead = np.zeros(len(base.keys), dtype=bool)
            fresh = {}
        self._fresh = fresh
        self.keyword.reset(base, dead, _postings(fresh))
        self.stats.documents_loaded = len(base.keys) - int(dead.sum())
        self.keys = [*base.keys, *fresh]
        fresh_sizes = [len(sections) for _, sections in fresh.values()]
        self.ends = np.concatenate(
            [base.doc_ends, base.sections + np.cumsum(fresh_sizes, dtype=np.int64)]
        ).astype(np.int64)
        sizes = np.diff(self.ends, prepend=0)
        self.starts = self.ends - sizes
        self.section_doc = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
        self.live_docs = np.concatenate([~dead, np.ones(len(fresh), dtype=bool)])
        self.live_sections = np.repeat(self.live_docs, sizes)
        self._hashes = None
        self._lay_out_files(base, fresh)

    def _lay_out_files(
        self, base: Postings, fresh: dict[Key, tuple[DocumentTerms, list[Section]]]
    ) -> None:
        """Which live documents are code, their factors and lengths, and every section's
        first and last line."""
        code = np.fromiter((self._code(path) for path, _ in self.keys), bool, len(self.keys))
        self.code_docs = code & self.live_docs
        own = np.fromiter(
            (path.startswith(OWN_DOCS) for path, _ in self.keys), bool, len(self.keys)
        )
        self.evidence_docs = (code | own) & self.live_docs
        self.path_factors = np.fromiter(
            (
                path_factor(path) if is_code else 1.0
                for (path, _), is_code in zip(self.keys, code, strict=True)
            ),
            np.float64,
            len(self.keys),
        )
        self.outside_docs = self.code_docs & np.fromiter(
            (is_outside(path) for path, _ in self.keys), bool, len(self.keys)
        )
        lengths = np.concatenate(
            [base.lengths, *(terms.lengths for terms, _ in fresh.values())]
        ).astype(np.float64)
        self.doc_lengths = np.bincount(
            self.section_doc, weights=lengths, minlength=len(self.keys)
        ).astype(np.float64)
        fresh_lines = [(s.line, s.end_line) for _, sections in fresh.values() for s in sections]
        self.section_lines = np.concatenate(
            [base.lines, np.asarray(fresh_lines, dtype=np.int32).reshape(-1, 2)]
        ).astype(np.int32)
        live = int(self.live_sections.sum())
        code_sections = int((self.code_docs[self.section_doc] & self.live_sections).sum())
        self.code_share = code_sections / live if live else 0.0

    def _code(self, path: str) -> bool:
        """Whether the indexed file at ``path`` is code (its language is no prose)."""
        found = self._languages.get(path)
        if found is None:
            language = self.workspace.index.language(path) or ""
            found = self._languages[path] = language not in PROSE
            if len(self._languages) > 200_000:
                self._languages.clear()
        return found

    @staticmethod
    def _merges(base: Postings, changed: int, documents: int) -> bool:
        """Whether ``changed`` documents of ``documents`` are worth merging into ``base``
        (always, when nothing is saved yet)."""
        return changed > 0 and (not base.keys or changed > max(MERGE_MIN, MERGE_SHARE * documents))

    def _merged(self, base: Postings, dead: NDArray[np.bool_], extra: Postings) -> Postings:
        """``base`` less its ``dead`` documents, then ``extra``: saved, and the new base."""
        merged = merge(base, dead, extra) if base.keys else extra
        self._save(merged)
        self._set_base(merged)
        return merged

    def _postings_of(self, keys: Sequence[Key]) -> Postings:
        """Postings of many new documents, tokenised on every core (a cold start)."""
        # Forked for 1,000 files or more only: below that, a worker's share of the distinct
        # words and the join of the parts cost about what they save.
        parts = parallel.map_chunks(self._chunk, keys, message="Tokenising files for search")
        self.stats.documents_split += len(keys)
        return parts[0] if len(parts) == 1 else combine([(part, None) for part in parts])

    def _chunk(self, keys: Sequence[Key], tick: parallel.Tick) -> Postings:
        """Postings of ``keys`` (a worker's share of :meth:`_postings_of`): sections read
        as the keyword index needs them, none kept (each file is read once here)."""
        tokeniser = Tokeniser(self.keyword.settings)
        index = self.workspace.index
        for done, key in enumerate(keys, start=1):
            document = index.get(key[0], counted=False)
            if document is None:
                tokeniser.add(key, ())
            else:
                tokeniser.add(key, keyword_sections(document, self._file_lines(key, keep=False)))
            self.stats.files_split += 1
            tick(done)
        return tokeniser.postings()

    @property
    def ready(self) -> bool:
        """Whether a sync ran, so that :meth:`apply` can follow from there."""
        return self._loaded

    def _base(self) -> Postings:
        if not self._loaded:
            self._set_base(self._load())
            self._loaded = True
        return self.keyword.base

    def _set_base(self, base: Postings) -> None:
        self.keyword.base = base
        self._positions = None  # path -> document, made when an apply first needs it

    def _load(self) -> Postings:
        if not self.path.exists():
            return empty()
        try:
            return load(self.path, self.fingerprint)
        except PostingsError as exc:
            log.info("keyword postings rebuilt: %s", exc)
            return empty()

    def _save(self, postings: Postings) -> None:
        code = sum(self._code(path) for path, _ in postings.keys)
        try:
            save(postings, self.path, self.fingerprint, code_documents=code)
        except (OSError, PermissionDenied) as exc:  # only a cache: tokenised again next time
            log.info("keyword postings not saved: %s", exc)
        self.stats.merges += 1
        _drop_old_tables(self.workspace)

    def discard(self) -> None:
        """Forget the saved postings (damaged): the next sync rebuilds them whole."""
        self.path.unlink(missing_ok=True)
        self._set_base(empty())
        self._sections.clear()
        self._fresh = {}
        self._loaded = True

    def _tokenise(self, key: Key) -> tuple[DocumentTerms, list[Section]]:
        self.stats.documents_split += 1
        return self._terms(key)

    def _terms(self, key: Key) -> tuple[DocumentTerms, list[Section]]:
        """The keyword terms and the sections of the document at ``key``."""
        sections = self._split(key)
        return tokenise(key[0], sections, self.keyword.settings), sections

    # -- sections --------------------------------------------------------------------------

    def _split(self, key: Key) -> list[Section]:
        found = self._sections.get(key)
        if found is not None:
            self._sections.move_to_end(key)
            return found
        document = self.workspace.index.get(key[0], counted=False)
        sections = [] if document is None else split_sections(document, self._file_lines(key))
        self.stats.files_split += 1
        self._sections[key] = sections
        if len(self._sections) > SECTION_CACHE:
            self._sections.popitem(last=False)
        return sections

    def section(self, doc: int, at: int) -> Section | None:
        """Section ``at`` of document ``doc`` alone (None when the file has fewer now):
        a result shows a few sections of a file, whose others are never split."""
        key = self.keys[doc]
        known = self._fresh.get(key)
        found = known[1] if known is not None else self._sections.get(key)
        if found is not None:
            return found[at] if at < len(found) else None
        made = self._made.get((key, at))
        if made is not None:
            return made
        document = self.workspace.index.get(key[0], counted=False)
        if document is None:
            return None
        lines = self._file_lines(key)
        spans = self._spans.get(key)
        if spans is None:
            spans = self._spans[key] = section_spans(document, lines)
            if len(self._spans) > SECTION_CACHE:
                self._spans.popitem(last=False)
        if not spans:
            whole = split_sections(document, lines)
            return whole[at] if at < len(whole) else None
        if at >= len(spans):
            return None
        made = self._made[(key, at)] = section_of(document, lines, spans[at])
        if len(self._made) > SECTION_CACHE * 8:
            self._made.popitem(last=False)
        return made

    def section_anchors(self, doc: int) -> list[str | None]:
        """The anchor of each section of document ``doc`` (None for one without), from
        its spans: no section's text is made."""
        key = self.keys[doc]
        known = self._fresh.get(key)
        found = known[1] if known is not None else self._sections.get(key)
        if found is not None:
            return [section.anchor for section in found]
        document = self.workspace.index.get(key[0], counted=False)
        if document is None:
            return []
        spans = self._spans.get(key)
        if spans is None:
            spans = self._spans[key] = section_spans(document, self._file_lines(key))
            if len(self._spans) > SECTION_CACHE:
                self._spans.popitem(last=False)
        if not spans:
            return [section.anchor for section in self._split(key)]
        return [span.anchor for span in spans]

    def sections_of(self, doc: int) -> list[Section]:
        """The sections of document ``doc`` (split from the file, a few kept)."""
        return self._split(self.keys[doc])

    def _file_lines(self, key: Key, *, keep: bool = True) -> list[str]:
        """The lines of the file at ``key`` (path, sha256): kept by content (unless not
        ``keep``), so an edit elsewhere in the workspace reads nothing again."""
        found = self._lines.get(key)
        if found is None:
            try:
                found = split_lines(self.workspace.read_text(key[0]))
            except Exception:  # gone since the refresh: no text; it drops out at the next one
                found = []
            if not keep:
                return found
            self._lines[key] = found
            if len(self._lines) > SECTION_CACHE:
                self._lines.popitem(last=False)
        else:
            self._lines.move_to_end(key)
        return found

    def hashes(self) -> list[str]:
        """The embedding-text hash of every section, in section order."""
        if self._hashes is None:
            self._hashes = hex_hashes(self.keyword.base.hashes) + [
                s.hash for _, sections in self._fresh.values() for s in sections
            ]
        return self._hashes


def _postings(fresh: dict[Key, tuple[DocumentTerms, list[Section]]]) -> Postings:
    return build((key, terms, sections) for key, (terms, sections) in fresh.items())


def _drop_old_tables(workspace: Workspace) -> None:
    """Remove the tables that the saved postings and the user-level embedding cache
    replace: per-file sections, and vectors kept per workspace (once)."""
    try:
        connection = workspace.index.connect()
        try:
            found = [
                name
                for (name,) in connection.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table' "
                    "AND name IN ('search_sections', 'search_embeddings')"
                )
            ]
            for name in found:
                connection.execute(f"DROP TABLE {name}")
            if found:
                connection.execute("VACUUM")  # give their pages back to the file system
        finally:
            connection.close()
    except sqlite3.Error as exc:  # busy or read-only: dropped another time
        log.info("old search tables not dropped: %s", exc)
