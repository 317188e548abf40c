"""A third-party embedder plugin for the tests: hashed bags of words, 64 dimensions.

Registered with a plugin manager as a module (``pm.register(hashing_plugin)``), the way
an installed distribution's entry point would be.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

import numpy as np

from cuedeck import hookimpl

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import NDArray

DIMENSIONS = 64


class HashingEmbedder:
    """Each word adds one to a dimension chosen by its hash; rows scaled to unit length."""

    model_id = "test-hashing-v1"

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        self.calls += 1
        rows = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                digest = hashlib.blake2b(word.strip(".,:;?!`'\"").encode(), digest_size=2)
                rows[row, int.from_bytes(digest.digest(), "big") % DIMENSIONS] += 1
        norms = np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
        return np.asarray(rows / norms, dtype=np.float32)


EMBEDDER = HashingEmbedder()


@hookimpl
def register_embedders(register: Any) -> None:
    register("hashing", lambda workspace: EMBEDDER)
