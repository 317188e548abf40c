"""The CueDeck MCP server, built from whatever tools the installed plugins register.

:func:`build_server` adapts every tool of :func:`cuedeck.plugins.check_tools` (a
third-party plugin's tool appears with no change here; one that does not load is left
out and reported as its plugin's failure), adds the workspace's resources
and the middleware for rate limits, errors and list-change notices. :func:`serve` runs
it over stdio (stdout carries only JSON-RPC) or streamable HTTP.
"""

from __future__ import annotations

import hmac
import logging
import os
from typing import TYPE_CHECKING, Literal

from fastmcp import FastMCP
from fastmcp.server.auth import TokenVerifier
from fastmcp.server.auth.auth import AccessToken

from cuedeck.errors import InvalidInput
from cuedeck.layout import ACCESS_PATH, RATE_LIMITS_DB
from cuedeck_mcp.adapter import ServedTool
from cuedeck_mcp.middleware import CueDeckMiddleware
from cuedeck_mcp.ratelimit import RateLimiter
from cuedeck_mcp.resources import WorkspaceResources
from cuedeck_mcp.roles import Grant, check_role, find_grant, load_grants
from cuedeck_mcp.runtime import WorkspaceRuntime
from cuedeck_mcp.settings import McpSettings

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from pathlib import Path

    from cuedeck.tools import Tool
    from cuedeck.workspace import Workspace

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

    def __init__(self, root: Path, shared: str | None) -> None:
        super().__init__()
        self._root = root
        self._shared = shared.encode() if shared else None
        self._seen: tuple[int, int] | None = None
        self._grants: list[Grant] = []
        self._broken: str | None = None

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
        grant = find_grant(self.grants(), token)
        if self._broken is not None:
            log.warning(
                "error[1015] refused a bearer request: %s is broken (%s)", ACCESS_PATH, self._broken
            )
            return None
        if grant is None:
            return None
        return AccessToken(token=token, client_id=grant.name, scopes=[grant.role])


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
#: conversation, only agents without a shell need to edit files or commit over MCP, and
#: all fifteen memory tools would double the default's size (add ``memory``).
OPT_IN_CATEGORIES = frozenset({"files", "git", "memory"})
#: Opt-in tools ``core`` serves all the same, when installed: the memory essentials an
#: agent uses every session (save what it learnt, get it back in the next session, see how
#: full its context is and what to prune).
CORE_ESSENTIALS = ("context_capture", "context_restore", "context_analyze_usage")


def served_tools(tools: Mapping[str, Tool], profile: Sequence[str]) -> dict[str, Tool]:
    """The tools a profile serves, in registration order: ``core`` (every category but the
    opt-in ones, plus :data:`CORE_ESSENTIALS`), ``all``, categories and/or tool names."""
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
    token: str | None = None,
    profile: Sequence[str] | None = None,
    name: str = "",
) -> FastMCP:
    """A FastMCP server for ``workspace`` serving the tool ``profile`` (default ``[mcp]
    tools``), known to clients as ``name`` (its endpoint's name when one process serves
    several workspaces).

    Over HTTP it requires a bearer token when any is configured: the workspace's
    ``access.toml`` grants with their roles, or ``token`` (``CUEDECK_MCP_TOKEN``) as admin.
    """
    from cuedeck import __version__

    settings = workspace.config.section("mcp", McpSettings)
    chosen = profile if profile is not None else settings.tools
    # Every tool is imported and checked here; a broken one is a plugin failure, left out.
    tools_served = served_tools(workspace.plugins.checked_tools(), chosen)
    runtime = WorkspaceRuntime(workspace, served=tools_served)  # the guide lists these
    limiter = RateLimiter(workspace.config.rate_limits, store=workspace.root / RATE_LIMITS_DB)
    server = FastMCP(
        "CueDeck",
        instructions=_instructions(list(tools_served)),
        version=__version__,
        middleware=[
            CueDeckMiddleware(
                runtime,
                limiter,
                tools_served,
                local_role=check_role(settings.local_role, field="mcp.local_role"),
                workspace=name or workspace.root.name,
            )
        ],
        auth=RoleTokens(workspace.root, token) if needs_tokens(workspace.root, token) else None,
        on_duplicate="error",
    )
    for tool in tools_served.values():
        server.add_tool(ServedTool.adapt(tool, runtime))
    server.add_provider(WorkspaceResources(runtime, scene="build_scene" in tools_served))
    runtime.cards_changed()  # the baseline that later changes are announced against
    server.cuedeck_runtime = runtime  # type: ignore[attr-defined]
    return server


def check_exposure(host: str, token: str | None, insecure: bool, roots: Iterable[Path]) -> None:
    """Refuse a non-loopback ``host`` where a workspace has no token, unless ``insecure``."""
    from cuedeck.http_guard import is_loopback

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

        anyio.run(serve_stdio, build_server(workspace, profile=profile))
        return
    from starlette.middleware import Middleware

    from cuedeck.http_guard import HostOriginGuard, guarded_http_protocol
    from cuedeck_mcp.envelope import EnvelopeGuard

    settings = workspace.config.section("mcp", McpSettings)
    host = host or settings.host
    port = port if port is not None else settings.port
    token = os.environ.get(TOKEN_ENV) or None
    check_exposure(host, token, insecure, [workspace.root])
    guard = Middleware(
        HostOriginGuard,
        host=host,
        port=port,
        allowed_hosts=settings.allowed_hosts,
        allowed_origins=settings.allowed_origins,
    )
    build_server(workspace, token=token, profile=profile).run(
        "http",
        show_banner=False,
        host=host,
        port=port,
        middleware=[guard, Middleware(EnvelopeGuard)],
        host_origin_protection=False,  # HostOriginGuard does it, exactly as documented
        uvicorn_config={"http": guarded_http_protocol()},  # a deadline for headers
    )
