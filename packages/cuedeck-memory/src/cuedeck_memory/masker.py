"""What every string the memory store writes passes: the workspace's maskers.

A batch of captured segments is masked in one pass of the maskers (their texts and the
distinct short values of their fields joined: ``MaskSession.mask_many``), not one call
per string. Inside a served tool call the store masks with the reply's own session
(:func:`cuedeck.serving.calls.request_masking`), which learns the secrets as it masks: the
request's texts are scanned once, for the disk and the reply alike.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from cuedeck.masking.session import MaskSession
    from cuedeck.workspace import Workspace


class Masker:
    """Masks the strings the store writes: one at a time (repeats masked once), or a
    batch of texts in one pass. With no function, masking is off."""

    def __init__(
        self,
        function: Callable[[str | None], str | None] | None,
        session: MaskSession | None = None,
        *,
        learn: bool = False,
    ) -> None:
        self.function = function
        self.session = session
        #: Whether masking also learns the secrets (the session is a reply's: what it
        #: masks came from the request).
        self.learn = learn

    def __call__(self, value: str | None) -> str | None:
        return value if self.function is None else self.function(value)

    def texts(self, texts: Sequence[str]) -> list[str]:
        """``texts`` masked, in one pass of the maskers when they allow it."""
        if self.session is None:
            return [self(t) or "" for t in texts]
        return self.session.mask_many(texts, learn=self.learn)

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
    mask_on_capture`` off): the reply's session inside a served call, else a new one."""
    if not enabled:
        return Masker(None)
    from cuedeck.serving.calls import request_masking

    reply = request_masking(workspace)
    session = reply if reply is not None else workspace.mask_session()
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

    return Masker(mask, session, learn=reply is not None)
