"""Fitting a scene to its budget by the real token count of the rendered text.

A pruner's budget counts only the documents; the header and manifest around them change
with the placements. So :func:`fit_to_budget` searches for the budget: first on a
prediction (the scene without its documents, counted, plus each placement's own cost),
then checked and corrected on the real count of the whole rendered text, or of what is
sent around it (a tool's reply: ``measure``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from cuedeck.errors import TokenLimitExceeded
from cuedeck.scene.render import Header, Renderer, render_scene, secret_counts
from cuedeck.scene.shapes import DIGIT, REAL_RENDERS

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from cuedeck.hookspecs import Pruner
    from cuedeck.models import Placement, SceneItem

#: Placements, the rendered text and its real token count.
Fitted = tuple[list["Placement"], str, int]
#: What a pruner decided for each item: many budgets give the same outcome.
Outcome = tuple[tuple[str, int], ...]


def fit_to_budget(
    items: list[SceneItem],
    limit: int,
    pruner: Pruner,
    count: Callable[[str], int],
    renderer: Renderer,
    header: Header,
    placeholders: Mapping[str, str],
    count_text: Callable[[str], int],
    measure: Callable[[str], int] | None = None,
) -> Fitted:
    """The fullest placements whose rendered scene does not exceed ``limit`` tokens
    (TokenLimitExceeded, 1003, when the active card alone does not fit); ``measure``
    counts what a scene text costs as sent, when more than the text (default: its count).
    """
    budgets = _Budgets(
        items, limit, pruner, count, renderer, header, placeholders, count_text, measure
    )
    card_only = budgets.card_alone()
    budgets.real(budgets.search())
    fitting = [found for key, found in budgets.measured.items() if budgets.sent[key] <= limit]
    if not fitting:
        return card_only
    return max(fitting, key=lambda found: found[2])


class _Budgets:
    """The pruner's placements, the scene's predicted and real counts, by budget; each
    outcome pruned, predicted and rendered once."""

    def __init__(
        self,
        items: list[SceneItem],
        limit: int,
        pruner: Pruner,
        count: Callable[[str], int],
        renderer: Renderer,
        header: Header,
        placeholders: Mapping[str, str],
        count_text: Callable[[str], int],
        measure: Callable[[str], int] | None = None,
    ) -> None:
        self.items = items
        self.limit = limit
        self.pruner = pruner
        self.count = count
        self.renderer = renderer
        self.header = header
        self.placeholders = placeholders
        self.count_text = count_text
        self.measure = measure or count_text
        self._part_tokens: dict[str, int] = {}
        self._pruned: dict[int, list[Placement]] = {}
        self.measured: dict[Outcome, Fitted] = {}
        #: What each measured scene costs as sent (its text's count without ``measure``).
        self.sent: dict[Outcome, int] = {}
        self._predicted: dict[Outcome, int] = {}
        # Lines counted apart add up to a little more than the text counted whole: measure
        # the difference once and take it off every prediction.
        from cuedeck.models import Placement

        dropped = [Placement(item, "dropped", "", 0, "over budget") for item in items]
        reference, summed = self._shell(dropped)
        self._joining = count_text(reference) - summed

    # -- counting ------------------------------------------------------------------------

    def _secrets(self, placements: Sequence[Placement]) -> dict[str, int]:
        return secret_counts("".join(p.text for p in placements), self.placeholders)

    def _shell(self, placements: list[Placement]) -> tuple[str, int]:
        """The scene without documents, and the sum of its lines' counts (each counted
        once: most manifest rows repeat from one budget to the next)."""
        parts = self.renderer.parts(
            self.header, placements, self.limit, self._secrets(placements), blocks=False
        )
        total = 0
        for part in parts:
            # Rows differ from one budget to the next mostly in their numbers ("12 left");
            # a number costs about the same whatever its digits.
            key = DIGIT.sub("0", part)
            if (tokens := self._part_tokens.get(key)) is None:
                tokens = self._part_tokens[key] = self.count_text(part + "\n")
            total += tokens
        return "\n".join(parts) + "\n", total

    def _predict(self, placements: list[Placement]) -> int:
        return self._shell(placements)[1] + self._joining + sum(p.tokens for p in placements)

    def render(self, placements: list[Placement], header: Header | None = None) -> tuple[str, int]:
        """The scene's text and its real count; the header states the tokens used, which
        the text itself includes, so the two are settled together."""
        head = self.header if header is None else header
        secrets = self._secrets(placements)
        used = self._predict(placements)
        text = ""
        for _ in range(4):
            text = render_scene(self.renderer, head, placements, used, secrets)
            counted = self.count_text(text)
            if counted == used:
                break
            used = counted
        return text, self.count_text(text)

    # -- by budget -----------------------------------------------------------------------

    def prune(self, budget: int) -> list[Placement]:
        """The pruner's placements for ``budget`` (checked once)."""
        if budget not in self._pruned:
            # A registered pruner comes held to its contract (pruning.CheckedPruner).
            self._pruned[budget] = self.pruner.prune(self.items, budget, self.count)
        return self._pruned[budget]

    def _outcome(self, budget: int) -> Outcome:
        return tuple((p.mode, p.tokens) for p in self.prune(budget))

    def real(self, budget: int) -> int:
        """What the scene at ``budget`` really costs as sent (over the limit once enough
        full counts were made: the best so far then stands)."""
        key = self._outcome(budget)
        if key not in self.measured:
            if len(self.measured) >= REAL_RENDERS:
                return self.limit + 1
            placements = self.prune(budget)
            text, used = self.render(placements)
            self.measured[key] = (placements, text, used)
            self.sent[key] = used if self.measure is self.count_text else self.measure(text)
        return self.sent[key]

    def guess(self, budget: int) -> int:
        """The predicted count of the scene at ``budget``."""
        key = self._outcome(budget)
        if key not in self._predicted:
            self._predicted[key] = self._predict(self.prune(budget))
        return self._predicted[key]

    # -- the steps -----------------------------------------------------------------------

    def card_alone(self) -> Fitted:
        """The scene holding the active card alone; TokenLimitExceeded when even that
        does not fit, with the budget it would need."""
        from cuedeck.models import Placement
        from cuedeck.scene.pruners import full_mode

        card = self.items[0]
        card_only = [Placement(card, full_mode(card), card.text, card.tokens)] + [
            Placement(item, "dropped", "", 0, "the active card alone fills the budget")
            for item in self.items[1:]
        ]
        text, used = self.render(card_only)
        sent = self.measure(text)
        if sent > self.limit:
            raise self._card_too_large(card_only, sent)
        return card_only, text, used

    def _card_too_large(self, card_only: list[Placement], used: int) -> TokenLimitExceeded:
        needed = used
        for _ in range(4):  # what it needs when the header states that very budget
            text = self.render(card_only, attrs.evolve(self.header, token_limit=needed))[0]
            now = self.measure(text)
            if now == needed:
                break
            needed = now
        card, limit = self.items[0], self.limit
        around = "" if self.measure is self.count_text else " and the reply around it"
        return TokenLimitExceeded(
            f"the active card {self.header.card} alone needs {needed} tokens with the "
            f"scene's header and manifest{around}, {needed - limit} over the budget of {limit}",
            path=card.path,
            current_size=needed,
            limit=limit,
            action=f"raise the budget to at least {needed} (--token-limit or [scene] "
            "token_limit) or shorten the card",
            help=f"raise the budget to at least {needed} tokens, or shorten the card",
        )

    def search(self) -> int:
        """The largest budget whose scene fits, as far as the prediction and a few real
        counts can tell."""
        limit, floor = self.limit, self.items[0].tokens
        # Budgets past min(everything, limit) change nothing: documents are part of the limit.
        top = min(sum(item.tokens for item in self.items), limit)
        # A margin for how far the prediction may be off.
        margin = 16 + limit // 200
        # Everything that fits goes in whole: when the prediction says "about the limit",
        # the real count decides (a prediction a few tokens over must not drop a document).
        if self.guess(top) - margin <= limit and self.real(top) <= limit:
            return top
        budget = _highest(floor, top + 1, lambda b: self.guess(b) <= limit)
        # How far the prediction is off here.
        error = self.guess(budget) - self.real(budget)
        if self.real(budget) > limit:
            # The prediction was bold: find the real edge near where it says, corrected.
            low = _highest(floor, budget, lambda b: self.guess(b) - error + margin <= limit)
            if self.real(low) <= limit:
                return _highest(low, budget, lambda b: self.real(b) <= limit)
            return _highest(floor, low, lambda b: self.real(b) <= limit)
        if budget < top and self.real(budget + 1) <= limit:
            # The prediction was cautious: go on from there on real counts, as far as
            # the prediction corrected by its error here says it may still fit.
            end = _highest(budget, top + 1, lambda b: self.guess(b) - error - margin <= limit) + 1
            return _highest(budget + 1, max(end, budget + 2), lambda b: self.real(b) <= limit)
        return budget


def _highest(low: int, high: int, fits: Callable[[int], bool]) -> int:
    """The largest budget in [low, high) that fits, given that ``low`` does."""
    while high - low > 1:
        middle = (low + high) // 2
        if fits(middle):
            low = middle
        else:
            high = middle
    return low
