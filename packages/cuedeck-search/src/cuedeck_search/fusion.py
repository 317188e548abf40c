"""Hybrid ranking: keyword and semantic scores of the same files, fused into one.

Reciprocal rank fusion (``rrf``, the default) adds ``1 / (k + rank)`` of each side, so
neither side's scale matters. ``weighted`` normalises each side per query (keyword by its
best score, semantic min-max over the files allowed) and adds them with ``[search]
keyword_weight`` and ``semantic_weight``. Section anchors are ranked by the weighted
blend either way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs
import numpy as np

from cuedeck.errors import InvalidInput

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from cuedeck.settings import SearchSettings


@attrs.frozen
class Fused:
    """Fused file scores, the blend that ranks sections, and each side's part."""

    files: NDArray[np.float32]
    sections: NDArray[np.float32]
    keyword_part: NDArray[np.float32]
    semantic_part: NDArray[np.float32]


def fuse(
    settings: SearchSettings,
    fusion: str | None,
    kw_files_raw: NDArray[np.float32],
    kw_sections: NDArray[np.float32],
    sem_files_raw: NDArray[np.float32],
    sem_sections: NDArray[np.float32],
    allowed: NDArray[np.bool_],
) -> Fused:
    """Fuse the two sides of one query by ``fusion`` (default ``[search] fusion``)."""
    fusion = fusion or settings.fusion
    if fusion not in ("rrf", "weighted"):
        raise InvalidInput(f"unknown fusion {fusion!r} (rrf or weighted)", field="fusion")
    kw_files = np.where(allowed, kw_files_raw, 0.0)
    sem_files = np.where(allowed, sem_files_raw, -1.0)
    kw_top = float(kw_files.max()) if len(kw_files) else 0.0
    sem_low = float(sem_files[allowed].min()) if allowed.any() else 0.0
    sem_top = float(sem_files.max()) if len(sem_files) else 0.0
    kw_norm = kw_files / kw_top if kw_top > 0 else np.zeros_like(kw_files)
    span = sem_top - sem_low
    sem_norm = np.clip((sem_files - sem_low) / span, 0, 1) if span > 0 else kw_norm * 0
    if fusion == "weighted":
        kw_part = settings.keyword_weight * kw_norm
        sem_part = settings.semantic_weight * sem_norm
    else:
        k = float(settings.rrf_k)
        kw_part = reciprocal_ranks(kw_files, allowed & (kw_files > 0), k)
        sem_part = reciprocal_ranks(sem_files, allowed & (sem_files > -1.0), k)
    kw_blend = kw_sections / kw_top if kw_top > 0 else kw_sections * 0
    sem_blend = np.clip((sem_sections - sem_low) / span, 0, 1) if span > 0 else 0
    blend = settings.keyword_weight * kw_blend + settings.semantic_weight * sem_blend
    return Fused(
        files=(kw_part + sem_part).astype(np.float32),
        sections=np.asarray(blend, dtype=np.float32),
        keyword_part=kw_part.astype(np.float32),
        semantic_part=sem_part.astype(np.float32),
    )


def reciprocal_ranks(
    scores: NDArray[np.float32], eligible: NDArray[np.bool_], k: float
) -> NDArray[np.float64]:
    """``1 / (k + rank)`` for eligible entries (rank 1 = best), 0 elsewhere."""
    result = np.zeros(len(scores), dtype=np.float64)
    indexes = np.flatnonzero(eligible)
    if len(indexes):
        order = indexes[np.argsort(-scores[indexes], kind="stable")]
        result[order] = 1.0 / (k + np.arange(1, len(order) + 1))
    return result
