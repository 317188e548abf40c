"""The example plugin's error, with a code from the range docs/errors.md reserves for it."""

from __future__ import annotations

from cuedeck.errors import CueError


class TooFewWords(CueError):
    """A doc shorter than ``[example] min_words`` (1040); ``words`` and ``min_words`` say
    by how much."""

    code = 1040
    title = "Too Few Words"
