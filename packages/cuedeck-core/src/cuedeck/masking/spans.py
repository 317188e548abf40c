"""What a masker is and what it finds: a span of text and the rule that caught it.

A module of its own, so that masking what ``cue --help`` prints imports no model; the
plugin contract (:mod:`cuedeck.hookspecs`) names :class:`Masker` from here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

import attrs

if TYPE_CHECKING:
    from collections.abc import Iterable


@attrs.frozen
class SecretSpan:
    """A secret found by a masker: ``text[start:end]``, caught by ``rule``."""

    start: int
    end: int
    rule: str


@runtime_checkable
class Masker(Protocol):
    """Finds secrets in text that is about to leave the process."""

    def find_secrets(self, text: str) -> Iterable[SecretSpan]:
        """Spans of ``text`` to replace by a ``[REDACTED:rule#n]`` placeholder."""
        ...
