"""The server's one middleware: rate limits, CueDeck errors as JSON-RPC errors, list changes.

FastMCP turns an exception raised inside a tool into a plain failed result (``isError``)
that carries no code. CueDeck errors have stable codes and data that agents act on
(``suggestion``, ``cycle_path``, ``retry_after_seconds``...), so they leave here as
JSON-RPC errors instead: same code, same data.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import mcp_types
from fastmcp.server.middleware import Middleware
from mcp import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from cuedeck.errors import RateLimited
from cuedeck_mcp.runtime import CueFailure

if TYPE_CHECKING:
    from collections.abc import Collection

    from fastmcp.resources.base import ResourceResult
    from fastmcp.server.context import Context
    from fastmcp.server.middleware import CallNext, MiddlewareContext
    from fastmcp.tools.base import ToolResult

    from cuedeck_mcp.ratelimit import RateLimiter
    from cuedeck_mcp.runtime import WorkspaceRuntime

log = logging.getLogger("cuedeck")


def wire_error(failure: CueFailure) -> MCPError:
    """The JSON-RPC error of a CueDeck failure: its code, title + message, and data."""
    return MCPError(
        code=failure.code, message=f"{failure.title}: {failure.message}", data=failure.data
    )


def session_key(context: Context | None) -> str:
    """Who a call counts against: the MCP session, or the process when there is none.

    Handshake-era connections (every client today) keep a session id for their whole
    life. 2026-07-28 connections are sessionless, so each request would look new; there
    the whole transport (one client on stdio, every token holder on HTTP) shares a bucket.
    """
    if context is None or context.request_context is None:
        return "local"
    if context.request_context.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return f"transport:{context.transport or 'memory'}"
    return f"session:{context.session_id}"


class CueDeckMiddleware(Middleware):
    """Rate limits on ``tools/call``, error mapping, and resource list-change notices."""

    def __init__(
        self, runtime: WorkspaceRuntime, limiter: RateLimiter, tools: Collection[str]
    ) -> None:
        self.runtime = runtime
        self.limiter = limiter
        self.tools = frozenset(tools)

    async def on_call_tool(
        self,
        context: MiddlewareContext[mcp_types.CallToolRequestParams],
        call_next: CallNext[mcp_types.CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        name = context.message.name
        if name in self.tools:
            try:
                self.limiter.check(session_key(context.fastmcp_context), name)
            except RateLimited as exc:
                raise MCPError(
                    code=exc.code, message=f"{exc.title}: {exc.message}", data=exc.data
                ) from None
        try:
            return await call_next(context)
        except CueFailure as failure:
            raise wire_error(failure) from None
        finally:
            await self._announce_card_changes(context.fastmcp_context)

    async def on_read_resource(
        self,
        context: MiddlewareContext[mcp_types.ReadResourceRequestParams],
        call_next: CallNext[mcp_types.ReadResourceRequestParams, ResourceResult],
    ) -> ResourceResult:
        try:
            return await call_next(context)
        except CueFailure as failure:
            raise wire_error(failure) from None

    async def _announce_card_changes(self, context: Context | None) -> None:
        # Cards are resources (cuedeck://cards/{id}); a created or removed card changes
        # the list. Checked after every call, so cards made outside the server count too.
        if context is None or not self.runtime.cards_changed():
            return
        try:
            await context.send_notification(mcp_types.ResourceListChangedNotification())
        except Exception as exc:  # a lost notice must not fail the call that caused it
            log.debug("could not send resources/list_changed: %s", exc)
