"""The server's one middleware: rate limits, CueDeck errors as JSON-RPC errors, list changes.

FastMCP turns an exception raised inside a tool into a plain failed result (``isError``)
that carries no code. CueDeck errors have stable codes and data that agents act on
(``suggestion``, ``cycle_path``, ``retry_after_seconds``...), so they leave here as
JSON-RPC errors instead: same code, same data.
"""

from __future__ import annotations

import hashlib
import logging
from typing import TYPE_CHECKING

import mcp_types
from fastmcp.server.middleware import Middleware
from mcp import MCPError

from cuedeck.errors import CueError
from cuedeck_mcp.runtime import CueFailure

if TYPE_CHECKING:
    from collections.abc import Mapping

    from fastmcp.resources.base import ResourceResult
    from fastmcp.server.context import Context
    from fastmcp.server.middleware import CallNext, MiddlewareContext
    from fastmcp.tools.base import ToolResult

    from cuedeck.tools import Tool
    from cuedeck_mcp.ratelimit import RateLimiter
    from cuedeck_mcp.runtime import WorkspaceRuntime

log = logging.getLogger("cuedeck")


def wire_error(failure: CueFailure) -> MCPError:
    """The JSON-RPC error of a CueDeck failure: its code, title + message, and data."""
    return MCPError(
        code=failure.code, message=f"{failure.title}: {failure.message}", data=failure.data
    )


def client_key() -> str:
    """Whose buckets a call spends: the bearer token's, else the remote address's.

    Over stdio (and in-process clients) one client owns the process: ``local``. Keys
    never depend on the MCP session, so reconnecting does not refill a bucket, and
    sessionless clients of the newest protocol revision are still told apart.
    """
    from fastmcp.server.dependencies import get_http_request

    try:
        request = get_http_request()
    except RuntimeError:  # no HTTP request: stdio or in-memory
        return "local"
    scheme, _, credential = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and credential.strip():
        # Hashed so that the limiter (and any dump of it) never holds the token itself.
        return "token:" + hashlib.sha256(credential.strip().encode()).hexdigest()[:24]
    return f"address:{request.client.host if request.client else 'unknown'}"


class CueDeckMiddleware(Middleware):
    """Rate limits on ``tools/call``, error mapping, and resource list-change notices."""

    def __init__(
        self, runtime: WorkspaceRuntime, limiter: RateLimiter, tools: Mapping[str, Tool]
    ) -> None:
        self.runtime = runtime
        self.limiter = limiter
        self.tools = dict(tools)

    async def on_call_tool(
        self,
        context: MiddlewareContext[mcp_types.CallToolRequestParams],
        call_next: CallNext[mcp_types.CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        name = context.message.name
        tool = self.tools.get(name)
        if tool is not None and name in self.limiter.limits:
            try:
                # A call that cannot run spends nothing: validate first, then count it.
                tool.validate(context.message.arguments or {})
                self.limiter.check(client_key(), name)
            except CueError as exc:
                arguments = context.message.arguments
                failure = await self.runtime.run(self.runtime.failure, exc, arguments)
                raise wire_error(failure) from None
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
