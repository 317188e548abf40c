"""Scene types and constants: the reply shapes, the :class:`Scene` a build returns."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Literal, NotRequired

import attrs
from typing_extensions import TypedDict  # pydantic needs it for TypedDicts on 3.11

from cuedeck.text import counted
from cuedeck.watch.reflects import Reflects  # noqa: TC001 (a reply's schema names it)

if TYPE_CHECKING:
    from cuedeck.models import Placement


Format = Literal["markdown", "xml", "json"]
FORMATS: tuple[str, ...] = ("markdown", "xml", "json")
PRIORITIES = {
    "card": 100,
    "direct": 50,
    "delta": 45,
    "extra": 40,  # what scene sources add, unless they say (SceneExtra.priority)
    "indirect": 25,
    "related": 22,
    "linked": 20,
    "global": 10,
}
#: Hex digits of each input's sha256 written into the scene (the manifest is part of the
#: budget; 48 bits are plenty to notice a changed file). ``--json`` has them in full.
HASH_CHARS = 12
MANIFEST_VERSION = 1
DIGIT = re.compile(r"\d")
#: Most scenes rendered and counted whole while fitting one (each costs a full count).
REAL_RENDERS = 5


# --- results -----------------------------------------------------------------------------


class Candidate(TypedDict):
    """One candidate of a scene, as the manifest records it."""

    path: str
    anchor: str | None
    role: str
    priority: int
    depth: int
    placed: str
    tokens: int
    full_tokens: int
    reason: str | None
    sha256: str
    lines: str | None
    note: str | None


class MissingReference(TypedDict):
    """A reference of an included file that leads nowhere (a dead path or anchor)."""

    path: str
    line: int | None
    message: str


class SceneManifest(TypedDict):
    """What a scene holds and why: the shape of ``cue scene --json``."""

    version: int
    card: str
    card_path: str
    title: str
    format: str
    pruner: str
    counter: str
    exact: bool
    token_limit: int
    tokens: int
    truncated: bool
    candidates: list[Candidate]
    missing: list[MissingReference]
    inputs: dict[str, str]
    secrets: dict[str, int]
    since: str | None
    #: Definitions the code ranker left out of related code by rule, per reason
    #: (``tests``, ``generated``); empty when none were.
    left_out: dict[str, int]


class SceneReply(TypedDict):
    """What the ``build_scene`` tool returns: the scene's text (its manifest table
    included), how it was fitted and what its files reflect; the JSON manifest only when
    asked for, beyond the budget."""

    text: str
    card: str
    tokens: int
    token_limit: int
    truncated: bool
    reflects: Reflects
    manifest: NotRequired[SceneManifest]


@attrs.frozen
class Scene:
    """A built scene: its text, manifest and the pruner's placements."""

    text: str
    manifest: SceneManifest
    placements: tuple[Placement, ...]

    @property
    def card(self) -> str:
        """The active card's id."""
        return self.manifest["card"]

    @property
    def tokens(self) -> int:
        """Tokens of :attr:`text` by the workspace's counter."""
        return self.manifest["tokens"]

    def summary(self) -> str:
        """One line: card, tokens of budget, and what was kept, outlined and dropped."""
        counts: dict[str, int] = {}
        for candidate in self.manifest["candidates"]:
            counts[candidate["placed"]] = counts.get(candidate["placed"], 0) + 1
        kept = ", ".join(f"{n} {mode}" for mode, n in counts.items())
        secrets = sum(self.manifest["secrets"].values())
        masked = f", {counted(secrets, 'secret')} masked" if secrets else ""
        return (
            f"card {self.card}: {self.tokens}/{self.manifest['token_limit']} tokens "
            f"({self.manifest['counter']}), {kept}{masked}"
        )


# --- the active card ---------------------------------------------------------------------
