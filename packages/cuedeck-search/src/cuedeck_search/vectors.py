"""The section vectors of one workspace: which exist, which are missing, embedding them.

:class:`SectionVectors` belongs to the engine and follows its catalog. Vectors come from
the shared user cache (:mod:`cuedeck_search.user_cache`) first; sections without one are
embedded once per distinct text (their hash), shortest first (coverage grows fastest,
and each call to the embedder gets texts of similar length), in chunks committed to the
cache as they are done: an interrupt loses at most one chunk.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import TYPE_CHECKING

import attrs
import numpy as np

from cuedeck.errors import InvalidInput
from cuedeck.progress import report
from cuedeck_search.settings import SearchSettings

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable, Sequence

    from numpy.typing import NDArray

    from cuedeck.hookspecs import Embedder
    from cuedeck.workspace import Workspace
    from cuedeck_search.catalog import Catalog
    from cuedeck_search.sections import Section
    from cuedeck_search.user_cache import EmbeddingCache

#: Sections per embedder call and cache commit: enough batches to keep every thread busy,
#: few enough that an interrupt loses little. The first chunk is smaller, so the first
#: progress report comes within the first second.
CHUNK = 64
FIRST_CHUNK = 16


@attrs.frozen
class Coverage:
    """Which sections have a vector: the matrix (zero rows where missing), the rows that
    are real, and the share of live sections covered."""

    matrix: NDArray[np.float32]
    present: NDArray[np.bool_]
    share: float


class SectionVectors:
    """Vectors of the live sections of ``catalog``, for ``workspace``'s embedder."""

    def __init__(self, workspace: Workspace, catalog: Catalog, lock: threading.RLock) -> None:
        self.workspace = workspace
        self.catalog = catalog
        self._lock = lock  # the engine's: a search in another thread reads these
        self._vectors: dict[str, NDArray[np.float32]] = {}
        self._matrix: NDArray[np.float32] | None = None
        self._queries: OrderedDict[str, NDArray[np.float32]] = OrderedDict()
        self._embedder: Embedder | None = None
        self._cache: EmbeddingCache | None = None
        self.embedded = 0  # sections embedded by this process's model
        self.loaded = 0  # vectors taken from the shared cache instead
        self.embed_seconds = 0.0  # time spent embedding them

    @property
    def embedder(self) -> Embedder:
        """The embedder ``[search] embedder`` selects (resolved once)."""
        if self._embedder is None:
            from cuedeck_search.embedders import workspace_embedder

            self._embedder = workspace_embedder(self.workspace)
        return self._embedder

    @property
    def cache(self) -> EmbeddingCache:
        """The shared embedding cache, for this embedder's model."""
        if self._cache is None:
            from cuedeck_search.user_cache import EmbeddingCache

            # The model id alone: loading cached vectors must not wait for the model.
            self._cache = EmbeddingCache(self.embedder.model_id)
        return self._cache

    def forget_layout(self) -> None:
        """The catalog changed: the matrix is laid out again at the next use."""
        self._matrix = None

    def add(self, model_id: str, items: Sequence[tuple[str, NDArray[np.float32]]]) -> None:
        """Take vectors made by ``model_id`` (refused unless it is this model)."""
        if model_id != self.cache.model_id:
            raise InvalidInput(f"vectors of {model_id!r} offered to {self.cache.model_id!r}")
        with self._lock:
            self._vectors.update(items)
            self._matrix = None

    def live_hashes(self) -> list[str]:
        """The embedding-text hash of every live section, in section order."""
        hashes = self.catalog.hashes()
        return [hashes[i] for i in np.flatnonzero(self.catalog.live_sections).tolist()]

    def missing_hashes(self) -> list[str]:
        """Hashes of live sections without a vector, after taking what the cache holds."""
        with self._lock:
            missing = [h for h in dict.fromkeys(self.live_hashes()) if h not in self._vectors]
            if missing:
                found = self.cache.load(missing)
                self.loaded += len(found)
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

    def embed(self, sections: Sequence[Section], stop: Callable[[], bool] | None = None) -> int:
        """Embed ``sections``, storing each chunk as it is done and reporting progress
        from the start; ``stop()`` is asked between chunks. How many were embedded."""
        cache = self.cache
        unique = sorted({s.hash: s for s in sections}.values(), key=lambda s: len(s.embedding_text))
        done, spent = 0, 0.0
        report(0, len(unique), "Embedding sections")
        while done < len(unique):
            if stop is not None and stop():
                break
            part = unique[done : done + (CHUNK if done else FIRST_CHUNK)]
            began = time.perf_counter()
            vectors = self.embedder.embed([s.embedding_text for s in part])
            spent += time.perf_counter() - began
            items = [(s.hash, vectors[row]) for row, s in enumerate(part)]
            cache.store(items)
            self.add(cache.model_id, items)
            self.embedded += len(part)
            done += len(part)
            report(done, len(unique), "Embedding sections")
        self.embed_seconds += spent
        if done >= 32:  # remembered per model: the next estimate of how long it takes
            cache.record_rate(done / max(spent, 1e-6))
        return done

    def trim_cache(self) -> int:
        """Hold the user cache to ``[search] embedding_cache_mb``, never evicting this
        workspace's live vectors; how many rows went."""
        cap = self.workspace.config.section("search", SearchSettings).embedding_cache_mb
        if cap <= 0:
            return 0
        with self._lock:
            keep = set(self.live_hashes())
        return self.cache.enforce_cap(cap, keep=keep)

    def coverage(self) -> Coverage:
        """The vectors there are now; never embeds."""
        with self._lock:
            self.missing_hashes()
            live = self.catalog.live_sections
            if self._matrix is not None:
                return Coverage(self._matrix, live, 1.0)
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
            share = float(present.sum()) / wanted if wanted else 1.0
            if share == 1.0:
                # Forget vectors of sections that are gone, so memory follows the workspace.
                self._vectors = {h: self._vectors[h] for h in self.live_hashes()}
                self._matrix = matrix
            return Coverage(matrix, present, share)

    def query(self, text: str) -> NDArray[np.float32]:
        """The unit vector of a query (the last 64 queries are remembered)."""
        vector = self._queries.get(text)
        if vector is None:
            vector = self.embedder.embed([text])[0]
            self._queries[text] = vector
            if len(self._queries) > 64:
                self._queries.popitem(last=False)
        else:
            self._queries.move_to_end(text)
        return vector
