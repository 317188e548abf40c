"""Ranking texts that are no files (memory segments) by meaning, with the engine's model.

Vectors are cached by the text's sha256 (prefixed, so no text collides with a section)
in the same embedding cache as sections', so a stash searched twice embeds nothing.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Sequence

    from cuedeck_search.engine import SearchEngine


def rank_texts(engine: SearchEngine, query: str, texts: Sequence[str]) -> list[float]:
    """Cosine similarity of ``query`` to each of ``texts``."""
    if not texts:
        return []
    keys = [
        hashlib.sha256(("text\0" + t).encode("utf-8", "surrogatepass")).hexdigest() for t in texts
    ]
    found = engine.cache.load(list(dict.fromkeys(keys)))
    missing = [i for i, key in enumerate(keys) if key not in found]
    unique = list({keys[i]: i for i in missing}.values())
    if unique:
        vectors = engine.embedder.embed([texts[i] for i in unique])
        items = [(keys[i], vectors[row]) for row, i in enumerate(unique)]
        engine.cache.store(items)
        found.update(items)
    matrix = np.stack([found[key] for key in keys])
    return [float(v) for v in matrix @ engine.query_vector(query)]
