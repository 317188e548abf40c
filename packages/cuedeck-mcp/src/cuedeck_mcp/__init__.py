"""CueDeck's MCP server: every registered tool over stdio or streamable HTTP.

``build_server(workspace)`` is the entry point; the package imports fastmcp only when
it is used, so that ``cue --help`` (which loads the plugin module) stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cuedeck_mcp.server import build_server, serve

__all__ = ["build_server", "serve"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from cuedeck_mcp import server

        return getattr(server, name)
    raise AttributeError(f"module 'cuedeck_mcp' has no attribute {name!r}")
