"""CueDeck's git tools: the ``git`` executable run safely on behalf of agents."""

from __future__ import annotations

__all__: list[str] = []
