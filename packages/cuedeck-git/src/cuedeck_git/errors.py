"""cuedeck-git's own errors (codes 1035-1039 for the history tools, docs/errors.md)."""

from __future__ import annotations

from cuedeck.errors import CueError


class NotInHistory(CueError):
    """A file git has no history of at that revision: never committed, or a path that
    is not in the repository (1035)."""

    code = 1035
    title = "Not In History"
