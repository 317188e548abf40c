"""The search engine of one workspace: sections, keyword index, vectors, fusion.

:class:`SearchEngine` is the workspace service ``search`` (one per workspace). Before a
query it brings itself in step with the index: documents whose sha256 changed are split
and tokenised again, and only sections whose text changed are embedded again. Scores
are computed per section and aggregated per file (semantic: the best section; keyword:
the best plus a decaying share of the next two), and a file's result lists its best
sections (anchors) first.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

import attrs
import numpy as np

from cuedeck.errors import InvalidInput
from cuedeck.models import SearchFilters, SearchResult
from cuedeck_search.analysis import terms
from cuedeck_search.catalog import Catalog, CatalogStats
from cuedeck_search.keyword import KeywordSettings
from cuedeck_search.postings import PostingsError
from cuedeck_search.snippets import snippet

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import NDArray

    from cuedeck.hookspecs import Embedder
    from cuedeck.workspace import Workspace
    from cuedeck_search.background import BackgroundEmbedder
    from cuedeck_search.sections import Section
    from cuedeck_search.user_cache import EmbeddingCache

log = logging.getLogger("cuedeck")

MODES: tuple[str, ...] = ("keyword", "semantic", "hybrid")
MAX_ANCHORS = 3
SUPPORT_DEPTH = 3  # sections of a file that count towards its keyword score
SUPPORT_DECAY = 0.3  # weight of the 2nd section; the 3rd counts 0.3 ** 2


@attrs.frozen
class _Scored:
    """Per-file scores of one side (keyword or semantic) and the per-section ones."""

    sections: NDArray[np.float32]
    files: NDArray[np.float32]


@attrs.define
class EngineStats:
    """Counters of what the engine did (tests and benchmarks read them)."""

    catalog: CatalogStats  # documents split, loaded and merged, counted by the catalog
    chunks_embedded: int = 0  # sections embedded by this engine's model
    chunks_loaded: int = 0  # vectors taken from the shared cache instead

    @property
    def documents_split(self) -> int:
        """Documents read, split and tokenised."""
        return self.catalog.documents_split

    @property
    def documents_loaded(self) -> int:
        """Documents taken from saved postings instead."""
        return self.catalog.documents_loaded


class SearchEngine:
    """Keyword, semantic and hybrid search over the sections of one workspace."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self.catalog = Catalog(workspace, KeywordSettings())
        self.stats = EngineStats(catalog=self.catalog.stats)
        self._lock = threading.RLock()
        self._generation: int | None = None
        self._vectors: dict[str, NDArray[np.float32]] = {}
        self._matrix: NDArray[np.float32] | None = None
        self._queries: OrderedDict[str, NDArray[np.float32]] = OrderedDict()
        self._embedder: Embedder | None = None
        self._cache: EmbeddingCache | None = None
        #: Embed missing sections on a thread between calls (long-lived processes); a
        #: short-lived CLI turns it off and embeds in the foreground when asked to.
        self.background = True
        self._background: BackgroundEmbedder | None = None
        self.coverage = 1.0  # share of sections with a vector at the last search

    # -- keeping in step -------------------------------------------------------------------

    def sync(self) -> None:
        """Follow the index: only documents never seen before are split and tokenised."""
        with self._lock:
            index = self.workspace.fresh_index()
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
            self._matrix = None

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

    # -- semantic side ---------------------------------------------------------------------

    @property
    def embedder(self) -> Embedder:
        """The embedder ``[search] embedder`` selects (resolved once per engine)."""
        if self._embedder is None:
            from cuedeck_search.embedders import workspace_embedder

            self._embedder = workspace_embedder(self.workspace)
        return self._embedder

    @property
    def cache(self) -> EmbeddingCache:
        """The shared embedding cache, for this engine's model."""
        if self._cache is None:
            from cuedeck_search.user_cache import EmbeddingCache

            # The model id alone: loading cached vectors must not wait for the model.
            self._cache = EmbeddingCache(self.embedder.model_id)
        return self._cache

    def add_vectors(self, model_id: str, items: Sequence[tuple[str, NDArray[np.float32]]]) -> None:
        """Take vectors made by ``model_id`` (refused unless it is this engine's model)."""
        if model_id != self.cache.model_id:
            raise InvalidInput(f"vectors of {model_id!r} offered to {self.cache.model_id!r}")
        with self._lock:  # a search in another thread reads these
            self._vectors.update(items)
            self._matrix = None

    def ensure_vectors(self) -> NDArray[np.float32]:
        """The section-by-dimension matrix, embedding in the foreground what is missing.

        Vectors are committed in batches, so an interrupt (Ctrl-C) loses at most one
        batch; the next search carries on from there.
        """
        self.embed_all()
        return self.available_vectors()[0]

    def _live_hashes(self) -> list[str]:
        hashes = self.catalog.hashes()
        return [hashes[i] for i in np.flatnonzero(self.catalog.live_sections).tolist()]

    def missing_hashes(self) -> list[str]:
        """Hashes of live sections without a vector, after taking what the cache holds."""
        with self._lock:
            self.sync()
            missing = [h for h in dict.fromkeys(self._live_hashes()) if h not in self._vectors]
            if missing:
                found = self.cache.load(missing)
                self.stats.chunks_loaded += len(found)
                if found:
                    self._vectors.update(found)
                    self._matrix = None
            return [h for h in missing if h not in self._vectors]

    def missing_sections(self) -> list[Section]:
        """Sections without a vector (each text once), split from their files."""
        with self._lock:
            missing = set(self.missing_hashes())
            if not missing:
                return []
            hashes = self.catalog.hashes()
            live = self.catalog.live_sections
            docs = {
                int(self.catalog.section_doc[i])
                for i, h in enumerate(hashes)
                if h in missing and live[i]
            }
            found: dict[str, Section] = {}
            for doc in sorted(docs):
                for section in self.catalog.sections_of(doc):
                    if section.hash in missing:
                        found.setdefault(section.hash, section)
            return list(found.values())

    def embed_sections(self, sections: Sequence[Section]) -> None:
        """Embed ``sections`` (batches committed as they are done; progress reported)."""
        from cuedeck_search.vectors import embed_into

        embed_into(self, sections)

    def embed_all(self) -> int:
        """Embed every section that has no vector yet, in the foreground; how many."""
        if self._background is not None:
            self._background.wait()
        missing = self.missing_sections()
        if missing:
            self.embed_sections(missing)
            self.trim_cache()
        return len(missing)

    def trim_cache(self) -> int:
        """Hold the user cache to ``[search] embedding_cache_mb``, never evicting this
        workspace's live vectors; how many rows went."""
        cap = self.workspace.config.search.embedding_cache_mb
        if cap <= 0:
            return 0
        with self._lock:
            keep = set(self._live_hashes())
        return self.cache.enforce_cap(cap, keep=keep)

    def background_embedder(self) -> BackgroundEmbedder:
        """The thread that embeds between calls (created on first use)."""
        if self._background is None:
            from cuedeck_search.background import BackgroundEmbedder

            self._background = BackgroundEmbedder(self)
        return self._background

    def available_vectors(self) -> tuple[NDArray[np.float32], NDArray[np.bool_], float]:
        """The vectors there are now (zero rows where missing), which rows are real, and
        the share of sections covered; never embeds."""
        with self._lock:
            self.missing_hashes()
            live = self.catalog.live_sections
            if self._matrix is not None:
                return self._matrix, live, 1.0
            hashes = self.catalog.hashes()
            present = live & np.fromiter(
                (h in self._vectors for h in hashes), dtype=bool, count=len(hashes)
            )
            dimensions = len(next(iter(self._vectors.values()), ()))
            zero = np.zeros(dimensions, dtype=np.float32)
            rows = [
                self._vectors.get(h, zero) if p else zero
                for h, p in zip(hashes, present.tolist(), strict=True)
            ]
            matrix = np.stack(rows) if rows else np.zeros((0, dimensions), dtype=np.float32)
            matrix = np.ascontiguousarray(matrix, dtype=np.float32)
            wanted = int(live.sum())
            coverage = float(present.sum()) / wanted if wanted else 1.0
            if coverage == 1.0:
                # Forget vectors of sections that are gone, so memory follows the workspace.
                self._vectors = {h: self._vectors[h] for h in self._live_hashes()}
                self._matrix = matrix
            return matrix, present, coverage

    def query_vector(self, query: str) -> NDArray[np.float32]:
        """The unit vector of ``query`` (the last 64 queries are remembered)."""
        vector = self._queries.get(query)
        if vector is None:
            vector = self.embedder.embed([query])[0]
            self._queries[query] = vector
            if len(self._queries) > 64:
                self._queries.popitem(last=False)
        else:
            self._queries.move_to_end(query)
        return vector

    # -- scoring ---------------------------------------------------------------------------

    def _files(self, section_scores: NDArray[np.float32]) -> NDArray[np.float32]:
        if not len(section_scores):
            return np.zeros(len(self.catalog.keys), dtype=np.float32)
        return np.maximum.reduceat(section_scores, self.catalog.starts).astype(np.float32)

    def _files_with_support(self, section_scores: NDArray[np.float32]) -> NDArray[np.float32]:
        """Per file: its best section plus a decaying share of the next ones.

        A page with several matching sections beats a stub whose one short section
        matches as well (measured: +0.065 nDCG@10 for keyword on the labelled queries,
        none for semantic, whose best section alone ranks best).
        """
        positive = np.flatnonzero(section_scores > 0)
        files = np.zeros(len(self.catalog.keys), dtype=np.float64)
        if not len(positive):
            return files.astype(np.float32)
        section_doc = self.catalog.section_doc
        docs = section_doc[positive]
        order = positive[np.lexsort((-section_scores[positive], docs))]
        docs = section_doc[order]
        rank = np.arange(len(order)) - np.searchsorted(docs, docs, side="left")
        kept = rank < SUPPORT_DEPTH
        weights = SUPPORT_DECAY ** rank[kept].astype(np.float64)
        np.add.at(files, docs[kept], section_scores[order][kept] * weights)
        return files.astype(np.float32)

    def keyword_scores(self, query: str) -> _Scored:
        """BM25F per section, and per file (best section plus support, see above)."""
        self.sync()
        try:
            sections = self.catalog.keyword.scores(query, self.catalog.section_texts)
        except PostingsError as exc:  # a damaged saved file: rebuild it and score again
            log.warning("search index damaged (%s); rebuilding it", exc)
            self.catalog.discard()
            self._generation = None
            self.sync()
            sections = self.catalog.keyword.scores(query, self.catalog.section_texts)
        return _Scored(sections, self._files_with_support(sections))

    def semantic_scores(self, query: str) -> _Scored:
        """Cosine similarity per section and the best per file, from the vectors there
        are; sections without one score -1 (last). Missing ones are embedded in the
        background when :attr:`background` is on."""
        matrix, present, self.coverage = self.available_vectors()
        if self.coverage < 1.0 and self.background:
            self.background_embedder().start()
        sections: NDArray[np.float32] = np.full(len(matrix), -1.0, dtype=np.float32)
        if len(matrix) and present.any():
            # einsum, not @: a matrix-vector product through a multithreaded BLAS costs
            # 10-40x more on a busy machine, and its spinning threads slow onnxruntime down.
            vector = self.query_vector(query)
            scores = np.asarray(np.einsum("ij,j->i", matrix, vector), dtype=np.float32)
            sections = np.where(present, scores, np.float32(-1.0)).astype(np.float32)
        return _Scored(sections, self._files(sections))

    def search(
        self,
        query: str,
        *,
        mode: str = "hybrid",
        limit: int = 5,
        filters: SearchFilters | None = None,
        fusion: str | None = None,
    ) -> list[SearchResult]:
        """Up to ``limit`` files, best first, for ``query`` by ``mode``.

        ``fusion`` (``rrf`` or ``weighted``) overrides ``[search] fusion`` for hybrid.
        """
        if mode not in MODES:
            raise InvalidInput(f"unknown search mode {mode!r}", field="mode")
        if limit < 1:
            raise InvalidInput("limit must be at least 1", field="limit")
        with self._lock:
            self.sync()
            if not self.catalog.live_docs.any():
                return []
            allowed = self._allowed(filters or SearchFilters())
            if mode == "keyword":
                keyword = self.keyword_scores(query)
                return self._results(
                    query, keyword.files, keyword.sections, allowed, limit,
                    keyword_part=keyword.files,
                )  # fmt: skip
            if self.workspace.config.search.wait:
                self.embed_all()
            semantic = self.semantic_scores(query)
            coverage = round(self.coverage, 4)
            if mode == "semantic" and coverage > 0:
                found = self._results(
                    query, semantic.files, semantic.sections, allowed, limit,
                    semantic_part=semantic.files,
                )  # fmt: skip
            else:  # hybrid; or semantic with nothing embedded yet: keyword answers alone
                keyword = self.keyword_scores(query)
                found = self._hybrid(query, keyword, semantic, allowed, limit, fusion)
            return [attrs.evolve(result, semantic_coverage=coverage) for result in found]

    def _allowed(self, filters: SearchFilters) -> NDArray[np.bool_]:
        live = self.catalog.live_docs
        if filters == SearchFilters():
            return live
        index = self.workspace.index
        accepted = (
            bool(live[i]) and (d := index.get(path)) is not None and filters.accepts(d.frontmatter)
            for i, (path, _) in enumerate(self.catalog.keys)
        )
        return np.fromiter(accepted, dtype=bool, count=len(live))

    def _hybrid(
        self,
        query: str,
        keyword: _Scored,
        semantic: _Scored,
        allowed: NDArray[np.bool_],
        limit: int,
        fusion: str | None,
    ) -> list[SearchResult]:
        from cuedeck_search.fusion import fuse

        fused = fuse(
            self.workspace.config.search, fusion,
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
        )

    # -- results ---------------------------------------------------------------------------

    def _results(
        self,
        query: str,
        file_scores: NDArray[np.float32],
        section_scores: NDArray[np.float32],
        allowed: NDArray[np.bool_],
        limit: int,
        *,
        keyword_part: NDArray[np.float32] | None = None,
        semantic_part: NDArray[np.float32] | None = None,
    ) -> list[SearchResult]:
        candidates = np.flatnonzero(allowed & (file_scores > 0))
        if not len(candidates):
            return []
        if len(candidates) > limit:
            top = np.argpartition(-file_scores[candidates], limit - 1)[:limit]
            candidates = candidates[top]
        # Ties broken by path, so results are stable between runs.
        keys = self.catalog.keys
        ranked = sorted(candidates.tolist(), key=lambda d: (-file_scores[d], keys[d][0]))
        session = self.workspace.mask_session()
        query_terms = [t for t in terms(query) if t.isalnum() or "_" in t]
        results: list[SearchResult] = []
        for doc_index in ranked:
            document = self.workspace.index.get(keys[doc_index][0])
            sections = self.catalog.sections_of(doc_index)
            first = int(self.catalog.starts[doc_index])
            # The file may have changed since the index read it: show what it holds now.
            local = section_scores[first : first + len(sections)]
            if document is None or not len(local):
                continue
            order = np.argsort(-local, kind="stable")[: MAX_ANCHORS * 4].tolist()
            anchors: list[str] = []
            for position in order:
                section = sections[position]
                if len(anchors) == MAX_ANCHORS or local[position] <= 0:
                    break
                if section.anchor and section.anchor not in anchors:
                    anchors.append(section.anchor)
            best = sections[order[0]]
            # One masking call per result: titles, headings and snippet are all shown.
            shown = [document.title, *anchors, snippet(best, query_terms)]
            masked = session.mask("\n".join(shown), path=document.path).split("\n")
            if len(masked) != len(shown):
                masked = [session.mask(text, path=document.path) for text in shown]
            results.append(
                SearchResult(
                    path=document.path,
                    title=masked[0],
                    hash=document.sha256,
                    tokens=document.tokens,
                    score=round(float(file_scores[doc_index]), 6),
                    anchors=tuple(masked[1:-1]),
                    line=best.line,
                    snippet=masked[-1],
                    keyword_score=_part(keyword_part, doc_index),
                    semantic_score=_part(semantic_part, doc_index),
                )
            )
        return results


def _part(values: NDArray[np.float32] | None, index: int) -> float | None:
    return None if values is None else round(float(values[index]), 6)
