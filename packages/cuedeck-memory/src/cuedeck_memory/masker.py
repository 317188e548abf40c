"""What every string the memory store writes passes: the workspace's maskers.

A batch of captured segments is masked in one pass of the maskers (their texts and the
distinct short values of their fields joined), not one call per string.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from cuedeck.workspace import Workspace

#: Joins a batch's texts for one pass of the maskers; a secret that would span it is
#: caught by the count of parts, and the texts are then masked one by one.
SEPARATOR = "\n\u241e\n"


class Masker:
    """Masks the strings the store writes: one at a time (repeats masked once), or a
    batch of texts in one pass. With no function, masking is off."""

    def __init__(
        self, function: Callable[[str | None], str | None] | None, session: Any = None
    ) -> None:
        self.function = function
        self.session = session

    def __call__(self, value: str | None) -> str | None:
        return value if self.function is None else self.function(value)

    def texts(self, texts: Sequence[str]) -> list[str]:
        """``texts`` masked, in one pass of the maskers when they allow it."""
        # A text holding the joint itself would make the count of parts lie.
        if self.session is None or len(texts) < 2 or any(SEPARATOR in t for t in texts):
            return [self(t) or "" for t in texts]
        parts = self.session.mask(SEPARATOR.join(texts)).split(SEPARATOR)
        if len(parts) == len(texts):
            return list(parts)
        return [self(t) or "" for t in texts]

    def batch(
        self, texts: Sequence[str], values: Iterable[str | None]
    ) -> tuple[list[str], dict[str | None, str | None]]:
        """``texts`` masked, and each distinct value of ``values`` mapped to its masked
        form (None and "" to themselves), all in one pass of the maskers."""
        if self.function is None:
            return list(texts), {}
        distinct = [v for v in dict.fromkeys(values) if isinstance(v, str) and v]
        masked = self.texts([*texts, *distinct])
        lookup: dict[str | None, str | None] = dict(
            zip(distinct, masked[len(texts) :], strict=True)
        )
        lookup[None] = None
        lookup[""] = ""
        return masked[: len(texts)], lookup


def store_masker(workspace: Workspace, enabled: bool) -> Masker:
    """The masker of one write (identity when ``enabled`` is false: ``[memory]
    mask_on_capture`` off)."""
    if not enabled:
        return Masker(None)
    session = workspace.mask_session()
    # Tags, types and task ids repeat through a batch: each is masked once.
    seen: dict[str, str] = {}

    def mask(value: str | None) -> str | None:
        if not isinstance(value, str) or not value:
            return value
        found = seen.get(value)
        if found is None:
            found = session.mask(value)
            if len(value) < 200:
                seen[value] = found
        return found

    return Masker(mask, session)
