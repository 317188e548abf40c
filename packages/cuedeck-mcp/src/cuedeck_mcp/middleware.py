"""The server's one middleware: roles, rate limits, CueDeck errors as JSON-RPC errors, list
changes.

FastMCP turns an exception raised inside a tool into a plain failed result (``isError``)
that carries no code. CueDeck errors have stable codes and data that agents act on
(``suggestion``, ``cycle_path``, ``retry_after_seconds``...), so they leave here as
JSON-RPC errors instead: same code, same data.
"""

from __future__ import annotations

import hashlib
import logging
from typing import TYPE_CHECKING, Any

import mcp_types
from fastmcp.server.middleware import Middleware
from mcp import MCPError

from cuedeck.errors import CueError, Forbidden
from cuedeck_mcp.repositories import TARGET, alias_argument
from cuedeck_mcp.roles import CALLER, Caller, Role, allows, required_role
from cuedeck_mcp.runtime import CueFailure

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from fastmcp.resources.base import ResourceResult
    from fastmcp.server.context import Context
    from fastmcp.server.middleware import CallNext, MiddlewareContext
    from fastmcp.tools.base import Tool as ServedTool
    from fastmcp.tools.base import ToolResult

    from cuedeck.tools import Tool
    from cuedeck_mcp.ratelimit import RateLimiter
    from cuedeck_mcp.replies import Replies
    from cuedeck_mcp.repositories import Repositories, Target
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


class CueDeckMiddleware(Middleware):
    """Roles and rate limits on ``tools/call``, error mapping, resource list-change notices."""

    def __init__(
        self,
        runtime: WorkspaceRuntime,
        limiter: RateLimiter,
        tools: Mapping[str, Tool],
        *,
        local_role: Role = "write",
        workspace: str = "",
        repositories: Repositories | None = None,
        replies: Replies = "cuedeck",
    ) -> None:
        from cuedeck_mcp.repositories import OneWorkspace

        self.runtime = runtime
        self.limiter = limiter
        self.tools = dict(tools)
        self.local_role = local_role
        self.workspace = workspace
        self.repositories = repositories or OneWorkspace(workspace, runtime)
        self.replies = replies

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
        from cuedeck_mcp.access import logged_call

        name = context.message.name
        caller = current_caller(self.local_role, self.workspace)
        with logged_call(name, caller) as record:
            try:
                return await self._call(context, call_next, caller, record)
            except CueFailure as failure:
                if self.replies == "spec":  # the specification's failure reply, not an error
                    from cuedeck_mcp.replies import spec_failure

                    record["outcome"] = failure.code
                    return spec_failure(failure)
                raise wire_error(failure) from None

    async def _call(
        self,
        context: MiddlewareContext[mcp_types.CallToolRequestParams],
        call_next: CallNext[mcp_types.CallToolRequestParams, ToolResult],
        caller: Caller,
        record: dict[str, Any],
    ) -> ToolResult:
        """Check, route and run one call; a refusal or failure is a :class:`CueFailure`."""
        name = context.message.name
        tool = self.tools.get(name)
        if tool is not None and not allows(caller.role, required_role(tool)):
            # Checked here again, not only hidden from tools/list: a client may call a
            # tool by name without listing, and must hear why it may not.
            raise await self._refuse(_forbidden(tool, caller), None)
        CALLER.set(caller)
        arguments = dict(context.message.arguments or {})
        if tool is not None:
            target = await self._target(tool, arguments, caller)
            record["repository"] = target.alias
            TARGET.set(target)
            context = context.copy(
                message=context.message.model_copy(update={"arguments": arguments})
            )
        if tool is not None and name in self.limiter.limits:
            try:
                # A call that cannot run spends nothing: validate first, then count it.
                tool.validate(arguments)
                self.limiter.check(client_key(), name)
            except CueError as exc:
                raise await self._refuse(exc, arguments) from None
        try:
            return await call_next(context)
        finally:
            await self._announce_card_changes(context.fastmcp_context)

    async def _target(self, tool: Tool, arguments: dict[str, Any], caller: Caller) -> Target:
        """Where ``tool`` runs: ``repository_alias`` taken out of ``arguments`` and
        resolved; a writing tool aimed at a read-only repository is refused (1401)."""
        import anyio

        try:
            alias = alias_argument(arguments) if self.repositories.takes_alias(tool) else None
            target = await anyio.to_thread.run_sync(self.repositories.resolve, tool, alias, caller)
            if not target.accepts(tool):
                raise _read_only(tool, target)
        except CueError as exc:
            raise await self._refuse(exc, arguments) from None
        return target

    async def _refuse(self, error: CueError, arguments: Any) -> CueFailure:
        """``error`` as it leaves the server (masked)."""
        return await self.runtime.run(self.runtime.failure, error, arguments)

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


def _forbidden(tool: Tool, caller: Caller) -> Forbidden:
    from cuedeck_mcp.roles import SPEC_ROLES, permission_of

    needed = required_role(tool)
    permission = permission_of(tool)
    return Forbidden(
        f"Permission denied: {tool.name} requires {permission} (the {needed} role, "
        f"{SPEC_ROLES[needed]}); this client has {caller.role}",
        tool=tool.name,
        role=caller.role,
        required_role=needed,
        permission=permission,
        help="ask for a token with that role (cue mcp token add --role "
        f"{needed}), or use a tool your role allows (whoami lists them)",
    )


def _read_only(tool: Tool, target: Target) -> CueError:
    from cuedeck_mcp.team.errors import ReadOnlyRepository

    what = "a shared repository" if target.kind == "shared" else f"a {target.kind}"
    only = (
        f" (only its own {', '.join(sorted(target.own_categories))} tools write there)"
        if target.own_categories
        else ""
    )
    return ReadOnlyRepository(
        f"{tool.name} writes, and {target.alias} is {what}: no tool writes it{only}",
        tool=tool.name,
        repository_alias=target.alias,
        kind=target.kind,
        permission="repository:write",
        help="activate it (activate_repository) and make the change in your own working "
        "copy; an admin refreshes shared repositories from their source",
    )
