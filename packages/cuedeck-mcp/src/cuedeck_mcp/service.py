"""Health and readiness endpoints of the served application.

``GET /healthz`` answers 200 while the process serves requests at all (a liveness
probe). ``GET /readyz`` answers 200 when every workspace (or the team's home) can be
served: its folder is there, its ``access.toml`` reads, the team's registry opens and
git runs; else 503 with the problems, named without paths. Both answer any Host (a
load balancer probes by address) and say nothing a caller could use.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path

    from starlette.types import ASGIApp, Receive, Scope, Send

    from cuedeck.workspace import Workspace

HEALTH = "/healthz"
READY = "/readyz"


class Service:
    """ASGI middleware answering :data:`HEALTH` and :data:`READY` before ``app``."""

    def __init__(self, app: ASGIApp, problems: Callable[[], list[str]]) -> None:
        self.app = app
        self.problems = problems

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "").rstrip("/")
        if scope["type"] != "http" or path not in (HEALTH, READY):
            await self.app(scope, receive, send)
            return
        if path == HEALTH:
            await reply(send, 200, {"status": "ok"})
            return
        import anyio

        found = await anyio.to_thread.run_sync(self.problems)
        if found:
            await reply(send, 503, {"status": "not ready", "problems": found})
        else:
            await reply(send, 200, {"status": "ready"})


async def reply(send: Send, status: int, body: Any) -> None:
    """A JSON response."""
    data = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


def workspace_problems(workspaces: Mapping[str, Path]) -> list[str]:
    """What keeps any of ``workspaces`` from being served."""
    from cuedeck.errors import InvalidInput
    from cuedeck.layout import WORKSPACE_DIR
    from cuedeck_mcp.roles import load_grants

    found = []
    for name, root in workspaces.items():
        if not (root / WORKSPACE_DIR).is_dir():
            found.append(f"workspace {name}: its folder or {WORKSPACE_DIR}/ is missing")
            continue
        try:
            load_grants(root)
        except InvalidInput:
            found.append(f"workspace {name}: access.toml cannot be read (error 1015)")
    return found


def team_problems(home: Workspace) -> list[str]:
    """What keeps the team whose home is ``home`` from being served."""
    from cuedeck_mcp.repositories import team_service

    found = workspace_problems({"team home": home.root})
    return found or team_service(home).problems()
