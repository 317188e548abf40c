"""The ``claims`` scene source: a claimed card's scene says who holds it and which other
cards' claims hold files it claims too."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from cuedeck.models import SceneExtra
from cuedeck.plugins.claims import iso_time
from cuedeck_tasks.claim_paths import overlapping

if TYPE_CHECKING:
    from collections.abc import Iterable

    from cuedeck.workspace import Workspace

#: Just below the card itself: an agent should know before anything else.
PRIORITY = 90


def claims_in_scene(workspace: Workspace, card_id: str) -> Iterable[SceneExtra]:
    """One item for a claimed card: its holder and lease, and each other live claim whose
    paths overlap its own (card, agent, until, the overlapping paths)."""
    from cuedeck_tasks.claim_tools import ledger

    live = ledger(workspace).live()
    own = live.get(card_id)
    if own is None:
        return []
    lines = [
        f"Card {card_id} is held by {own.agent} since {iso_time(own.since)}, "
        f"until {iso_time(own.until)} unless renewed."
    ]
    if own.paths:
        lines.append(f"Its claim names: {', '.join(own.paths)}.")
    others = [
        (claim, overlapping(claim.paths, own.paths))
        for card, claim in sorted(live.items())
        if card != card_id and claim.paths
    ]
    clashes = [(claim, held) for claim, held in others if held]
    if clashes:
        lines.append("")
        lines.append("Other cards hold overlapping files (their agents' writes come first):")
        lines.extend(
            f"- card {claim.card}, held by {claim.agent} until {iso_time(claim.until)}: "
            f"{', '.join(held)}"
            for claim, held in clashes
        )
    elif own.paths:
        lines.append("No other card's claim holds any of these files.")
    text = "\n".join(lines) + "\n"
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return [SceneExtra(f"claims/{card_id}", "Claims", text, digest, PRIORITY, role="claims")]
