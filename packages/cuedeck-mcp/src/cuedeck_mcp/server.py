"""The CueDeck MCP server, built from whatever tools the installed plugins register.

:func:`build_server` adapts every tool of :func:`cuedeck.plugins.host.check_tools` (a
third-party plugin's tool appears with no change here; one that does not load is left
out and reported as its plugin's failure), adds the workspace's resources
and the middleware for rate limits, errors and list-change notices. :func:`serve` runs
it over stdio (stdout carries only JSON-RPC) or streamable HTTP.
"""

from __future__ import annotations

import hmac
import json
import logging
import os
from typing import TYPE_CHECKING, Any, Literal

from fastmcp.server.auth import TokenVerifier
from fastmcp.server.auth.auth import AccessToken
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from starlette.authentication import AuthCredentials

from cuedeck.errors import CueError, InvalidInput
from cuedeck_mcp.adapter import ServedTool
from cuedeck_mcp.middleware import CueDeckMiddleware
from cuedeck_mcp.paths import ACCESS_PATH, RATE_LIMITS_DB
from cuedeck_mcp.ratelimit import RateLimiter
from cuedeck_mcp.resources import WorkspaceResources
from cuedeck_mcp.roles import Grant, check_role, find_grant, load_grants
from cuedeck_mcp.runtime import WorkspaceRuntime
from cuedeck_mcp.session_state import CueDeckFastMCP
from cuedeck_mcp.settings import McpSettings, proxy_options, rate_limits

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from pathlib import Path

    from fastmcp import FastMCP

    from cuedeck.plugins.tools import Tool
    from cuedeck.workspace import Workspace
    from cuedeck_mcp.repositories import Repositories
    from cuedeck_mcp.shared_state import SharedState

log = logging.getLogger("cuedeck")

#: The bearer token HTTP clients must send when it is set.
TOKEN_ENV = "CUEDECK_MCP_TOKEN"
Transport = Literal["stdio", "http"]


class RoleTokens(TokenVerifier):
    """Accepts the tokens of ``.cuedeck/access.toml`` (re-read when it changes) with their
    roles, and the ``CUEDECK_MCP_TOKEN`` shared token as ``admin``.

    The access token FastMCP keeps carries the grant's name as client id and its role as
    the one scope; no token is ever logged. A file that cannot be read fails closed: every
    bearer request is refused, and each refusal logs why (error 1015), until it is fixed.
    """

    def __init__(self, root: Path, shared: str | None, state: SharedState | None = None) -> None:
        super().__init__()
        self._root = root
        self._shared = shared.encode() if shared else None
        #: A team's shared state: members (and JWT sign-in) are checked there instead.
        self.state = state
        self._seen: tuple[int, int] | None = None
        self._grants: list[Grant] = []
        self._broken: str | None = None

    def required(self) -> bool:
        """Whether a request must carry a token now (:func:`needs_tokens`)."""
        shared = self._shared.decode() if self._shared else None
        return needs_tokens(self._root, shared) or (
            self.state is not None and self.state.requires_tokens()
        )

    def grants(self) -> list[Grant]:
        """The grants on disk now (re-read only when the file changed); none while the
        file is broken (see :attr:`broken`)."""
        try:
            stat = (self._root / ACCESS_PATH).stat()
            seen = (stat.st_mtime_ns, stat.st_size)
        except FileNotFoundError:
            seen = (0, 0)
        if seen != self._seen:
            self._seen = seen
            try:
                self._grants = load_grants(self._root) if seen != (0, 0) else []
                self._broken = None
            except InvalidInput as exc:
                self._grants, self._broken = [], exc.message
                log.error("error[1015] %s: every bearer request is refused until it is fixed",
                          exc.message)  # fmt: skip
        return self._grants

    @property
    def broken(self) -> str | None:
        """Why ``access.toml`` cannot be read, or None."""
        self.grants()
        return self._broken

    async def verify_token(self, token: str) -> AccessToken | None:
        if self._shared is not None and hmac.compare_digest(token.encode(), self._shared):
            return AccessToken(token=token, client_id="shared", scopes=["admin"])
        if self.state is not None:
            import anyio

            found = await anyio.to_thread.run_sync(self.state.member_of, token)
            if found is None:
                return None
            return AccessToken(token=token, client_id=found.name, scopes=[found.role])
        grant = find_grant(self.grants(), token)
        if self._broken is not None:
            log.warning(
                "error[1015] refused a bearer request: %s is broken (%s)", ACCESS_PATH, self._broken
            )
            return None
        if grant is None:
            return None
        return AccessToken(token=token, client_id=grant.name, scopes=[grant.role])


class TokenGate:
    """The bearer-token check of every HTTP request, decided on ``access.toml`` as it is
    when the request comes (:func:`needs_tokens`): while tokens are required, a request
    needs a valid one (401 otherwise); while they are not, a request without one is the
    local user (``[mcp] local_role``), on a server that may run without tokens (loopback
    or ``--insecure``). So the first ``cue mcp token add`` applies at once, without a
    restart. ASGI, in front of FastMCP (which gets no auth of its own).
    """

    def __init__(self, app: Any, *, tokens: RoleTokens, local_without_token: bool) -> None:
        self.app = app
        self.tokens = tokens
        self.local_without_token = local_without_token

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        credential = _bearer(scope)
        try:
            access = await self.tokens.verify_token(credential) if credential else None
        except CueError as refused:  # a token refused for a nameable reason, or no store
            await _refused(send, refused, self._metadata_url(scope))
            return
        if access is None:
            if self.tokens.required() or not self.local_without_token:
                await _unauthorized(
                    send, presented=credential is not None, metadata=self._metadata_url(scope)
                )
                return
            access = AccessToken(token="", client_id="local", scopes=[])  # no scope: local
        scope["user"] = AuthenticatedUser(access)
        scope["auth"] = AuthCredentials(access.scopes)
        await self.app(scope, receive, send)

    def _metadata_url(self, scope: Any) -> str | None:
        """Where this server's protected resource metadata is, when it has some."""
        state = self.tokens.state
        if state is None or state.resource_metadata() is None:
            return None
        host = next((v.decode("latin-1") for k, v in scope.get("headers", []) if k == b"host"), "")
        return f"{scope.get('scheme', 'http')}://{host}{PROTECTED_RESOURCE_PATH}"


#: Where a server that accepts JWT access tokens publishes its metadata (RFC 9728).
PROTECTED_RESOURCE_PATH = "/.well-known/oauth-protected-resource"


def _bearer(scope: Any) -> str | None:
    for name, value in scope.get("headers", []):
        if name.lower() == b"authorization" and value[:7].lower() == b"bearer ":
            return str(value[7:].decode("latin-1").strip()) or None
    return None


async def _unauthorized(
    send: Any,
    *,
    presented: bool,
    metadata: str | None = None,
    status: int = 401,
    description: str = "Authentication required",
    extra: dict[str, Any] | None = None,
) -> None:
    # RFC 6750: a request with no credentials gets a bare challenge, a bad one the error;
    # RFC 9728: the challenge names the protected resource metadata when there is some.
    parts = ['error="invalid_token"'] if presented else []
    if metadata:
        parts.append(f'resource_metadata="{metadata}"')
    challenge = ("Bearer " + ", ".join(parts)).strip().encode()
    body = json.dumps(
        {"error": "invalid_token", "error_description": description, **(extra or {})}
    ).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"www-authenticate", challenge),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _refused(send: Any, error: CueError, metadata: str | None) -> None:
    """A token refused with a reason (401), or the shared store unreachable (503)."""
    retryable = bool(error.data.get("retryable"))
    await _unauthorized(
        send,
        presented=True,
        metadata=metadata,
        status=503 if retryable else 401,
        description=f"error[{error.code}] {error.message}",
        extra={"code": error.code, **{k: v for k, v in error.data.items() if k == "reason"}},
    )


def access_middleware(
    root: Path,
    token: str | None,
    *,
    local_without_token: bool,
    state: SharedState | None = None,
) -> list[Any]:
    """The middleware that checks bearer tokens for the HTTP app of the workspace at
    ``root`` (``token``: ``CUEDECK_MCP_TOKEN``), and makes the caller known to tools."""
    from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
    from starlette.middleware import Middleware

    return [
        Middleware(
            TokenGate,
            tokens=RoleTokens(root, token, state),
            local_without_token=local_without_token,
        ),
        Middleware(AuthContextMiddleware),
    ]


def needs_tokens(root: Path, shared: str | None) -> bool:
    """Whether HTTP clients must present a token: a shared token is set, or the workspace
    has an ``access.toml``, whatever it holds. An empty or broken file locks the server
    rather than opening it; only removing the file serves loopback without tokens."""
    return bool(shared) or (root / ACCESS_PATH).exists()


def _instructions(tools: list[str]) -> str:
    text = "CueDeck: this project's task cards and docs, with secrets masked."
    if "first_time_user_guide" in tools:
        text += " New here? Call first_time_user_guide."
    if "get_tool_docs" in tools:
        text += " Tool descriptions are one line; get_tool_docs has each tool's full reference."
    return text


#: Tool categories the ``core`` profile leaves out: every tool listed costs tokens in every
#: conversation, only agents without a shell need to edit files or commit over MCP, all
#: fifteen memory tools would double the default's size (add ``memory``), claims on
#: cards matter only when several agents share a backlog (add ``claims``), and the ten
#: code-intelligence tools (``scip``) are for agents that ask for them.
OPT_IN_CATEGORIES = frozenset({"files", "git", "memory", "reference", "claims", "scip"})
#: Categories only a team server serves: they act on a team's repositories and members
#: (the team plugin's tools, cuedeck-team).
TEAM_ONLY = frozenset({"repositories", "users"})
#: What a team server serves on top of its profile.
TEAM_PROFILE = ("repositories", "users", "cidx_quick_reference")
#: Opt-in tools ``core`` serves all the same, when installed: the memory essentials an
#: agent uses every session (save what it learnt, get it back in the next session, see how
#: full its context is and what to prune).
CORE_ESSENTIALS = ("context_capture", "context_restore", "context_analyze_usage")


def served_tools(
    tools: Mapping[str, Tool], profile: Sequence[str], *, team: bool = False
) -> dict[str, Tool]:
    """The tools a profile serves, in registration order: ``core`` (every category but the
    opt-in ones, plus :data:`CORE_ESSENTIALS`), ``all``, categories and/or tool names.
    The team's own tools (:data:`TEAM_ONLY`) are served by a ``team`` server only."""
    if not team:
        tools = {name: tool for name, tool in tools.items() if tool.category not in TEAM_ONLY}
    chosen: set[str] = set()
    for entry in profile:
        if entry == "all":
            chosen.update(tools)
        elif entry == "core":
            chosen.update(n for n, tool in tools.items() if tool.category not in OPT_IN_CATEGORIES)
            chosen.update(name for name in CORE_ESSENTIALS if name in tools)
        elif entry in tools:
            chosen.add(entry)
        elif any(tool.category == entry for tool in tools.values()):
            chosen.update(n for n, tool in tools.items() if tool.category == entry)
        else:
            raise InvalidInput(
                f"the tool profile names {entry!r}, which no installed plugin registers",
                field="mcp.tools",
                help="use core, all, categories (files, git, memory...) or tool names "
                "(`cue plugins` lists them)",
            )
    return {name: tool for name, tool in tools.items() if name in chosen}


def build_server(
    workspace: Workspace,
    *,
    profile: Sequence[str] | None = None,
    name: str = "",
    team: bool = False,
    limiter: RateLimiter | None = None,
    replies: str | None = None,
    defer: bool = False,
    state: SharedState | None = None,
) -> FastMCP:
    """A FastMCP server for ``workspace`` serving the tool ``profile`` (default ``[mcp]
    tools``), known to clients as ``name`` (its endpoint's name when one process serves
    several workspaces).

    With ``team``, ``workspace`` is a team's home and the server serves the team's
    repositories (docs/teams.md): every tool takes ``repository_alias``, and the team's own
    tools are served too. ``limiter`` counts rate limits (default: the local client's
    buckets kept in the workspace cache, the others in memory). ``replies`` is ``cuedeck``
    or ``spec`` (default ``$CUEDECK_MCP_REPLIES``): the reply shapes of
    :mod:`cuedeck_mcp.replies`.

    With ``defer``, the server can answer ``initialize`` at once: the tools' descriptions
    and schemas (:mod:`cuedeck_mcp.faces`: remembered, or made now by importing and
    checking the tools), the file watcher and the worker thread wait for its
    ``cuedeck_furnish()``, which :func:`cuedeck_mcp.stdio.serve_stdio` runs while the
    client initializes; every other request waits for it. Bearer tokens are checked in
    front of the server, by :func:`access_middleware` (HTTP only).
    """
    from cuedeck import __version__
    from cuedeck_mcp.replies import check_replies

    settings = workspace.config.section("mcp", McpSettings)
    shapes = check_replies(replies)
    chosen = list(profile if profile is not None else settings.tools)
    if team:
        chosen += TEAM_PROFILE
    if shapes == "spec":
        chosen.append("cidx_quick_reference")  # what a specification's client asks first
    # What initialize says needs only the names served: registrations, nothing imported.
    named = served_tools(workspace.plugins.tools(), chosen, team=team)
    label = name or workspace.root.name
    middleware = CueDeckMiddleware(
        local_role=check_role(settings.local_role, field="mcp.local_role"),
        workspace=label,
        profile=chosen,
        replies=shapes,
        state=state,
    )
    server = CueDeckFastMCP(
        "CueDeck",
        instructions=_instructions(list(named)),
        version=__version__,
        middleware=[middleware],
        on_duplicate="error",
    )

    def furnish() -> None:
        from cuedeck_mcp.faces import faces

        installed = workspace.plugins.tools()
        if not team:  # the team's own tools exist only on a team server
            installed = {n: tool for n, tool in installed.items() if tool.category not in TEAM_ONLY}
        # Each served tool's description and schemas, remembered from an earlier start or
        # made now (a tool that does not load is a plugin failure, left out).
        offered = served_tools(installed, chosen, team=team)
        described = faces(workspace.plugins, offered, shapes)
        tools_served = {n: tool for n, tool in offered.items() if n in described}
        runtime = WorkspaceRuntime(workspace, served=tools_served)  # the guide lists these
        from cuedeck_mcp.repositories import OneWorkspace

        repositories: Repositories = OneWorkspace(label, runtime)
        if team:
            from cuedeck_mcp.repositories import team_service

            repositories = team_service(workspace).repositories(runtime, frozenset(tools_served))
        counted = limiter or RateLimiter(
            rate_limits(workspace), store=workspace.root / RATE_LIMITS_DB
        )
        for name, tool in tools_served.items():
            published = repositories.alias_published(tool) if team else None
            server.add_tool(
                ServedTool.adapt(
                    tool,
                    runtime,
                    repository_alias=published,
                    replies=shapes,
                    face=described[name],
                )
            )
        if not team:  # a team's home has no cards or docs of its own to publish
            server.add_provider(WorkspaceResources(runtime, scene="build_scene" in tools_served))
        runtime.cards_changed()  # the baseline that later changes are announced against
        server.cuedeck_runtime = runtime  # type: ignore[attr-defined]
        middleware.furnish(runtime, counted, tools_served, installed, repositories)

    server.cuedeck_furnish = furnish  # type: ignore[attr-defined]
    server.cuedeck_middleware = middleware  # type: ignore[attr-defined]
    if not defer:
        furnish()
    return server


def check_exposure(host: str, token: str | None, insecure: bool, roots: Iterable[Path]) -> None:
    """Refuse a non-loopback ``host`` where a workspace has no token, unless ``insecure``."""
    from cuedeck.serving.http_guard import is_loopback

    if is_loopback(host) or all(needs_tokens(root, token) for root in roots):
        return
    if not insecure:
        raise InvalidInput(
            f"refusing to serve {host} without a token: anyone who can reach it could "
            "read and change this workspace",
            field="host",
            help=f"add a token (cue mcp token add --role write NAME) or set {TOKEN_ENV}; "
            "pass --insecure only if the network is trusted",
        )
    log.warning("serving on %s without a token (--insecure)", host)


def serve(
    workspace: Workspace,
    *,
    transport: Transport = "stdio",
    host: str | None = None,
    port: int | None = None,
    insecure: bool = False,
    profile: Sequence[str] | None = None,
) -> None:
    """Serve ``workspace`` until the client disconnects (stdio) or the process stops.

    Over HTTP, a non-loopback ``host`` needs a bearer token unless ``insecure``; every
    request's Host and Origin are checked either way (several workspaces:
    :func:`cuedeck_mcp.asgi.serve_workspaces`).
    """
    if transport == "stdio":
        import anyio

        from cuedeck_mcp.stdio import serve_stdio

        anyio.run(serve_stdio, build_server(workspace, profile=profile, defer=True))
        return
    from starlette.middleware import Middleware

    from cuedeck.serving.http_guard import HostOriginGuard, guarded_http_protocol
    from cuedeck.serving.ports import check_free
    from cuedeck_mcp.envelope import EnvelopeGuard

    settings = workspace.config.section("mcp", McpSettings)
    host = host or settings.host
    port = port if port is not None else settings.port
    token = os.environ.get(TOKEN_ENV) or None
    check_exposure(host, token, insecure, [workspace.root])
    check_free(host, port)  # a taken port is 1050, not uvicorn's log line and exit 3
    guard = Middleware(
        HostOriginGuard,
        host=host,
        port=port,
        allowed_hosts=settings.allowed_hosts,
        allowed_origins=settings.allowed_origins,
    )
    from cuedeck.serving.http_guard import is_loopback

    gate = access_middleware(
        workspace.root, token, local_without_token=is_loopback(host) or insecure
    )
    build_server(workspace, profile=profile).run(
        "http",
        show_banner=False,
        host=host,
        port=port,
        middleware=[guard, *gate, Middleware(EnvelopeGuard)],
        host_origin_protection=False,  # HostOriginGuard does it, exactly as documented
        # a deadline for headers; forwarded headers believed from trusted proxies only
        uvicorn_config={"http": guarded_http_protocol(), **proxy_options(settings)},
    )
