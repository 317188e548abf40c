"""The errors of cuedeck-memory (codes 1300-1319, docs/errors.md)."""

from __future__ import annotations

from cuedeck.errors import CueError


class StoreUnreadable(CueError):
    """The memory store cannot be opened: another schema, or not a memory store (1300)."""

    code = 1300
    title = "Memory Store Unreadable"
