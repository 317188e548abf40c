"""The errors of the git tools (codes 1030-1031, and 1035-1039 for the history tools;
reserved in docs/errors.md)."""

from __future__ import annotations

from cuedeck.errors import CueError


class GitFailed(CueError):
    """A git command that failed (1030); ``command``, ``exit_code`` and ``stderr`` say how,
    ``reason`` names a known cause (``not_a_repository``, ``credentials``, ``conflict``...)."""

    code = 1030
    title = "Git Failed"


class GitTimeout(CueError):
    """A git command stopped after its time limit (1031); ``timeout_seconds`` says which."""

    code = 1031
    title = "Git Timeout"


class NotInHistory(CueError):
    """A file git has no history of at that revision: never committed, or a path that
    is not in the repository (1035)."""

    code = 1035
    title = "Not In History"
