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

While only part of the workspace has vectors, :func:`fuse_partial` fuses only what both
sides can rank: the keyword ranking is kept, and the places it gives to files that have
vectors are filled again by those files in fused order. Fusing a semantic ranking that
covers a random part of the corpus would push that part up (measured: worse than
keyword alone, benchmarks/README.md); this way a partial answer is the keyword answer
with its embedded files reordered among themselves, and equals the keyword answer at 0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from cuedeck.errors import InvalidInput

if TYPE_CHECKING:
    from numpy.typing import NDArray

    Scores = NDArray[np.floating[Any]]  # per section or per file, float32 or float64

    from cuedeck.settings import SearchSettings

#: The semantic score of a section or file that has no vector yet (see the engine).
NO_VECTOR = -1.0


@attrs.frozen
class Fused:
    """Fused file scores, the blend that ranks sections, and each side's part."""

    files: Scores
    sections: Scores
    keyword_part: Scores
    semantic_part: Scores


@attrs.frozen
class MinMax:
    """A per-query min-max scale: ``(x - low) / (high - low)`` clipped to [0, 1].

    When every file in the span scores the same (one file, or a tie), they are all the
    best there is: 1 if that score is a real one, else 0.
    """

    low: float
    high: float

    @classmethod
    def over(cls, scores: Scores, span: NDArray[np.bool_]) -> MinMax | None:
        """The scale of ``scores[span]``; None when the span is empty."""
        if not span.any():
            return None
        chosen = scores[span]
        return cls(float(chosen.min()), float(chosen.max()))

    def apply(self, scores: Scores, present: NDArray[np.bool_]) -> NDArray[np.float64]:
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
    kw_files: Scores,
    kw_sections: Scores,
    sem_files: Scores,
    sem_sections: Scores,
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
    scale: MinMax | None, scores: Scores, present: NDArray[np.bool_]
) -> NDArray[np.float64]:
    if scale is None:
        return np.zeros(len(scores), dtype=np.float64)
    return scale.apply(scores, present)


def reciprocal_ranks(scores: Scores, eligible: NDArray[np.bool_], k: float) -> NDArray[np.float64]:
    """``1 / (k + rank)`` for eligible entries (rank 1 = best), 0 elsewhere."""
    result = np.zeros(len(scores), dtype=np.float64)
    indexes = np.flatnonzero(eligible)
    if len(indexes):
        order = indexes[np.argsort(-scores[indexes], kind="stable")]
        result[order] = 1.0 / (k + np.arange(1, len(order) + 1))
    return result


def fuse_partial(
    settings: SearchSettings,
    fusion: str | None,
    kw_files: Scores,
    kw_sections: Scores,
    sem_files: Scores,
    sem_sections: Scores,
    allowed: NDArray[np.bool_],
    embedded: NDArray[np.bool_],
) -> Fused:
    """Fuse while only the ``embedded`` files have vectors (see the module docstring).

    The files' scores are ``2 / (rrf_k + place)`` of the final order (only the order
    means anything); ``keyword_part`` is the keyword side's reciprocal rank,
    ``semantic_part`` the fused semantic part of embedded files and NaN for the others.
    """
    both = allowed & embedded
    inner = fuse(settings, fusion, kw_files, kw_sections, sem_files, sem_sections, both)
    matched = np.flatnonzero(allowed & (kw_files > 0))
    by_keyword = matched[np.argsort(-kw_files[matched], kind="stable")]
    slots = by_keyword[both[by_keyword]]
    refill = iter(slots[np.argsort(-inner.files[slots], kind="stable")].tolist())
    order = [next(refill) if both[d] else d for d in by_keyword.tolist()]
    # Embedded files the keyword side did not match come after every keyword match.
    extra = np.flatnonzero(both & (kw_files <= 0) & (inner.files > 0))
    order.extend(extra[np.argsort(-inner.files[extra], kind="stable")].tolist())
    k = float(settings.rrf_k)
    files = np.zeros(len(kw_files), dtype=np.float32)
    files[order] = 2.0 / (k + np.arange(1, len(order) + 1))
    semantic_part = np.where(both, inner.semantic_part, np.nan).astype(np.float32)
    return Fused(
        files=files,
        sections=inner.sections,
        keyword_part=reciprocal_ranks(kw_files, allowed & (kw_files > 0), k).astype(np.float32),
        semantic_part=semantic_part,
    )
