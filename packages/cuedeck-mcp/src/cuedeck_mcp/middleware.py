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
from cuedeck.plugins.claims import act_as
from cuedeck_mcp.repositories import TARGET, alias_argument
from cuedeck_mcp.roles import CALLER, Caller, allows
from cuedeck_mcp.runtime import CueFailure

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    import anyio
    from fastmcp.resources.base import ResourceResult
    from fastmcp.server.context import Context
    from fastmcp.server.middleware import CallNext, MiddlewareContext
    from fastmcp.tools.base import Tool as ServedTool
    from fastmcp.tools.base import ToolResult

    from cuedeck.plugins.tools import Role, Tool
    from cuedeck_mcp.ratelimit import RateLimiter
    from cuedeck_mcp.replies import Replies
    from cuedeck_mcp.repositories import Repositories, Target
    from cuedeck_mcp.runtime import WorkspaceRuntime
    from cuedeck_mcp.shared_state import SharedState

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
    if token is not None and token.scopes:  # verified: a grant's role (no scope: local)
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


def _by_token() -> bool:
    """Whether this request's caller was named by a bearer token (else it is ``local``)."""
    from fastmcp.server.dependencies import get_access_token

    token = get_access_token()
    return token is not None and bool(token.scopes)


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


class CueDeckMiddleware(Middleware):
    """Roles and rate limits on ``tools/call``, error mapping, resource list-change notices."""

    #: Set by :meth:`furnish`: the worker, the limiter, the tools served, every tool
    #: installed (served or not) and the repositories calls are routed to.
    runtime: WorkspaceRuntime
    limiter: RateLimiter
    tools: dict[str, Tool]
    registered: dict[str, Tool]
    repositories: Repositories

    def __init__(
        self,
        *,
        local_role: Role = "write",
        workspace: str = "",
        profile: Sequence[str] = (),
        replies: Replies = "cuedeck",
        state: SharedState | None = None,
    ) -> None:
        self.local_role = local_role
        #: A team's shared state: confirmation tokens kept there, writes audited there.
        self.state = state
        self.workspace = workspace
        self.profile = tuple(profile)
        self.replies = replies
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
        repositories: Repositories | None = None,
    ) -> None:
        """Take the server's tools, workspace worker and repositories (see
        ``build_server(defer=)``)."""
        from cuedeck_mcp.repositories import OneWorkspace

        self.runtime = runtime
        self.limiter = limiter
        self.tools = dict(tools)
        self.registered = dict(registered)
        self.repositories = repositories or OneWorkspace(self.workspace, runtime)

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
            if tool.name not in self.tools or allows(role, self.tools[tool.name].role)
        ]

    async def on_call_tool(
        self,
        context: MiddlewareContext[mcp_types.CallToolRequestParams],
        call_next: CallNext[mcp_types.CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        from cuedeck_mcp.access import logged_call

        name = context.message.name
        caller = current_caller(self.local_role, self.workspace)
        seen: dict[str, Any] = {}
        try:
            with logged_call(name, caller) as record:
                seen = record
                try:
                    return await self._call(context, call_next, caller, record)
                except CueFailure as failure:
                    if self.replies == "spec":  # the specification's reply, not an error
                        from cuedeck_mcp.replies import spec_failure

                        record["outcome"] = failure.code
                        return spec_failure(failure)
                    raise wire_error(failure) from None
        finally:
            tool = self.tools.get(name) if hasattr(self, "tools") else None
            if self.state is not None and tool is not None and not tool.read_only:
                await self._audit(caller, name, seen)

    async def _audit(self, caller: Caller, tool: str, record: dict[str, Any]) -> None:
        """The write in the team's audit trail (who, tool, repository, outcome); a store
        that cannot take it is logged, and the call's answer stands."""
        import anyio

        assert self.state is not None
        outcome = str(record.get("outcome", "error"))
        try:
            await anyio.to_thread.run_sync(
                self.state.record, caller.name, tool, record.get("repository"), outcome
            )
        except CueError as exc:
            log.error("error[%s] the audit trail missed %s by %s: %s",
                      exc.code, tool, caller.name, exc.message)  # fmt: skip

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
        if tool is None and name in self.registered:
            raise await self._refuse(self._not_served(name), None)
        if tool is not None and not allows(caller.role, tool.role):
            # Checked here again, not only hidden from tools/list: a client may call a
            # tool by name without listing, and must hear why it may not.
            raise await self._refuse(_forbidden(tool, caller), None)
        CALLER.set(caller)
        # Core's view of the caller (claims): a token's member acts as itself, whatever
        # name a call gives; a caller without one ("local") may name its agent.
        act_as(caller.name, verified=_by_token())
        if self.state is not None and self.state.confirmations is not None:
            from cuedeck.serving.confirmation import CONFIRMATION_STORE

            CONFIRMATION_STORE.set(self.state.confirmations)
        arguments = dict(context.message.arguments or {})
        if tool is not None:
            target = await self._target(tool, arguments, caller)
            record["repository"] = self.repositories.acts_on(tool, arguments) or target.alias
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
        from fastmcp.exceptions import NotFoundError

        try:
            return await call_next(context)
        except NotFoundError:
            # No such tool: a protocol error (JSON-RPC -32602, as the MCP specification
            # says), not a tool's failed result; the name it echoes leaves masked.
            shown = await self.runtime.run(self.runtime.masked_input, name)
            raise MCPError(
                code=-32602,
                message=f"Unknown tool: {shown!r} (tools/list names the tools served)",
                data={"tool": shown},
            ) from None
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


def _forbidden(tool: Tool, caller: Caller) -> Forbidden:
    """Why ``caller`` may not call ``tool``: the permission and role it needs, and the
    setting that would let it."""
    from cuedeck_mcp.roles import SPEC_ROLES

    needed = tool.role
    permission = tool.permission
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
        f"Permission denied: {tool.name} requires {permission} (the {needed} role, "
        f"{SPEC_ROLES[needed]}); this client has {caller.role}",
        tool=tool.name,
        role=caller.role,
        required_role=needed,
        permission=permission,
        help=how,
    )


def _read_only(tool: Tool, target: Target) -> CueError:
    from cuedeck_mcp.errors import ReadOnlyRepository

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
