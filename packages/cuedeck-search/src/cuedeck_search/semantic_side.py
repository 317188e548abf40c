"""The engine's semantic side: its section vectors, what is missing, and embedding it.

:class:`SemanticSide` is the part of :class:`~cuedeck_search.engine.SearchEngine` that
keeps the vectors: what the model and the shared cache hold, which sections still need
one, and embedding them in the foreground or on the background embedder's thread. The
engine scores and answers; this keeps what its semantic scores are made from.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable, Sequence

    from numpy.typing import NDArray

    Scores = NDArray[np.floating[Any]]

    from cuedeck.hookspecs import Embedder
    from cuedeck.workspace import Workspace
    from cuedeck_search.background import BackgroundEmbedder
    from cuedeck_search.catalog import Catalog
    from cuedeck_search.detached import Estimate
    from cuedeck_search.sections import Section
    from cuedeck_search.user_cache import EmbeddingCache
    from cuedeck_search.vectors import SectionVectors


class SemanticSide:
    """Vectors of the engine's sections and their upkeep (the engine sets the fields)."""

    workspace: Workspace
    catalog: Catalog
    vectors: SectionVectors
    _lock: threading.RLock
    _background: BackgroundEmbedder | None

    def sync(self, *, rebuild: bool = False) -> None:
        """Follow the index (the engine's)."""
        raise NotImplementedError

    @property
    def embedder(self) -> Embedder:
        """The embedder ``[search] embedder`` selects (resolved once per engine)."""
        return self.vectors.embedder

    @property
    def cache(self) -> EmbeddingCache:
        """The shared embedding cache, for this engine's model."""
        return self.vectors.cache

    def add_vectors(self, model_id: str, items: Sequence[tuple[str, Scores]]) -> None:
        """Take vectors made by ``model_id`` (refused unless it is this engine's model)."""
        self.vectors.add(model_id, items)

    def ensure_vectors(self) -> Scores:
        """The section-by-dimension matrix, embedding in the foreground what is missing.

        Vectors are committed in batches, so an interrupt (Ctrl-C) loses at most one
        batch; the next search carries on from there.
        """
        self.embed_all()
        return self.available_vectors()[0]

    def missing_hashes(self) -> list[str]:
        """Hashes of live sections without a vector, after taking what the cache holds."""
        with self._lock:
            self.sync()
            return self.vectors.missing_hashes()

    def missing_sections(self) -> list[Section]:
        """Sections without a vector (each text once), split from their files."""
        with self._lock:
            self.sync()
            return self.vectors.missing_sections()

    def embed_sections(
        self, sections: Sequence[Section], stop: Callable[[], bool] | None = None
    ) -> int:
        """Embed ``sections`` (chunks committed as they are done; progress reported)."""
        return self.vectors.embed(sections, stop)

    def embed_all(self, stop: Callable[[], bool] | None = None) -> int:
        """Embed every section that has no vector yet, in the foreground; how many."""
        if self._background is not None:
            self._background.wait()
        missing = self.missing_sections()
        done = 0
        if missing:
            done = self.embed_sections(missing, stop)
            self.trim_cache()
        return done

    def trim_cache(self) -> int:
        """Hold the user cache to ``[search] embedding_cache_mb`` (this workspace's live
        vectors stay); how many rows went."""
        return self.vectors.trim_cache()

    def background_embedder(self) -> BackgroundEmbedder:
        """The thread that embeds between calls (created on first use)."""
        if self._background is None:
            from cuedeck_search.background import BackgroundEmbedder

            self._background = BackgroundEmbedder(self)
        return self._background

    def estimate(self, sections: int) -> Estimate:
        """How long embedding ``sections`` should take here (this model's last rate)."""
        from cuedeck_search.detached import Estimate

        return Estimate(self.cache.model_id, sections, self.cache.rate())

    def available_vectors(self) -> tuple[Scores, NDArray[np.bool_], float]:
        """The vectors there are now (zero rows where missing), which rows are real, and
        the share of sections covered; never embeds."""
        with self._lock:
            self.sync()
            found = self.vectors.coverage()
            return found.matrix, found.present, found.share

    def query_vector(self, query: str) -> Scores:
        """The unit vector of ``query`` (the last 64 queries are remembered)."""
        return self.vectors.query(query)

    def embedded_files(self, present: NDArray[np.bool_]) -> NDArray[np.bool_]:
        """Documents with at least one section that has a vector."""
        if not len(present):
            return np.zeros(len(self.catalog.keys), dtype=bool)
        return np.logical_or.reduceat(present, self.catalog.starts)
