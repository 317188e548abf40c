"""Hybrid ranking: keyword and semantic scores of the same files, fused into one.

Reciprocal rank fusion (``rrf``, the default) adds ``1 / (k + rank)`` of each side, so
neither side's scale matters. ``weighted`` rescales each side per query by min-max over
the files the query may return, then adds them with ``[search] semantic_weight`` and
``keyword_weight``. Section anchors are ranked by the same min-max blend either way.

Which files a side's min-max spans: on the keyword side every allowed file (a file the
query does not match scores 0, a true floor of BM25, so the best match maps to 1 and a
non-match to 0); on the semantic side the allowed files that have a vector (cosine has no
floor; a file not embedded yet is left out of the span and gets 0, so a half-embedded
workspace does not squash the scale of the half that is).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs
import numpy as np

from cuedeck.errors import InvalidInput

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from cuedeck_search.settings import SearchSettings

#: The semantic score of a section or file that has no vector yet (see the engine).
NO_VECTOR = -1.0


@attrs.frozen
class Fused:
    """Fused file scores, the blend that ranks sections, and each side's part."""

    files: NDArray[np.float32]
    sections: NDArray[np.float32]
    keyword_part: NDArray[np.float32]
    semantic_part: NDArray[np.float32]


@attrs.frozen
class MinMax:
    """A per-query min-max scale: ``(x - low) / (high - low)`` clipped to [0, 1].

    When every file in the span scores the same (one file, or a tie), they are all the
    best there is: 1 if that score is a real one, else 0.
    """

    low: float
    high: float

    @classmethod
    def over(cls, scores: NDArray[np.float32], span: NDArray[np.bool_]) -> MinMax | None:
        """The scale of ``scores[span]``; None when the span is empty."""
        if not span.any():
            return None
        chosen = scores[span]
        return cls(float(chosen.min()), float(chosen.max()))

    def apply(self, scores: NDArray[np.float32], present: NDArray[np.bool_]) -> NDArray[np.float64]:
        """Scaled ``scores``; entries not ``present`` get 0."""
        values = scores.astype(np.float64)
        if self.high > self.low:
            scaled = np.clip((values - self.low) / (self.high - self.low), 0.0, 1.0)
        else:
            scaled = np.ones_like(values)
        return np.where(present, scaled, 0.0)


def fuse(
    settings: SearchSettings,
    fusion: str | None,
    kw_files: NDArray[np.float32],
    kw_sections: NDArray[np.float32],
    sem_files: NDArray[np.float32],
    sem_sections: NDArray[np.float32],
    allowed: NDArray[np.bool_],
) -> Fused:
    """Fuse the two sides of one query by ``fusion`` (default ``[search] fusion``)."""
    fusion = fusion or settings.fusion
    if fusion not in ("rrf", "weighted"):
        raise InvalidInput(f"unknown fusion {fusion!r} (rrf or weighted)", field="fusion")
    kw_matched = allowed & (kw_files > 0)
    sem_embedded = allowed & (sem_files > NO_VECTOR)
    kw_scale = MinMax.over(kw_files, allowed) if kw_matched.any() else None
    sem_scale = MinMax.over(sem_files, sem_embedded)
    if fusion == "weighted":
        kw_part = settings.keyword_weight * _scaled(kw_scale, kw_files, kw_matched)
        sem_part = settings.semantic_weight * _scaled(sem_scale, sem_files, sem_embedded)
    else:
        k = float(settings.rrf_k)
        kw_part = reciprocal_ranks(kw_files, kw_matched, k)
        sem_part = reciprocal_ranks(sem_files, sem_embedded, k)
    # Sections: the same scales (a file's scores are its sections' best, so they fit).
    blend = settings.keyword_weight * _scaled(
        kw_scale, kw_sections, kw_sections > 0
    ) + settings.semantic_weight * _scaled(sem_scale, sem_sections, sem_sections > NO_VECTOR)
    return Fused(
        files=(kw_part + sem_part).astype(np.float32),
        sections=blend.astype(np.float32),
        keyword_part=kw_part.astype(np.float32),
        semantic_part=sem_part.astype(np.float32),
    )


def _scaled(
    scale: MinMax | None, scores: NDArray[np.float32], present: NDArray[np.bool_]
) -> NDArray[np.float64]:
    if scale is None:
        return np.zeros(len(scores), dtype=np.float64)
    return scale.apply(scores, present)


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
