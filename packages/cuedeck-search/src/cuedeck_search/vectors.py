"""Embedding sections into a search engine's vectors and the shared cache.

Sections are embedded once per distinct text (their hash), shortest first (coverage
grows fastest, and each call to the embedder gets texts of similar length), in chunks
committed to the cache as they are done: an interrupt loses at most one chunk.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuedeck.progress import report

if TYPE_CHECKING:
    from collections.abc import Sequence

    from cuedeck_search.engine import SearchEngine
    from cuedeck_search.sections import Section

#: Sections per embedder call and cache commit: enough batches to keep every thread busy.
CHUNK = 256


def embed_into(engine: SearchEngine, sections: Sequence[Section]) -> None:
    """Embed ``sections`` with ``engine``'s embedder, storing each chunk as it is done."""
    cache = engine.cache
    unique = sorted({s.hash: s for s in sections}.values(), key=lambda s: len(s.embedding_text))
    for start in range(0, len(unique), CHUNK):
        part = unique[start : start + CHUNK]
        vectors = engine.embedder.embed([s.embedding_text for s in part])
        items = [(s.hash, vectors[row]) for row, s in enumerate(part)]
        cache.store(items)
        engine.add_vectors(cache.model_id, items)
        engine.stats.chunks_embedded += len(part)
        report(start + len(part), len(unique), "Embedding sections")
