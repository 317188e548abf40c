"""The search engine of one workspace: sections, keyword index, vectors, fusion.

:class:`SearchEngine` is the workspace service ``search`` (one per workspace). Before a
query it brings itself in step with the index: documents whose sha256 changed are split
and tokenised again, and only sections whose text changed are embedded again (the
vectors' upkeep is :mod:`cuedeck_search.semantic_side`). Scores are computed per section
and aggregated per file (:mod:`cuedeck_search.scores`: semantic, the best section;
keyword, the best plus a decaying share of the next two, and for code the whole file and
its past changes' titles), and a file's result lists its best sections (anchors) first.
Every answer says which side answered (:class:`Answer`): a semantic or hybrid search
over a workspace that is not fully embedded never presents keyword hits as semantic
ones.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import threading
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from cuedeck.errors import InvalidInput
from cuedeck.models import SearchFilters, SearchResult
from cuedeck.watch.reflects import head_commit
from cuedeck_search.analysis import terms
from cuedeck_search.bm25 import KeywordSettings
from cuedeck_search.catalog import Catalog, CatalogStats
from cuedeck_search.code_files import definitions, identifier_scales, query_factors, weights
from cuedeck_search.filtering import allowed_documents, of_kind
from cuedeck_search.names import as_name, named_sections
from cuedeck_search.past_changes import History
from cuedeck_search.postings import PostingsError
from cuedeck_search.results import Answer, Ranked, results
from cuedeck_search.scores import (
    Scored,
    SectionScores,
    best_per_file,
    code_files,
    demoted,
    with_support,
)
from cuedeck_search.semantic_side import SemanticSide
from cuedeck_search.settings import MAX_LIMIT, MODES, SearchSettings
from cuedeck_search.vectors import SectionVectors

if TYPE_CHECKING:
    from collections.abc import Iterator

    from numpy.typing import NDArray

    Scores = NDArray[np.floating[Any]]  # per section or per file, float32 or float64

    from cuedeck.workspace import Workspace
    from cuedeck_search.background import BackgroundEmbedder
    from cuedeck_search.sections import Section
    from cuedeck_search.vectors import Coverage

log = logging.getLogger("cuedeck")


@attrs.frozen
class EngineStats:
    """Counters of what the engine did (tests and benchmarks read them)."""

    catalog: CatalogStats  # documents split, loaded and merged, counted by the catalog
    vectors: SectionVectors

    @property
    def chunks_embedded(self) -> int:
        """Sections embedded by this engine's model."""
        return self.vectors.embedded

    @property
    def chunks_loaded(self) -> int:
        """Vectors taken from the shared cache instead."""
        return self.vectors.loaded

    @property
    def documents_split(self) -> int:
        """Documents read, split and tokenised."""
        return self.catalog.documents_split

    @property
    def documents_loaded(self) -> int:
        """Documents taken from saved postings instead."""
        return self.catalog.documents_loaded


class SearchEngine(SemanticSide):
    """Keyword, semantic and hybrid search over the sections of one workspace."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self.catalog = Catalog(workspace, KeywordSettings())
        self._lock = threading.RLock()
        self.vectors = SectionVectors(workspace, self.catalog, self._lock)
        self.stats = EngineStats(catalog=self.catalog.stats, vectors=self.vectors)
        self._generation: int | None = None
        #: Embed missing sections on a thread between calls (long-lived processes); a
        #: short-lived CLI turns it off and embeds in the foreground or in a detached
        #: process (cuedeck_search.detached).
        self.background = True
        self._background: BackgroundEmbedder | None = None
        self.coverage = 1.0  # share of sections with a vector at the last search
        self._last_keyword: tuple[tuple[str, int | None, str | None], Scored] | None = None
        self.history = History(workspace.root)  # past changes' titles (in git)
        self._fusing: tuple[tuple[int, float, bool], SearchSettings] | None = None
        #: True while :meth:`sync` refreshes the index itself: the after-refresh event
        #: raised meanwhile (by that refresh, or another thread's it waited for) is left
        #: to this sync by the plugin's hook, as it reads the index's generation after.
        self.refreshing = False

    # -- keeping in step -------------------------------------------------------------------

    def sync(self, *, rebuild: bool = False) -> None:
        """Follow the index: only documents never seen before are split and tokenised
        (every document, and the saved postings written anew, with ``rebuild``)."""
        with self._lock:
            if rebuild:
                self.catalog.discard()
                self._generation = None
            self.refreshing = True
            try:
                index = self.workspace.fresh_index()
            finally:
                self.refreshing = False
            if index.generation == self._generation:
                return
            changed = None
            if self._generation is not None and self.catalog.ready:
                changed = index.changed_since(self._generation)
            if changed is None:
                self.catalog.sync(index.keys())
            else:  # what a file watcher reported: costs those files, not the workspace
                self.catalog.apply(changed, index.sha)
            self._generation = index.generation
            self.vectors.forget_layout()

    @contextlib.contextmanager
    def held(self) -> Iterator[Catalog]:
        """The catalog in step with the index and held still (no sync by another thread,
        no vectors added by the background embedder) while the caller reads it."""
        with self._lock:
            self.sync()
            yield self.catalog

    @property
    def paths(self) -> list[str]:
        """The path of each document, in the engine's order (dead ones included)."""
        return [path for path, _ in self.catalog.keys]

    @property
    def sections(self) -> list[Section]:
        """Every live section, document by document (splits every file: for benchmarks)."""
        self.sync()
        live = np.flatnonzero(self.catalog.live_docs).tolist()
        return [s for doc in live for s in self.catalog.sections_of(doc)]

    # -- scoring ---------------------------------------------------------------------------

    def _files(self, section_scores: Scores) -> Scores:
        return best_per_file(self.catalog, section_scores)

    def _files_with_support(self, section_scores: Scores) -> Scores:
        """Per file: its best section plus a decaying share of the next ones."""
        return with_support(self.catalog, section_scores)

    def keyword_scores(self, query: str) -> Scored:
        """BM25F per section, and per file (best section plus support, see above; for
        code, :mod:`cuedeck_search.code_files`). The last query's are kept: a search
        that looks up names asks twice."""
        self.sync()
        # HEAD once per query, and only where past changes can matter (a git process
        # would cost more than the query: core reads git's files).
        head = head_commit(self.workspace.root) if self.catalog.code_docs.any() else None
        key = (query, self._generation, head)
        last = self._last_keyword
        if last is not None and last[0] == key:
            return last[1]
        found = self._keyword_scores(query, head)
        self._last_keyword = (key, found)
        return found

    def _keyword_scores(self, query: str, head: str | None) -> Scored:
        # Where there is code, a long query's identifiers weigh less (code_files).
        scales = identifier_scales(query) if self.catalog.code_docs.any() else None
        try:
            sections = self.catalog.keyword.scores(query, scales)
        except PostingsError as exc:  # a damaged saved file: rebuild it and score again
            log.warning("search index damaged (%s); rebuilding it", exc)
            self.catalog.discard()
            self._generation = None
            self.sync()  # the same documents: the same code, so the same scales
            sections = self.catalog.keyword.scores(query, scales)
        files = with_support(self.catalog, sections)
        if self.catalog.code_docs.any():
            history = self._past_changes(head).scores(self.catalog, query)
            files = code_files(self.catalog, query, files, history, self._factors(query), scales)
        return Scored(sections, files)

    def _past_changes(self, head: str | None) -> History:
        """The past change titles in step with ``head``, the index and the config."""
        commits = self.workspace.config.section("search", SearchSettings).history_commits
        self.history.update(self.catalog, self._generation, commits, head)
        return self.history

    def _factors(self, query: str) -> NDArray[np.float64]:
        """Each document's keyword factor for ``query`` (:func:`.code_files.query_factors`)."""
        catalog = self.catalog
        return query_factors(catalog.path_factors, catalog.outside_docs, terms(query))

    def semantic_scores(self, query: str, coverage: Coverage | None = None) -> Scored:
        """Cosine similarity per section and the best per file, from the vectors there
        are; sections without one score -1 (last). Where the workspace holds code, a
        file's positive score is times its factor (tests demoted, as on the keyword side).
        Missing ones are embedded in the background when :attr:`background` is on."""
        if coverage is None:
            with self._lock:
                self.sync()
                coverage = self.vectors.coverage()
        matrix, present = coverage.matrix, coverage.present
        self.coverage = coverage.share
        if self.coverage < 1.0 and self.background:
            self.background_embedder().start()
        sections: Scores = np.full(len(matrix), -1.0, dtype=np.float32)
        if len(matrix) and present.any():
            # einsum, not @: a matrix-vector product through a multithreaded BLAS costs
            # 10-40x more on a busy machine, and its spinning threads slow onnxruntime down.
            vector = self.query_vector(query)
            scores = np.asarray(np.einsum("ij,j->i", matrix, vector), dtype=np.float32)
            sections = np.where(present, scores, np.float32(-1.0)).astype(np.float32)
        files = self._files(sections)
        if self.catalog.code_docs.any():
            files = demoted(files, self._factors(query))
        return Scored(sections, files)

    def section_scores(self, query: str, mode: str) -> SectionScores:
        """Each section's scores for ``query`` by ``mode`` (see :class:`SectionScores`);
        a semantic side with missing vectors starts the background embedder, as
        :meth:`semantic_scores` does."""
        if mode not in MODES:
            raise InvalidInput(
                f"unknown search mode {mode!r} (one of {', '.join(MODES)})", field="mode"
            )
        with self._lock:
            scored = self.keyword_scores(query)
            keyword = np.asarray(scored.sections, dtype=np.float64)
            catalog = self.catalog
            found = definitions(
                keyword,
                np.asarray(scored.files, dtype=np.float64),
                catalog.section_doc,
                catalog.code_docs[catalog.section_doc],
                self._factors(query),
            )
            named = tuple(self.named_sections(query, scored.files))
            fusing = self.fusion_settings()
            weight = fusing.semantic_weight / (
                (fusing.semantic_weight + fusing.keyword_weight) or 1.0
            )
            if mode == "keyword":
                return SectionScores(keyword, None, "keyword", None, found, weight, named)
            coverage = self.vectors.coverage()
            semantic = self.semantic_scores(query, coverage).sections
            share = round(float(coverage.share), 4)
            if mode == "hybrid" and share < 1:
                return SectionScores(keyword, None, "keyword", share, found, weight, named)
            semantic = np.asarray(semantic, dtype=np.float64)
            return SectionScores(keyword, semantic, mode, share, found, weight, named)

    # -- answering -------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        mode: str | None = None,
        limit: int | None = None,
        filters: SearchFilters | None = None,
        fusion: str | None = None,
    ) -> list[SearchResult]:
        """Up to ``limit`` files, best first, for ``query`` by ``mode`` (see :meth:`answer`)."""
        return self.answer(query, mode=mode, limit=limit, filters=filters, fusion=fusion).results

    def answer(
        self,
        query: str,
        *,
        mode: str | None = None,
        limit: int | None = None,
        filters: SearchFilters | None = None,
        fusion: str | None = None,
    ) -> Answer:
        """Search, and say which side answered.

        ``mode`` and ``limit`` default to ``[search] mode`` and ``limit``; ``fusion``
        (``rrf`` or ``weighted``) overrides ``[search] fusion`` for hybrid. The one
        place a search request is checked.
        """
        config = self.workspace.config
        settings = config.section("search", SearchSettings)
        if mode is None and settings.mode not in MODES:  # the config's line says where
            raise config.unavailable("search.mode", settings.mode, list(MODES))
        mode = mode or settings.mode
        limit = settings.limit if limit is None else limit
        if mode not in MODES:
            raise InvalidInput(
                f"unknown search mode {mode!r} (one of {', '.join(MODES)})", field="mode"
            )
        if not 1 <= limit <= MAX_LIMIT:
            raise InvalidInput(f"limit must be 1 to {MAX_LIMIT}", field="limit")
        if not query.strip():
            raise InvalidInput("the query is empty", field="query")
        with self._lock:
            self.sync()
            if not self.catalog.live_docs.any():
                answered = "keyword" if mode == "keyword" else mode
                return Answer([], mode, answered, None if mode == "keyword" else 1.0)
            filters = filters or SearchFilters()
            allowed = self._allowed(filters)
            kind = filters.kind.strip().lower() if filters.kind else None
            if mode == "keyword":
                return Answer(self._keyword(query, allowed, limit, kind), mode, "keyword", None)
            if settings.wait:
                self.embed_all()
            coverage = self.vectors.coverage()
            semantic = self.semantic_scores(query, coverage)
            share = round(coverage.share, 4)
            missing = len(self.vectors.missing_hashes()) if share < 1 else 0
            embedded = self.embedded_files(coverage.present)
            if not (allowed & embedded).any() or (mode == "hybrid" and share < 1):
                # Nothing to rank by meaning yet, or only part: fusing part of the files
                # pushes that part up, so keyword answers alone until all have vectors.
                found = self._keyword(query, allowed, limit, kind)
                answered = "keyword"
            elif mode == "semantic":
                scores = np.where(embedded, semantic.files, np.float32(-1.0)).astype(np.float32)
                found = self._results(
                    query,
                    scores,
                    semantic.sections,
                    allowed,
                    limit,
                    semantic_part=scores,
                    kind=kind,
                )
                answered = "semantic"
            else:
                keyword = self.keyword_scores(query)
                found = self._hybrid(query, keyword, semantic, allowed, limit, fusion, kind)
                answered = "hybrid"
            found = [attrs.evolve(r, semantic_coverage=share, answered_by=answered) for r in found]
            return Answer(found, mode, answered, share, missing)

    def _keyword(
        self, query: str, allowed: NDArray[np.bool_], limit: int, kind: str | None = None
    ) -> list[SearchResult]:
        keyword = self.keyword_scores(query)
        found = self._results(
            query,
            keyword.files,
            keyword.sections,
            allowed,
            limit,
            keyword_part=keyword.files,
            kind=kind,
        )
        return [attrs.evolve(r, answered_by="keyword") for r in found]

    def _allowed(self, filters: SearchFilters) -> NDArray[np.bool_]:
        return allowed_documents(self.catalog, self.workspace.index, filters)

    def named_sections(self, query: str, files: Scores | None = None) -> list[int]:
        """The sections of the definitions ``query`` names, best first (none when it is no
        name, or names nothing among the code files the keyword side ranks highest, by
        ``files`` when the caller has them)."""
        name = as_name(query)
        if name is None:
            return []
        self.sync()
        if not self.catalog.code_docs.any():
            return []
        if files is None:
            files = self.keyword_scores(query).files
        return named_sections(self.catalog, self.workspace.index, name, files)

    def fusion_settings(self) -> SearchSettings:
        """``[search]`` with hybrid's weights for this workspace: the configured ones for
        prose, blended towards the code weights by the share of sections that are code
        (:func:`cuedeck_search.code_files.weights`; the code weights lean further on
        keyword where it has past changes' titles)."""
        config = self.workspace.config
        settings = config.section("search", SearchSettings)
        share = self.catalog.code_share
        if share and self._last_keyword is None:  # no query has read HEAD yet
            self._past_changes(head_commit(self.workspace.root))
        history = bool(share) and self._past_changes(self.history.head).present
        key = (id(config), share, history)
        if self._fusing is not None and self._fusing[0] == key:
            return self._fusing[1]
        if share:
            semantic, keyword = weights(
                settings.semantic_weight, settings.keyword_weight, share, history=history
            )
            settings = attrs.evolve(settings, semantic_weight=semantic, keyword_weight=keyword)
        self._fusing = (key, settings)
        return settings

    def _hybrid(
        self,
        query: str,
        keyword: Scored,
        semantic: Scored,
        allowed: NDArray[np.bool_],
        limit: int,
        fusion: str | None,
        kind: str | None = None,
    ) -> list[SearchResult]:
        from cuedeck_search.fusion import fuse

        fused = fuse(
            self.fusion_settings(), fusion,
            keyword.files, keyword.sections, semantic.files, semantic.sections, allowed,
        )  # fmt: skip
        return self._results(
            query,
            fused.files,
            fused.sections,
            allowed,
            limit,
            keyword_part=fused.keyword_part,
            semantic_part=fused.semantic_part,
            kind=kind,
        )

    def _results(
        self,
        query: str,
        file_scores: Scores,
        section_scores: Scores,
        allowed: NDArray[np.bool_],
        limit: int,
        *,
        keyword_part: Scores | None = None,
        semantic_part: Scores | None = None,
        kind: str | None = None,
    ) -> list[SearchResult]:
        """The best ``limit`` allowed files scoring above 0, ties broken by path; when the
        query names definitions (:mod:`cuedeck_search.names`), their files first, each
        with its definition as the best section. With a ``kind``, only sections of
        definitions of that kind count (and show), and a file none of whose such
        sections matched is passed over."""
        named = [
            sid for sid in self.named_sections(query) if allowed[self.catalog.section_doc[sid]]
        ]
        first_docs = list(dict.fromkeys(int(self.catalog.section_doc[sid]) for sid in named))
        candidates = np.flatnonzero(allowed & (file_scores > 0))
        if len(candidates) > limit and kind is None:
            candidates = candidates[np.argpartition(-file_scores[candidates], limit - 1)[:limit]]
        keys = self.catalog.keys
        rest = sorted(
            set(candidates.tolist()).difference(first_docs),
            key=lambda d: (-file_scores[d], keys[d][0]),
        )
        ranked = [*first_docs, *rest]

        def item(doc: int) -> Ranked | None:
            first, end = int(self.catalog.starts[doc]), int(self.catalog.ends[doc])
            local = section_scores[first:end].tolist()
            best = max(local, default=0.0)
            for rank, sid in enumerate(s for s in named if first <= s < end):
                local[sid - first] = max(best, 0.0) + 1.0 + len(named) - rank
            if kind is not None:
                local = of_kind(self.catalog, self.workspace.index, doc, local, kind)
                if max(local, default=0.0) <= 0:
                    return None
            return Ranked(
                path=keys[doc][0],
                score=float(file_scores[doc]),
                section_scores=local,
                section=lambda at: self.catalog.section(doc, at),
                keyword=None if keyword_part is None else float(keyword_part[doc]),
                semantic=None if semantic_part is None else float(semantic_part[doc]),
            )

        found = (made for doc in ranked if (made := item(doc)) is not None)
        return results(self.workspace, query, itertools.islice(found, limit))
