"""The errors of task cards: 1001 and 1002 with the card's own class, so a caller can tell
a missing dependency from any missing file; 1500-1519 for claims and merges of cards."""

from __future__ import annotations

from cuedeck.errors import CueError, CycleDetected, FileNotFound


class DependencyNotFound(FileNotFound):
    """A ``depends_on`` id that names no card."""


class CircularDependency(CycleDetected):
    """A card dependency that would close a loop."""


class CardClaimed(CueError):
    """A card another agent's live claim holds (1500): ``holder``, ``since``, ``until``."""

    code = 1500
    title = "Card Claimed"


class PathsClaimed(CueError):
    """A write to files another agent's live claim holds (1501): ``holders`` names each
    claim (card, agent, until, its paths) and ``paths`` what the call would write."""

    code = 1501
    title = "Paths Claimed"


class ClaimNotHeld(CueError):
    """A renewal or release by an agent that holds no claim on the card (1502)."""

    code = 1502
    title = "Claim Not Held"
