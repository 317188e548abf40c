"""The errors of the MCP server (code 429, reserved in docs/errors.md)."""

from __future__ import annotations

from cuedeck.errors import CueError


class RateLimited(CueError):
    """Too many calls of one tool in its window (429)."""

    code = 429
    title = "Rate Limit Exceeded"
