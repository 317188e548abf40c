"""The board's web server: the page, its JSON API, and live change events.

Served on loopback only, behind the same Host/Origin checks as the MCP transport, and
behind a session token: the URL ``cue board`` opens carries it once, the page keeps it
in an HttpOnly, SameSite=Strict cookie, and every API call must present it. Another page
the user visits can reach a loopback port, but can neither read the token nor send the
cookie. Assets ship in the package (``static/``); nothing is fetched from the network.
"""

from __future__ import annotations

import functools
import hmac
import importlib.resources
import json
import logging
from typing import TYPE_CHECKING, Any

from cuedeck.errors import CueError, InvalidInput

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable

    import anyio
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response

    from cuedeck_cli.board.api import BoardApi

log = logging.getLogger("cuedeck")
COOKIE = "cuedeck_board"
#: What the page may change: update_task's fields.
CARD_FIELDS = frozenset(
    {"status", "priority", "assignee", "title", "notes", "add_tags", "remove_tags",
     "add_depends_on", "remove_depends_on"}
)  # fmt: skip


def build_app(api: BoardApi, token: str, *, host: str, port: int, stop: anyio.Event) -> Any:
    """The ASGI application of the board (guarded), for ``api`` and session ``token``."""
    from starlette.applications import Starlette
    from starlette.responses import (
        HTMLResponse,
        JSONResponse,
        RedirectResponse,
        StreamingResponse,
    )
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    from cuedeck.serving.http_guard import HostOriginGuard

    static = importlib.resources.files("cuedeck_cli.board").joinpath("static")

    def authorised(request: Request) -> bool:
        presented = request.cookies.get(COOKIE) or request.headers.get("x-board-token", "")
        return hmac.compare_digest(presented.encode(), token.encode())

    async def open_session(request: Request) -> Response:
        # The address `cue board` prints: trade the token for a cookie, then drop it from
        # the address bar (and the browser's history) with a redirect.
        if not hmac.compare_digest(request.path_params["token"].encode(), token.encode()):
            return _refused()
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(COOKIE, token, httponly=True, samesite="strict", path="/")
        return response

    async def page(request: Request) -> Response:
        if not authorised(request):
            return _refused()
        response = HTMLResponse(static.joinpath("index.html").read_text(encoding="utf-8"))
        response.headers["Cache-Control"] = "no-store"
        response.headers["Content-Security-Policy"] = (
            "default-src 'self'; style-src 'self'; script-src 'self'; img-src 'self' data:"
        )
        return response

    def endpoint(
        work: Callable[[Request], Awaitable[Any]],
    ) -> Callable[[Request], Awaitable[Response]]:
        async def handle(request: Request) -> Response:
            if not authorised(request):
                return JSONResponse({"error": {"code": 401, "message": "no board session"}}, 401)
            try:
                return JSONResponse(await work(request))
            except CueError as error:
                # 200 with an "error" body, like a JSON-RPC error: a refused edit is an
                # answer the page shows, not a failed request for the browser to log.
                return JSONResponse(api.failure(error))

        return handle

    async def in_thread(func: Callable[..., Any], *args: Any) -> Any:
        from starlette.concurrency import run_in_threadpool

        return await run_in_threadpool(func, *args)

    async def cards(request: Request) -> Any:
        return await in_thread(api.cards)

    async def graph(request: Request) -> Any:
        return await in_thread(api.graph)

    async def update(request: Request) -> Any:
        body = await _json_body(request)
        updates = body.get("updates")
        if not isinstance(updates, dict) or not set(updates) <= CARD_FIELDS:
            raise InvalidInput("updates must change card fields", field="updates")
        card, content_hash = request.path_params["card"], body.get("content_hash") or None
        return await in_thread(api.update_card, card, updates, content_hash)

    async def create(request: Request) -> Any:
        body = await _json_body(request)
        allowed = {"title", "tags", "priority", "assignee", "depends_on", "body"}
        return await in_thread(api.create_card, {k: v for k, v in body.items() if k in allowed})

    async def scene(request: Request) -> Any:
        # The page draws the JSON manifest as a table: it asks for it (beyond the budget).
        arguments: dict[str, Any] = {
            "card_id": request.query_params.get("card") or None,
            "manifest": True,
        }
        if request.query_params.get("budget"):
            arguments["token_limit"] = _integer(request.query_params["budget"], "budget")
        return await in_thread(api.call, "build_scene", {k: v for k, v in arguments.items() if v})

    async def search(request: Request) -> Any:
        return await in_thread(api.search, request.query_params.get("q", ""))

    async def memory(request: Request) -> Any:
        return await in_thread(api.memory, request.query_params.get("project") or None)

    async def pin(request: Request) -> Any:
        body = await _json_body(request)
        project, segment_id = body.get("project_id") or None, body.get("segment_id")
        if not isinstance(project, str | None) or not isinstance(segment_id, str):
            raise InvalidInput("project_id and segment_id must be strings", field="segment_id")
        return await in_thread(api.pin, project, segment_id, body.get("pinned") is not False)

    async def events(request: Request) -> Response:
        if not authorised(request):
            return JSONResponse({"error": {"code": 401, "message": "no board session"}}, 401)
        return StreamingResponse(
            _changes(api, stop),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store"},
        )

    routes = [
        Route("/", page),
        Route("/open/{token}", open_session),
        Route("/open/{token}", open_session),
        Route("/api/cards", endpoint(cards)),
        Route("/api/cards", endpoint(create), methods=["POST"]),
        Route("/api/cards/{card}", endpoint(update), methods=["POST"]),
        Route("/api/graph", endpoint(graph)),
        Route("/api/scene", endpoint(scene)),
        Route("/api/search", endpoint(search)),
        Route("/api/memory", endpoint(memory)),
        Route("/api/memory/pin", endpoint(pin), methods=["POST"]),
        Route("/api/events", events),
        Mount("/static", app=StaticFiles(directory=str(static)), name="static"),
    ]
    app: Starlette = Starlette(routes=routes)
    return HostOriginGuard(app, host=host, port=port, allowed_hosts=[], allowed_origins=[])


def _refused() -> Response:
    from starlette.responses import HTMLResponse

    return HTMLResponse(
        "<h1>401</h1><p>Open the board with the address <code>cue board</code> printed.</p>",
        status_code=401,
    )


async def _json_body(request: Request) -> dict[str, Any]:
    try:
        body = json.loads(await request.body())
    except ValueError:
        raise InvalidInput("the request body is not JSON", field="body") from None
    if not isinstance(body, dict):
        raise InvalidInput("the request body must be a JSON object", field="body")
    return body


def _integer(value: str, field: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise InvalidInput(f"{field} must be a whole number", field=field) from None


async def _changes(api: BoardApi, stop: anyio.Event) -> AsyncIterator[str]:
    """Server-sent events: ``changed`` whenever a card, doc or the config changes on disk
    (the filter ``cue watch`` uses) or an agent's claim on a card does (its paths then
    ``["claims"]``: claims are kept outside the workspace, looked at every second), and a
    comment every 15 s to keep the line open."""
    import anyio.to_thread

    from cuedeck.scene import output_path
    from cuedeck.watch.files import FileWatch
    from cuedeck_cli.scene_commands import relevant_changes

    root = api.workspace.root
    yield "retry: 1000\n\n"
    claims = await anyio.to_thread.run_sync(api.claims_version)
    quiet = 0
    accept = relevant_changes(root, output_path(api.workspace))
    # Built in a thread: the watch lists every folder before it is in place.
    watch = functools.partial(FileWatch, root, accept=accept, debounce=0.05)
    with await anyio.to_thread.run_sync(watch) as files:
        async for changes in files.changes(tick=1.0):
            if stop.is_set():
                return
            now = await anyio.to_thread.run_sync(api.claims_version)
            rel = sorted(changes.paths)
            if now != claims:
                claims = now
                rel.append("claims")
            if not rel:
                quiet += 1
                if quiet % 15 == 0:
                    yield ": still here\n\n"
                continue
            data = json.dumps(api.masked({"paths": rel[:20]}))
            yield f"event: changed\ndata: {data}\n\n"
