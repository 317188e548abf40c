"""The search engine of one workspace: sections, keyword index, vectors, fusion.

:class:`SearchEngine` is the workspace service ``search`` (one per workspace). Before a
query it brings itself in step with the index: documents whose sha256 changed are split
and tokenised again, and only sections whose text changed are embedded again. Scores
are computed per section and aggregated per file (semantic: the best section; keyword:
the best plus a decaying share of the next two), and a file's result lists its best
sections (anchors) first.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

import attrs
import numpy as np

from cuedeck.errors import InvalidInput
from cuedeck.models import SearchFilters, SearchResult
from cuedeck.parsing import split_lines
from cuedeck_search.analysis import terms
from cuedeck_search.keyword import DocumentTerms, KeywordIndex, tokenise
from cuedeck_search.sections import Section, split_sections
from cuedeck_search.store import SectionStore, fingerprint

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import NDArray

    from cuedeck.hookspecs import Embedder
    from cuedeck.models import Document
    from cuedeck.workspace import Workspace
    from cuedeck_search.background import BackgroundEmbedder
    from cuedeck_search.user_cache import EmbeddingCache

MODES: tuple[str, ...] = ("keyword", "semantic", "hybrid")
MAX_ANCHORS = 3
SUPPORT_DEPTH = 3  # sections of a file that count towards its keyword score
SUPPORT_DECAY = 0.3  # weight of the 2nd section; the 3rd counts 0.3 ** 2
SNIPPET_CHARS = 160
SNIPPET_LINES = 40  # lines of the best section considered for its snippet


@attrs.frozen
class _Scored:
    """Per-file scores of one side (keyword or semantic) and the per-section ones."""

    sections: NDArray[np.float32]
    files: NDArray[np.float32]


@attrs.define
class EngineStats:
    """Counters of what the engine did (tests and benchmarks read them)."""

    documents_split: int = 0  # read, split and tokenised
    documents_loaded: int = 0  # taken from the cache table instead
    chunks_embedded: int = 0  # sections embedded by this engine's model
    chunks_loaded: int = 0  # vectors taken from the shared cache instead


class SearchEngine:
    """Keyword, semantic and hybrid search over the sections of one workspace."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self.keyword = KeywordIndex()
        self.stats = EngineStats()
        self._lock = threading.RLock()
        self._generation: int | None = None
        self._split: dict[tuple[str, str], tuple[list[Section], DocumentTerms]] = {}
        self._store = SectionStore(workspace.index.connect, fingerprint(self.keyword.settings))
        self.documents: list[Document] = []
        self.sections: list[Section] = []
        self._starts: NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._ends: NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._section_doc: NDArray[np.int64] = np.zeros(0, dtype=np.int64)
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
        """Follow the index: split and tokenise only documents never seen before.

        Documents come from memory, else from the cache table, else from the file.
        """
        with self._lock:
            if self._generation is None:
                documents = self.workspace.documents  # the first access refreshes the index
            elif self.workspace.index.generation != self._generation:
                documents = self.workspace.index.documents
            else:
                return
            self._generation = self.workspace.index.generation
            keys = [(path, document.sha256) for path, document in documents.items()]
            unknown = {key for key in keys if key not in self._split}
            loaded = self._store.load(unknown) if unknown else {}
            self.stats.documents_loaded += len(loaded)
            fresh: list[tuple[tuple[str, str], list[Section], DocumentTerms]] = []
            split: dict[tuple[str, str], tuple[list[Section], DocumentTerms]] = {}
            for key, document in zip(keys, documents.values(), strict=True):
                entry = self._split.get(key) or loaded.get(key)
                if entry is None:
                    sections = self._split_document(document)
                    entry = (sections, tokenise(key[0], sections, self.keyword.settings))
                    fresh.append((key, *entry))
                    self.stats.documents_split += 1
                split[key] = entry
            if fresh or len(loaded) != len(unknown) or len(split) != len(self._split):
                self._store.save(fresh, split)
            self._split = split
            self.documents = list(documents.values())
            self.sections = [s for sections, _ in split.values() for s in sections]
            sizes = np.asarray([len(sections) for sections, _ in split.values()], dtype=np.int64)
            self._ends = np.cumsum(sizes, dtype=np.int64)
            self._starts = self._ends - sizes
            self._section_doc = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
            self.keyword.update(
                (key, sections, terms_) for key, (sections, terms_) in split.items()
            )
            self._matrix = None

    def _split_document(self, document: Document) -> list[Section]:
        try:
            text = self.workspace.snapshot(document.path).text
        except Exception:  # vanished since the refresh: it drops out at the next one
            text = ""
        return split_sections(document, split_lines(text))

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

    def missing_sections(self) -> list[Section]:
        """Sections without a vector, after taking what the cache holds."""
        with self._lock:
            self.sync()
            wanted = {s.hash: s for s in self.sections}
            missing = [h for h in wanted if h not in self._vectors]
            if missing:
                found = self.cache.load(missing)
                self.stats.chunks_loaded += len(found)
                if found:
                    self._vectors.update(found)
                    self._matrix = None
            return [wanted[h] for h in missing if h not in self._vectors]

    def embed_sections(self, sections: Sequence[Section], *, show_progress: bool = True) -> None:
        """Embed ``sections`` (batches committed as they are done)."""
        self._embed(sections, show_progress=show_progress)

    def embed_all(self) -> int:
        """Embed every section that has no vector yet, in the foreground; how many."""
        if self._background is not None:
            self._background.wait()
        missing = self.missing_sections()
        if missing:
            self._embed(missing)
            cap = self.workspace.config.search.embedding_cache_mb
            if cap > 0:
                self.cache.enforce_cap(cap, keep={s.hash for s in self.sections})
        return len(missing)

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
            self.missing_sections()
            if self._matrix is not None:
                return self._matrix, np.ones(len(self.sections), dtype=bool), 1.0
            present = np.fromiter(
                (s.hash in self._vectors for s in self.sections),
                dtype=bool,
                count=len(self.sections),
            )
            dimensions = len(next(iter(self._vectors.values()), ()))
            zero = np.zeros(dimensions, dtype=np.float32)
            rows = [self._vectors.get(s.hash, zero) for s in self.sections]
            matrix = np.stack(rows) if rows else np.zeros((0, dimensions), dtype=np.float32)
            matrix = np.ascontiguousarray(matrix, dtype=np.float32)
            coverage = float(present.mean()) if len(present) else 1.0
            if coverage == 1.0:
                # Forget vectors of sections that are gone, so memory follows the workspace.
                self._vectors = {s.hash: self._vectors[s.hash] for s in self.sections}
                self._matrix = matrix
            return matrix, present, coverage

    def _embed(self, sections: Sequence[Section], *, show_progress: bool = True) -> None:
        from cuedeck_search.vectors import embed_into

        embed_into(self, sections, show_progress=show_progress)

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
            return np.zeros(len(self.documents), dtype=np.float32)
        return np.maximum.reduceat(section_scores, self._starts).astype(np.float32)

    def _files_with_support(self, section_scores: NDArray[np.float32]) -> NDArray[np.float32]:
        """Per file: its best section plus a decaying share of the next ones.

        A page with several matching sections beats a stub whose one short section
        matches as well (measured: +0.065 nDCG@10 for keyword on the labelled queries,
        none for semantic, whose best section alone ranks best).
        """
        positive = np.flatnonzero(section_scores > 0)
        files = np.zeros(len(self.documents), dtype=np.float64)
        if not len(positive):
            return files.astype(np.float32)
        docs = self._section_doc[positive]
        order = positive[np.lexsort((-section_scores[positive], docs))]
        docs = self._section_doc[order]
        rank = np.arange(len(order)) - np.searchsorted(docs, docs, side="left")
        kept = rank < SUPPORT_DEPTH
        weights = SUPPORT_DECAY ** rank[kept].astype(np.float64)
        np.add.at(files, docs[kept], section_scores[order][kept] * weights)
        return files.astype(np.float32)

    def keyword_scores(self, query: str) -> _Scored:
        """BM25F per section, and per file (best section plus support, see above)."""
        self.sync()
        sections = self.keyword.scores(query)
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
            if not self.documents:
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
        if filters == SearchFilters():
            return np.ones(len(self.documents), dtype=bool)
        return np.fromiter(
            (filters.accepts(d.frontmatter) for d in self.documents),
            dtype=bool,
            count=len(self.documents),
        )

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
        ranked = sorted(
            candidates.tolist(), key=lambda d: (-file_scores[d], self.documents[d].path)
        )
        session = self.workspace.mask_session()
        query_terms = [t for t in terms(query) if t.isalnum() or "_" in t]
        results: list[SearchResult] = []
        for doc_index in ranked:
            document = self.documents[doc_index]
            first = int(self._starts[doc_index])
            local = section_scores[first : int(self._ends[doc_index])]
            order = np.argsort(-local, kind="stable")[: MAX_ANCHORS * 4].tolist()
            anchors: list[str] = []
            for position in order:
                section = self.sections[first + position]
                if len(anchors) == MAX_ANCHORS or local[position] <= 0:
                    break
                if section.anchor and section.anchor not in anchors:
                    anchors.append(section.anchor)
            best = self.sections[first + order[0]]
            # One masking call per result: titles, headings and snippet are all shown.
            shown = [document.title, *anchors, _snippet(best, query_terms)]
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


_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_CLEAN = re.compile(r"`+|\*\*|^\s*(?:#+|>|[-*+]|\d+[.)])\s+|\{\s*#[^}]*\}|<[^>]+>")


def _snippet(section: Section, query_terms: Sequence[str]) -> str:
    """The prose line of ``section`` holding most query stems, shortened, on one line."""
    lines = [line for line in section.prose.splitlines()[:SNIPPET_LINES] if line.strip()]
    if not lines:
        return section.context[:SNIPPET_CHARS]
    # A stem is (nearly always) a prefix of its words: a substring test is enough here.
    best = max(lines, key=lambda line: sum(t in line.lower() for t in query_terms))
    text = " ".join(_CLEAN.sub("", _LINK.sub(r"\1", best)).split())
    if len(text) > SNIPPET_CHARS:
        text = text[: SNIPPET_CHARS - 1].rsplit(" ", 1)[0] + "…"
    return text
