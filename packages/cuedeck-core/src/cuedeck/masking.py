"""Secret masking of every text that leaves the process.

SCAFFOLD: the scene work (issue 3) replaces this with the real rule set; until then
texts pass through unchanged. The API below is what other packages call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cuedeck.workspace import Workspace


class MaskSession:
    """Masks the texts of one output (a scene, a tool reply); numbering is per session."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self.counts: dict[str, int] = {}

    def mask(self, text: str, *, path: str | None = None) -> str:
        """``text`` with every secret replaced by ``[REDACTED:rule#n]``."""
        return text
