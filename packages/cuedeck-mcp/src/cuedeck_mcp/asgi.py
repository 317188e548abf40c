"""Several workspaces behind one ASGI application: ``/mcp/<name>`` each, ``/mcp`` lists them.

Each workspace gets its own server (:func:`~cuedeck_mcp.server.build_server`): its own
index, tool profile, rate limits and tokens (its ``.cuedeck/access.toml``). A small
dispatcher hands each request to the server of its path, runs every server's lifespan,
and the Host/Origin guard wraps it all.

``app`` is importable for any ASGI server, configured from the environment::

    CUEDECK_MCP_WORKSPACES="api=/srv/api;web=/srv/web" uvicorn cuedeck_mcp.asgi:app --workers 4

or from a TOML file named by ``CUEDECK_MCP_CONFIG`` (see docs/mcp.md). Served this way
the HTTP transport is stateless, so any worker can answer any request.
"""

from __future__ import annotations

import contextlib
import os
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_origin

import attrs

from cuedeck.config import check_type, field_types
from cuedeck.errors import InvalidInput

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from starlette.types import ASGIApp, Receive, Scope, Send

    from cuedeck.workspace import Workspace
    from cuedeck_mcp.shared_state import SharedState

WORKSPACES_ENV = "CUEDECK_MCP_WORKSPACES"
CONFIG_ENV = "CUEDECK_MCP_CONFIG"


@attrs.frozen
class Deployment:
    """What one application serves: named workspaces, or a team (its home's path; see
    docs/teams.md), and where clients reach it."""

    workspaces: dict[str, Path] = attrs.field(factory=dict)
    team: Path | None = None
    host: str = "127.0.0.1"
    port: int = 8765
    allowed_hosts: list[str] = attrs.field(factory=list)
    allowed_origins: list[str] = attrs.field(factory=list)
    tools: list[str] | None = None
    stateless: bool = True
    insecure: bool = False
    #: Where access lines go: ``-`` (stderr), a file, or ``off`` (the default).
    access_log: str = "off"
    #: Reply shapes: ``cuedeck`` or ``spec`` (:mod:`cuedeck_mcp.replies`); None:
    #: ``$CUEDECK_MCP_REPLIES``, else ``cuedeck``.
    replies: str | None = None


def parse_workspaces(pairs: Sequence[str]) -> dict[str, Path]:
    """``name=PATH`` pairs as a mapping; 1004 for a bad or repeated name or a missing path."""
    workspaces: dict[str, Path] = {}
    for pair in pairs:
        name, sep, path = pair.partition("=")
        name = name.strip()
        if not sep or not name.replace("-", "").replace("_", "").isalnum():
            raise InvalidInput(
                f"{pair!r} is not name=PATH (names: letters, digits, - and _)",
                field="workspace",
            )
        if name in workspaces:
            raise InvalidInput(f"workspace name {name!r} is given twice", field="workspace")
        folder = Path(path.strip()).expanduser().resolve()
        if not folder.is_dir():
            raise InvalidInput(f"{path.strip()} is not a folder", field="workspace")
        workspaces[name] = folder
    if not workspaces:
        raise InvalidInput("no workspace to serve", field="workspace")
    return workspaces


#: The keys of a ``CUEDECK_MCP_CONFIG`` file: the fields but ``stateless`` (how ``app`` is
#: served, not the file's to choose), ``workspaces`` last as in a file (a table follows
#: the plain keys). Any other is a typo, refused (1004) rather than a server quietly
#: serving what the file did not mean.
DEPLOYMENT_KEYS = tuple(
    sorted(
        (field.name for field in attrs.fields(Deployment) if field.name != "stateless"),
        key=lambda name: name == "workspaces",
    )
)
TEAM_ENV = "CUEDECK_MCP_TEAM"


def team_home(path: str, *, field: str = "team") -> Path:
    """The team's home folder ``path`` (a CueDeck workspace: ``cue init`` made it); 1004
    when it is not one."""
    from cuedeck.layout import WORKSPACE_DIR

    folder = Path(path.strip()).expanduser().resolve()
    if not (folder / WORKSPACE_DIR).is_dir():
        raise InvalidInput(
            f"the team's home {path.strip()} is not a CueDeck workspace",
            field=field,
            help=f"create it with `cue -C {path.strip()} init` (docs/teams.md)",
        )
    return folder


def _one_kind(deployment: Deployment, where: str) -> Deployment:
    if deployment.team is not None and deployment.workspaces:
        raise InvalidInput(
            f"{where}: serve workspaces or a team, not both",
            field="team",
            help="a team serves its repositories at /mcp; run a second app for workspaces",
        )
    return deployment


def _deployment_file(path: Path) -> Deployment:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise InvalidInput(f"{path}: {exc}", path=str(path)) from None
    unknown = sorted(set(data) - set(DEPLOYMENT_KEYS))
    if unknown:
        raise InvalidInput(
            f"{path}: unknown key {unknown[0]!r}",
            field=unknown[0],
            path=str(path),
            help=f"the keys are {', '.join(DEPLOYMENT_KEYS)}",
        )
    table = data.get("workspaces", {})
    if not isinstance(table, dict):
        raise InvalidInput(
            f"{path}: workspaces has a bad value", field="workspaces", path=str(path)
        )
    values: dict[str, Any] = {}
    for key, expected in field_types(Deployment).items():
        if key in ("workspaces", "team") or key not in data:
            continue  # a key left out keeps the field's default
        if key == "tools":
            expected = list[str]  # None is only the default: each workspace's [mcp] tools
        if key == "replies":
            expected = str  # None is only the default: the environment's, else cuedeck
        try:
            values[key] = check_type(data[key], expected)
        except ValueError:
            bad = (
                "must be a string or a list of strings"
                if get_origin(expected) is list
                else "has a bad value"
            )
            raise InvalidInput(f"{path}: {key} {bad}", field=key, path=str(path)) from None
    if "team" in data:
        if not isinstance(data["team"], str):
            raise InvalidInput(f"{path}: team has a bad value", field="team", path=str(path))
        values["team"] = team_home(data["team"])
    if table or "team" not in data:
        values["workspaces"] = parse_workspaces(
            [f"{name}={folder}" for name, folder in table.items()]
        )
    if "replies" in values:
        from cuedeck_mcp.replies import check_replies

        check_replies(values["replies"])
    return _one_kind(Deployment(**values), str(path))


def deployment_from_environment(environ: Mapping[str, str] | None = None) -> Deployment:
    """The deployment ``CUEDECK_MCP_CONFIG`` (a TOML file) or ``CUEDECK_MCP_WORKSPACES``
    describes."""
    env = os.environ if environ is None else environ
    if env.get(CONFIG_ENV):
        return _deployment_file(Path(env[CONFIG_ENV]))
    if env.get(WORKSPACES_ENV) or env.get(TEAM_ENV):
        pairs = [pair for pair in env.get(WORKSPACES_ENV, "").split(";") if pair.strip()]
        team = env.get(TEAM_ENV)
        deployment = Deployment(
            workspaces=parse_workspaces(pairs) if pairs else {},
            team=team_home(team, field=TEAM_ENV) if team else None,
            host=env.get("CUEDECK_MCP_HOST", "127.0.0.1"),
            port=int(env.get("CUEDECK_MCP_PORT", "8765")),
        )
        return _one_kind(deployment, "the environment")
    raise InvalidInput(
        f"set {WORKSPACES_ENV} (name=PATH;name=PATH), {TEAM_ENV} (a team's home) or "
        f"{CONFIG_ENV} (a TOML file)",
        field="workspaces",
    )


class Workspaces:
    """The dispatcher: ``/mcp/<name>`` to that workspace's server, ``/mcp`` the list."""

    def __init__(self, apps: dict[str, Any]) -> None:
        self.apps = apps

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        path = scope.get("path", "")
        if scope["type"] == "http" and path.rstrip("/") == "/mcp":
            await self._listing(send)
            return
        for name, app in self.apps.items():
            endpoint = f"/mcp/{name}"
            if path == endpoint or path.startswith(endpoint + "/"):
                await app(scope, receive, send)
                return
        await _json(send, 404, {"error": "not found", "workspaces": "/mcp"})

    async def _listing(self, send: Send) -> None:
        names = sorted(self.apps)
        await _json(
            send, 200, {"workspaces": [{"name": n, "endpoint": f"/mcp/{n}"} for n in names]}
        )

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        await _lifespans(list(self.apps.values()), receive, send)


class TeamEndpoint:
    """The dispatcher of a team: ``/mcp`` to the team's server, which serves every
    repository by ``repository_alias``; the OAuth protected resource metadata (RFC 9728)
    when members sign in with an identity provider's tokens."""

    def __init__(self, app: Any, metadata: dict[str, Any] | None = None) -> None:
        self.app = app
        self.metadata = metadata

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        from cuedeck_mcp.server import PROTECTED_RESOURCE_PATH

        path = scope.get("path", "").rstrip("/")
        if scope["type"] == "lifespan":
            await _lifespans([self.app], receive, send)
        elif path == "/mcp":
            await self.app(scope, receive, send)
        elif self.metadata is not None and path in (
            PROTECTED_RESOURCE_PATH,
            PROTECTED_RESOURCE_PATH + "/mcp",
        ):
            await _json(send, 200, self.metadata)
        else:
            await _json(send, 404, {"error": "not found", "team": "/mcp"})


async def _lifespans(apps: list[Any], receive: Receive, send: Send) -> None:
    """Run the lifespan of every app for as long as the server's."""
    async with contextlib.AsyncExitStack() as stack:
        message = await receive()
        if message["type"] != "lifespan.startup":
            return
        try:
            for app in apps:
                await stack.enter_async_context(app.lifespan(app))
        except Exception as exc:  # a workspace that cannot start stops the server
            await send({"type": "lifespan.startup.failed", "message": str(exc)})
            return
        await send({"type": "lifespan.startup.complete"})
        await receive()  # lifespan.shutdown
    await send({"type": "lifespan.shutdown.complete"})


async def _json(send: Send, status: int, body: Any) -> None:
    from cuedeck_mcp.service import reply

    await reply(send, status, body)


def build_app(deployment: Deployment, *, token: str | None = None) -> ASGIApp:
    """One ASGI application serving every workspace of ``deployment`` (or its team),
    guarded by Host and Origin checks, bearer tokens (:class:`~cuedeck_mcp.server.TokenGate`)
    and the JSON-RPC envelope guard, with health and readiness endpoints, access logs, and
    rate limits shared by every worker."""
    from cuedeck.serving.http_guard import HostOriginGuard, is_loopback
    from cuedeck.workspace import open_workspace
    from cuedeck_mcp import access, service
    from cuedeck_mcp.envelope import EnvelopeGuard
    from cuedeck_mcp.paths import RATE_LIMITS_DB
    from cuedeck_mcp.ratelimit import RateLimiter
    from cuedeck_mcp.server import access_middleware, build_server, check_exposure
    from cuedeck_mcp.settings import rate_limits

    access.configure(os.environ.get(access.ACCESS_LOG_ENV) or deployment.access_log)
    roots = [deployment.team] if deployment.team is not None else deployment.workspaces.values()
    check_exposure(deployment.host, token, deployment.insecure, roots)
    local_without_token = is_loopback(deployment.host) or deployment.insecure

    def http_app(
        workspace: Workspace, path: str, state: SharedState | None = None, **build: Any
    ) -> Any:
        # Every worker of the app spends from the same buckets: they are kept in SQLite,
        # or in the team's shared store that every node reaches.
        limiter = RateLimiter(
            rate_limits(workspace),
            store=workspace.root / RATE_LIMITS_DB,
            every_client=True,
            shared=state,
        )
        server = build_server(
            workspace,
            profile=deployment.tools,
            limiter=limiter,
            replies=deployment.replies,
            state=state,
            **build,
        )
        return server.http_app(
            path=path,
            stateless_http=deployment.stateless,
            host_origin_protection=False,  # the guard below checks Host and Origin for all
            # Tokens are checked per request on access.toml as it is then: the team's
            # home's for a team (its members), each workspace's own otherwise.
            middleware=access_middleware(
                workspace.root, token, local_without_token=local_without_token, state=state
            ),
        )

    dispatcher: Any
    if deployment.team is not None:
        from cuedeck_mcp.repositories import team_service
        from cuedeck_mcp.server import PROTECTED_RESOURCE_PATH

        home = open_workspace(deployment.team)
        state = team_service(home).shared_state()
        dispatcher = TeamEndpoint(
            http_app(home, "/mcp", state, name="team", team=True), state.resource_metadata()
        )
        routes = {"/mcp", PROTECTED_RESOURCE_PATH}
        problems = lambda: service.team_problems(home)  # noqa: E731
    else:
        apps = {
            name: http_app(open_workspace(root), f"/mcp/{name}", name=name)
            for name, root in deployment.workspaces.items()
        }
        dispatcher = Workspaces(apps)
        routes = {"/mcp", *(f"/mcp/{name}" for name in apps)}
        served = dict(deployment.workspaces)
        problems = lambda: service.workspace_problems(served)  # noqa: E731
    guarded = HostOriginGuard(
        EnvelopeGuard(dispatcher),
        host=deployment.host,
        port=deployment.port,
        allowed_hosts=deployment.allowed_hosts,
        allowed_origins=deployment.allowed_origins,
        host_help="add it to [mcp] allowed_hosts to serve under that name",
        origin_help="add it to [mcp] allowed_origins to trust it",
    )
    return access.AccessLog(
        service.Service(guarded, problems),
        frozenset({*routes, service.HEALTH, service.READY}),
    )


def serve_workspaces(
    workspaces: Mapping[str, Path],
    *,
    team: Path | None = None,
    host: str | None = None,
    port: int | None = None,
    profile: Sequence[str] | None = None,
    insecure: bool = False,
) -> None:
    """Serve ``workspaces`` from this process at ``/mcp/<name>`` (or the ``team`` whose
    home is that folder at ``/mcp``) until it stops.

    Host, port and the allow lists default to the first workspace's (the team home's)
    ``[mcp]`` settings. One process keeps sessions (and their notifications), unlike the
    stateless ``app``.
    """
    import uvicorn

    from cuedeck.serving.http_guard import guarded_http_protocol
    from cuedeck.serving.ports import check_free
    from cuedeck.workspace import open_workspace
    from cuedeck_mcp.server import TOKEN_ENV
    from cuedeck_mcp.settings import McpSettings, proxy_options

    first = team if team is not None else next(iter(workspaces.values()))
    settings = open_workspace(first).config.section("mcp", McpSettings)
    deployment = _one_kind(
        Deployment(
            workspaces=dict(workspaces),
            team=team,
            host=host or settings.host,
            port=port if port is not None else settings.port,
            allowed_hosts=settings.allowed_hosts,
            allowed_origins=settings.allowed_origins,
            tools=list(profile) if profile is not None else None,
            stateless=False,
            insecure=insecure,
        ),
        "the command line",
    )
    app = build_app(deployment, token=os.environ.get(TOKEN_ENV) or None)
    check_free(deployment.host, deployment.port)  # a taken port is 1050
    uvicorn.run(
        app,
        host=deployment.host,
        port=deployment.port,
        log_level="warning",
        http=guarded_http_protocol(),  # a deadline for every request's headers
        **proxy_options(settings),
    )


class _FromEnvironment:
    """``app``: built from the environment on its first event, so importing is free."""

    def __init__(self) -> None:
        self._app: ASGIApp | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._app is None:
            from cuedeck_mcp.server import TOKEN_ENV

            self._app = build_app(
                deployment_from_environment(), token=os.environ.get(TOKEN_ENV) or None
            )
        await self._app(scope, receive, send)


app = _FromEnvironment()
