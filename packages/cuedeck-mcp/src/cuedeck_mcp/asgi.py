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
import json
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

WORKSPACES_ENV = "CUEDECK_MCP_WORKSPACES"
CONFIG_ENV = "CUEDECK_MCP_CONFIG"


@attrs.frozen
class Deployment:
    """What one application serves: named workspaces and where clients reach it."""

    workspaces: dict[str, Path]
    host: str = "127.0.0.1"
    port: int = 8765
    allowed_hosts: list[str] = attrs.field(factory=list)
    allowed_origins: list[str] = attrs.field(factory=list)
    tools: list[str] | None = None
    stateless: bool = True
    insecure: bool = False


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
        if key == "workspaces" or key not in data:
            continue  # a key left out keeps the field's default
        if key == "tools":
            expected = list[str]  # None is only the default: each workspace's [mcp] tools
        try:
            values[key] = check_type(data[key], expected)
        except ValueError:
            bad = (
                "must be a string or a list of strings"
                if get_origin(expected) is list
                else "has a bad value"
            )
            raise InvalidInput(f"{path}: {key} {bad}", field=key, path=str(path)) from None
    workspaces = parse_workspaces([f"{name}={folder}" for name, folder in table.items()])
    return Deployment(workspaces=workspaces, **values)


def deployment_from_environment(environ: Mapping[str, str] | None = None) -> Deployment:
    """The deployment ``CUEDECK_MCP_CONFIG`` (a TOML file) or ``CUEDECK_MCP_WORKSPACES``
    describes."""
    env = os.environ if environ is None else environ
    if env.get(CONFIG_ENV):
        return _deployment_file(Path(env[CONFIG_ENV]))
    if env.get(WORKSPACES_ENV):
        pairs = [pair for pair in env[WORKSPACES_ENV].split(";") if pair.strip()]
        return Deployment(
            workspaces=parse_workspaces(pairs),
            host=env.get("CUEDECK_MCP_HOST", "127.0.0.1"),
            port=int(env.get("CUEDECK_MCP_PORT", "8765")),
        )
    raise InvalidInput(
        f"set {WORKSPACES_ENV} (name=PATH;name=PATH) or {CONFIG_ENV} (a TOML file)",
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
        async with contextlib.AsyncExitStack() as stack:
            message = await receive()
            if message["type"] != "lifespan.startup":
                return
            try:
                for app in self.apps.values():
                    await stack.enter_async_context(app.lifespan(app))
            except Exception as exc:  # a workspace that cannot start stops the server
                await send({"type": "lifespan.startup.failed", "message": str(exc)})
                return
            await send({"type": "lifespan.startup.complete"})
            await receive()  # lifespan.shutdown
        await send({"type": "lifespan.shutdown.complete"})


async def _json(send: Send, status: int, body: Any) -> None:
    data = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


def build_app(deployment: Deployment, *, token: str | None = None) -> ASGIApp:
    """One ASGI application serving every workspace of ``deployment``, guarded."""
    from cuedeck.http_guard import HostOriginGuard, is_loopback
    from cuedeck.workspace import open_workspace
    from cuedeck_mcp.envelope import EnvelopeGuard
    from cuedeck_mcp.server import access_middleware, build_server, check_exposure

    check_exposure(deployment.host, token, deployment.insecure, deployment.workspaces.values())
    apps = {}
    for name, root in deployment.workspaces.items():
        workspace = open_workspace(root)
        server = build_server(workspace, profile=deployment.tools, name=name)
        apps[name] = server.http_app(
            path=f"/mcp/{name}",
            stateless_http=deployment.stateless,
            host_origin_protection=False,  # the guard below checks Host and Origin for all
            middleware=access_middleware(
                workspace.root,
                token,
                local_without_token=is_loopback(deployment.host) or deployment.insecure,
            ),
        )
    return HostOriginGuard(
        EnvelopeGuard(Workspaces(apps)),
        host=deployment.host,
        port=deployment.port,
        allowed_hosts=deployment.allowed_hosts,
        allowed_origins=deployment.allowed_origins,
    )


def serve_workspaces(
    workspaces: Mapping[str, Path],
    *,
    host: str | None = None,
    port: int | None = None,
    profile: Sequence[str] | None = None,
    insecure: bool = False,
) -> None:
    """Serve ``workspaces`` from this process at ``/mcp/<name>`` until it stops.

    Host, port and the allow lists default to the first workspace's ``[mcp]`` settings.
    One process keeps sessions (and their notifications), unlike the stateless ``app``.
    """
    import uvicorn

    from cuedeck.http_guard import guarded_http_protocol
    from cuedeck.ports import check_free
    from cuedeck.workspace import open_workspace
    from cuedeck_mcp.server import TOKEN_ENV
    from cuedeck_mcp.settings import McpSettings

    config = open_workspace(next(iter(workspaces.values()))).config
    settings = config.section("mcp", McpSettings)
    deployment = Deployment(
        workspaces=dict(workspaces),
        host=host or settings.host,
        port=port if port is not None else settings.port,
        allowed_hosts=settings.allowed_hosts,
        allowed_origins=settings.allowed_origins,
        tools=list(profile) if profile is not None else None,
        stateless=False,
        insecure=insecure,
    )
    app = build_app(deployment, token=os.environ.get(TOKEN_ENV) or None)
    check_free(deployment.host, deployment.port)  # a taken port is 1050
    uvicorn.run(
        app,
        host=deployment.host,
        port=deployment.port,
        log_level="warning",
        http=guarded_http_protocol(),  # a deadline for every request's headers
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
