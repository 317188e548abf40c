"""The server's one middleware: roles, rate limits, CueDeck errors as JSON-RPC errors, list
changes.

FastMCP turns an exception raised inside a tool into a plain failed result (``isError``)
that carries no code. CueDeck errors have stable codes and data that agents act on
(``suggestion``, ``cycle_path``, ``retry_after_seconds``...), so they leave here as
JSON-RPC errors instead: same code, same data.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import mcp_types
from fastmcp.resources.base import ResourceResult as ResourceResultBase
from fastmcp.server.middleware import Middleware
from mcp import MCPError
from pydantic import PrivateAttr

from cuedeck.errors import CueError, Forbidden
from cuedeck_mcp.roles import CALLER, Caller, Role, allows, required_role
from cuedeck_mcp.runtime import CueFailure

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    import anyio
    from fastmcp.resources.base import ResourceResult
    from fastmcp.server.context import Context
    from fastmcp.server.middleware import CallNext, MiddlewareContext
    from fastmcp.tools.base import Tool as ServedTool
    from fastmcp.tools.base import ToolResult

    from cuedeck.tools import Tool
    from cuedeck_mcp.ratelimit import RateLimiter
    from cuedeck_mcp.runtime import WorkspaceRuntime

log = logging.getLogger("cuedeck")


class ToolNotServed(CueError):
    """A registered tool this server was not started to serve (1051): ``tool``, its
    ``category`` and the ``profile`` served; ``help`` says how to serve it."""

    code = 1051
    title = "Tool Not Served"


def wire_error(failure: CueFailure) -> MCPError:
    """The JSON-RPC error of a CueDeck failure: its code, title + message, and data."""
    return MCPError(
        code=failure.code, message=f"{failure.title}: {failure.message}", data=failure.data
    )


def client_key() -> str:
    """Whose buckets a call spends: a verified token's name, else the remote address.

    Only a token the server verified (its ``access.toml`` grant, or the shared token)
    names a client; without one, whatever ``Authorization`` header arrives proves nothing,
    so the connection's remote address decides (a client cannot refill its bucket by
    sending ``Bearer junk1``, ``Bearer junk2``...). Over stdio (and in-process clients)
    one client owns the process: :data:`~cuedeck_mcp.ratelimit.LOCAL`, whose buckets are
    kept per workspace across restarts. Keys never depend on the MCP session, so
    reconnecting refills nothing.
    """
    from fastmcp.server.dependencies import get_access_token, get_http_request

    from cuedeck_mcp.ratelimit import LOCAL

    try:
        request = get_http_request()
    except RuntimeError:  # no HTTP request: stdio or in-memory
        return LOCAL
    token = get_access_token()
    if token is not None and token.client_id:
        return f"token:{token.client_id}"
    return f"address:{request.client.host if request.client else 'unknown'}"


def current_caller(local_role: Role, workspace: str) -> Caller:
    """The caller of this request: a token's name and role, or the local user."""
    from fastmcp.server.dependencies import get_access_token, get_http_request

    try:
        get_http_request()
        transport = "http"
    except RuntimeError:
        transport = "stdio"
    token = get_access_token()
    if token is None or not token.scopes:
        return Caller("local", local_role, transport, workspace)
    return Caller(token.client_id, token.scopes[0], transport, workspace)  # type: ignore[arg-type]


class MaskedUriResult(ResourceResultBase):
    """A resource read whose contents name the masked URI, not the one asked for."""

    _uri: str = PrivateAttr(default="")

    @classmethod
    def of(cls, result: ResourceResult, uri: str) -> MaskedUriResult:
        """``result`` answering for ``uri``."""
        masked = cls(contents=result.contents, meta=result.meta)
        masked._uri = uri
        return masked

    def to_mcp_result(self, uri: object) -> mcp_types.ReadResourceResult:
        return super().to_mcp_result(self._uri)


def _forbidden(name: str, needed: Role, caller: Caller) -> Forbidden:
    """Why ``caller`` may not call ``name``, and the setting that would let it."""
    if caller.name == "local":
        # No token: the role is the workspace's [mcp] local_role, not a token's.
        how = (
            f"this client has no token, so it gets [mcp] local_role ({caller.role}): set "
            f'local_role = "{needed}" under [mcp] in .cuedeck/config.toml and restart the '
            "server, or use a tool your role allows (whoami lists them)"
        )
    else:
        how = (
            f"ask for a token with that role (cue mcp token add --role {needed}), or use a "
            "tool your role allows (whoami lists them)"
        )
    return Forbidden(
        f"{name} needs the {needed} role; this client has {caller.role}",
        tool=name,
        role=caller.role,
        required_role=needed,
        help=how,
    )


class CueDeckMiddleware(Middleware):
    """Roles and rate limits on ``tools/call``, error mapping, resource list-change notices."""

    #: Set by :meth:`furnish`: the worker, the limiter, the tools served and every tool
    #: installed (served or not).
    runtime: WorkspaceRuntime
    limiter: RateLimiter
    tools: dict[str, Tool]
    registered: dict[str, Tool]

    def __init__(
        self, *, local_role: Role = "write", workspace: str = "", profile: Sequence[str] = ()
    ) -> None:
        self.local_role = local_role
        self.workspace = workspace
        self.profile = tuple(profile)
        #: While the server is being furnished (``initialize`` already answered): the event
        #: every other request waits for; None once furnished, or when built furnished.
        self.furnishing: anyio.Event | None = None
        self.broken: BaseException | None = None  # what furnishing raised

    def furnish(
        self,
        runtime: WorkspaceRuntime,
        limiter: RateLimiter,
        tools: Mapping[str, Tool],
        registered: Mapping[str, Tool],
    ) -> None:
        """Take the server's tools and workspace worker (see ``build_server(defer=)``)."""
        self.runtime = runtime
        self.limiter = limiter
        self.tools = dict(tools)
        self.registered = dict(registered)

    async def on_request(
        self,
        context: MiddlewareContext[mcp_types.Request[Any, Any]],
        call_next: CallNext[mcp_types.Request[Any, Any], Any],
    ) -> Any:
        if self.furnishing is not None and context.method not in ("initialize", "ping"):
            await self.furnishing.wait()
        if self.broken is not None:
            error = self.broken
            code = error.code if isinstance(error, CueError) else -32603
            raise MCPError(code=code, message=f"the server could not start: {error}") from None
        return await call_next(context)

    async def on_list_tools(
        self,
        context: MiddlewareContext[mcp_types.ListToolsRequest],
        call_next: CallNext[mcp_types.ListToolsRequest, Sequence[ServedTool]],
    ) -> Sequence[ServedTool]:
        role = current_caller(self.local_role, self.workspace).role
        listed = await call_next(context)
        return [
            tool
            for tool in listed
            if tool.name not in self.tools or allows(role, required_role(self.tools[tool.name]))
        ]

    async def on_call_tool(
        self,
        context: MiddlewareContext[mcp_types.CallToolRequestParams],
        call_next: CallNext[mcp_types.CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        name = context.message.name
        tool = self.tools.get(name)
        caller = current_caller(self.local_role, self.workspace)
        refusal: CueError | None = None
        if tool is None and name in self.registered:
            refusal = self._not_served(name)
        elif tool is not None and not allows(caller.role, required_role(tool)):
            # Checked here again, not only hidden from tools/list: a client may call a
            # tool by name without listing, and must hear why it may not.
            refusal = _forbidden(name, required_role(tool), caller)
        if refusal is not None:
            failure = await self.runtime.run(self.runtime.failure, refusal, None)
            raise wire_error(failure) from None
        CALLER.set(caller)
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

    def _not_served(self, name: str) -> ToolNotServed:
        category = self.registered[name].category
        profile = ",".join(self.profile) or "core"
        entries = list(dict.fromkeys([*self.profile, category]))
        wider = ",".join(entries)
        listed = ", ".join(f'"{entry}"' for entry in entries)
        return ToolNotServed(
            f"{name} is installed but not served: this server serves the {profile!r} tool "
            f"profile, which leaves out the {category!r} category",
            tool=name,
            category=category,
            profile=list(self.profile),
            help=f"restart the server with `cue mcp --tools {wider}` (or set [mcp] tools "
            f"= [{listed}] in .cuedeck/config.toml); get_tool_categories lists what is served",
        )

    async def on_read_resource(
        self,
        context: MiddlewareContext[mcp_types.ReadResourceRequestParams],
        call_next: CallNext[mcp_types.ReadResourceRequestParams, ResourceResult],
    ) -> ResourceResult:
        from fastmcp.exceptions import NotFoundError

        # The reply names the URI asked for: it leaves masked, like everything else.
        asked = str(context.message.uri)
        shown = await self.runtime.run(self.runtime.masked_input, asked)
        try:
            result = await call_next(context)
        except CueFailure as failure:
            raise wire_error(failure) from None
        except NotFoundError:
            raise MCPError(
                code=-32602, message=f"Resource not found: {shown!r}", data={"uri": shown}
            ) from None
        if shown == asked:
            return result
        return MaskedUriResult.of(result, shown)

    async def _announce_card_changes(self, context: Context | None) -> None:
        # Cards are resources (cuedeck://cards/{id}); a created or removed card changes
        # the list. Checked after every call, so cards made outside the server count too.
        if context is None or not self.runtime.cards_changed():
            return
        try:
            await context.send_notification(mcp_types.ResourceListChangedNotification())
        except Exception as exc:  # a lost notice must not fail the call that caused it
            log.debug("could not send resources/list_changed: %s", exc)
