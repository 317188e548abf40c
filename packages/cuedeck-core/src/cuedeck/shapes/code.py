"""Related code: the query a code ranker answers and the definitions it ranks."""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping


@attrs.frozen
class CodeQuery:
    """What related code is ranked for: a card's text, the code it cites, an error stack.

    ``cited`` holds ``(path, anchor)`` pairs (anchor None for a whole file) the ranking
    is personalised on; ``stack`` is error output (a traceback, a panic, failing tests)
    beside the text, which is searched for frames too; ``folder`` limits the ranking to
    the files under it; ``limit`` is how many symbols to return at most.
    """

    text: str = ""
    cited: tuple[tuple[str, str | None], ...] = ()
    stack: str = ""
    folder: str | None = None
    limit: int = 50


@attrs.frozen
class RankedSymbol:
    """A definition a :class:`~cuedeck.hookspecs.CodeRanker` ranked for a query.

    ``name`` is the qualified name (the anchor that reads it); ``parts`` are the score's
    weighted parts (``text``, ``graph``, ``recent``, ``stack``...), which add up to
    ``score``; the scene's manifest shows them as the reason it was chosen.
    """

    path: str
    name: str
    kind: str
    line: int
    end_line: int
    tokens: int
    score: float
    parts: tuple[tuple[str, float], ...] = ()
    signature: str = ""
    docstring: str = ""

    def why(self) -> str:
        """The parts that count, as ``text .42 · graph .10``."""
        shown = [
            f"{name} {value:.2f}".replace(" 0.", " .")
            for name, value in self.parts
            if value >= 0.005
        ]
        return " · ".join(shown) or "score 0"


class CodeRanking(list[RankedSymbol]):
    """What a :class:`~cuedeck.hooktypes.CodeRanker` may return instead of a plain list:
    the ranked definitions, best first, and how many the ranker left out by rule, per
    reason (``{"tests": 20, "generated": 3}``), for the scene's manifest and the map."""

    def __init__(
        self, ranked: Iterable[RankedSymbol] = (), left_out: Mapping[str, int] | None = None
    ) -> None:
        super().__init__(ranked)
        self.left_out: dict[str, int] = {k: v for k, v in (left_out or {}).items() if v}


def left_out_of(ranked: list[RankedSymbol]) -> dict[str, int]:
    """What a ranker's answer says it left out ({} for a plain list)."""
    return dict(ranked.left_out) if isinstance(ranked, CodeRanking) else {}
