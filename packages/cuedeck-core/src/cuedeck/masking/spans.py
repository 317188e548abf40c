"""What a masker finds: a span of text and the rule that caught it.

A module of its own, re-exported by :mod:`cuedeck.models`, so that masking what ``cue
--help`` prints imports no other model.
"""

from __future__ import annotations

import attrs


@attrs.frozen
class SecretSpan:
    """A secret found by a masker: ``text[start:end]``, caught by ``rule``."""

    start: int
    end: int
    rule: str
