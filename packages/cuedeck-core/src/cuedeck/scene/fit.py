"""Fitting a scene to its budget by the real token count of the rendered text."""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from cuedeck.errors import (
    CueError,
    TokenLimitExceeded,
)
from cuedeck.scene.model import DIGIT, REAL_RENDERS
from cuedeck.scene.render import Header, Renderer, render_scene, secret_counts

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from cuedeck.hookspecs import Pruner
    from cuedeck.models import Placement, SceneItem
else:
    # The tool's annotations name pydantic; ``cue --help`` imports this module without
    # ever evaluating them, so pydantic loads on first use.
    pass


def fit_to_budget(
    items: list[SceneItem],
    limit: int,
    pruner: Pruner,
    pruner_name: str,
    count: Callable[[str], int],
    renderer: Renderer,
    header: Header,
    placeholders: Mapping[str, str],
    count_text: Callable[[str], int],
) -> tuple[list[Placement], str, int]:
    """The fullest placements whose rendered scene does not exceed ``limit`` tokens.

    A pruner budget counts only the documents; the header and manifest around them
    change with the placements. So the budget is found by binary search, first on a
    prediction (the scene without its documents, counted, plus each placement's own
    cost), then checked and corrected on the real count of the whole rendered text.
    """
    from cuedeck.models import Placement
    from cuedeck.pruning import full_mode

    def secrets_of(placements: Sequence[Placement]) -> dict[str, int]:
        return secret_counts("".join(p.text for p in placements), placeholders)

    part_tokens: dict[str, int] = {}

    def shell(placements: list[Placement]) -> tuple[str, int]:
        """The scene without documents, and the sum of its lines' counts (each counted once:
        most manifest rows repeat from one budget to the next)."""
        parts = renderer.parts(header, placements, limit, secrets_of(placements), blocks=False)
        total = 0
        for part in parts:
            # Rows differ from one budget to the next mostly in their numbers ("12 left");
            # a number costs about the same whatever its digits.
            key = DIGIT.sub("0", part)
            if (tokens := part_tokens.get(key)) is None:
                tokens = part_tokens[key] = count_text(part + "\n")
            total += tokens
        return "\n".join(parts) + "\n", total

    # Lines counted apart add up to a little more than the text counted whole: measure
    # the difference once and take it off every prediction.
    reference, summed = shell([Placement(item, "dropped", "", 0, "over budget") for item in items])
    joining = count_text(reference) - summed

    def predict(placements: list[Placement]) -> int:
        return shell(placements)[1] + joining + sum(p.tokens for p in placements)

    def render(placements: list[Placement], head: Header = header) -> tuple[str, int]:
        # The header states the tokens used, which the text itself includes: settle it.
        secrets = secrets_of(placements)
        used = predict(placements)
        text = ""
        for _ in range(4):
            text = render_scene(renderer, head, placements, used, secrets)
            counted = count_text(text)
            if counted == used:
                break
            used = counted
        return text, count_text(text)

    pruned: dict[int, list[Placement]] = {}

    def prune(budget: int) -> list[Placement]:
        if budget not in pruned:
            placements = pruner.prune(items, budget, count)
            _validate(items, placements, pruner_name)
            pruned[budget] = placements
        return pruned[budget]

    card = items[0]
    card_only = [Placement(card, full_mode(card), card.text, card.tokens)] + [
        Placement(item, "dropped", "", 0, "the active card alone fills the budget")
        for item in items[1:]
    ]
    card_text, card_used = render(card_only)
    if card_used > limit:
        needed = card_used
        for _ in range(4):  # what it needs when the header states that very budget
            needed_now = render(card_only, attrs.evolve(header, token_limit=needed))[1]
            if needed_now == needed:
                break
            needed = needed_now
        raise TokenLimitExceeded(
            f"the active card {header.card} alone needs {needed} tokens with the scene's "
            f"header and manifest, {needed - limit} over the budget of {limit}",
            path=card.path,
            current_size=needed,
            limit=limit,
            action=f"raise the budget to at least {needed} (--token-limit or [scene] "
            "token_limit) or shorten the card",
            help=f"raise the budget to at least {needed} tokens, or shorten the card",
        )

    # Many budgets give the same placements: render and count each outcome once.
    measured: dict[tuple[tuple[str, int], ...], tuple[list[Placement], str, int]] = {}
    predicted: dict[tuple[tuple[str, int], ...], int] = {}

    def outcome(budget: int) -> tuple[tuple[str, int], ...]:
        return tuple((p.mode, p.tokens) for p in prune(budget))

    def real(budget: int) -> int:
        key = outcome(budget)
        if key not in measured:
            if len(measured) >= REAL_RENDERS:
                return limit + 1  # enough full counts: settle for the best one so far
            placements = prune(budget)
            text, used = render(placements)
            measured[key] = (placements, text, used)
        return measured[key][2]

    def guess(budget: int) -> int:
        key = outcome(budget)
        if key not in predicted:
            predicted[key] = predict(prune(budget))
        return predicted[key]

    def highest(low: int, high: int, fits: Callable[[int], bool]) -> int:
        """The largest budget in [low, high) that fits, given that ``low`` does."""
        while high - low > 1:
            middle = (low + high) // 2
            if fits(middle):
                low = middle
            else:
                high = middle
        return low

    # Budgets past min(everything, limit) change nothing: documents are part of the limit.
    top = min(sum(item.tokens for item in items), limit)
    if guess(top) <= limit and real(top) <= limit:
        budget = top
    else:
        budget = highest(card.tokens, top + 1, lambda b: guess(b) <= limit)
        # How far the prediction is off here, and a margin for how that varies elsewhere.
        error = guess(budget) - real(budget)
        margin = 16 + limit // 200
        if real(budget) > limit:
            # The prediction was bold: find the real edge near where it says, corrected.
            low = highest(card.tokens, budget, lambda b: guess(b) - error + margin <= limit)
            if real(low) <= limit:
                budget = highest(low, budget, lambda b: real(b) <= limit)
            else:
                budget = highest(card.tokens, low, lambda b: real(b) <= limit)
        elif budget < top and real(budget + 1) <= limit:
            # The prediction was cautious: go on from there on real counts, as far as
            # the prediction corrected by its error here says it may still fit.
            end = highest(budget, top + 1, lambda b: guess(b) - error - margin <= limit) + 1
            budget = highest(budget + 1, max(end, budget + 2), lambda b: real(b) <= limit)
    real(budget)
    fitting = [found for found in measured.values() if found[2] <= limit]
    if not fitting:
        return card_only, card_text, card_used
    return max(fitting, key=lambda found: found[2])


def _validate(items: Sequence[SceneItem], placements: Sequence[Placement], name: str) -> None:
    from cuedeck.pruning import full_mode

    if len(placements) != len(items) or any(
        p.item is not i for p, i in zip(placements, items, strict=False)
    ):
        raise CueError(f"pruner {name!r} did not return one placement per item, in order")
    if placements[0].mode != full_mode(items[0]):
        raise CueError(f"pruner {name!r} did not keep the active card whole")


# --- output and staleness ----------------------------------------------------------------
