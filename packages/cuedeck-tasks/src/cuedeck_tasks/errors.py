"""The errors of task cards: 1001 and 1002 with the card's own class, so a caller can tell
a missing dependency from any missing file."""

from __future__ import annotations

from cuedeck.errors import CycleDetected, FileNotFound


class DependencyNotFound(FileNotFound):
    """A ``depends_on`` id that names no card."""


class CircularDependency(CycleDetected):
    """A card dependency that would close a loop."""
