"""The errors of the MCP server (429, and 1400-1401 for ``repository_alias``; reserved in
docs/errors.md)."""

from __future__ import annotations

from cuedeck.errors import CueError


class RateLimited(CueError):
    """Too many calls of one tool in its window (429)."""

    code = 429
    title = "Rate Limit Exceeded"


class UnknownRepository(CueError):
    """A ``repository_alias`` that names no repository this caller can reach (1400);
    ``repository_alias``, ``suggestion`` and ``candidates`` say what exists."""

    code = 1400
    title = "Unknown Repository"


class ReadOnlyRepository(CueError):
    """A writing tool aimed at a shared repository or a composite (1401); ``permission``
    is ``repository:write``, which only an activation grants."""

    code = 1401
    title = "Read-Only Repository"
