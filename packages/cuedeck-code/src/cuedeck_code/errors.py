"""cuedeck-code's errors (codes 1100-1139, docs/errors.md)."""

from __future__ import annotations

from cuedeck.errors import CueError


class RegexTimeout(CueError):
    """A ``regex_search`` pattern that ran past its time bound (1101): catastrophic
    backtracking, or a pattern too broad for the workspace."""

    code = 1101
    title = "Regex Timeout"
