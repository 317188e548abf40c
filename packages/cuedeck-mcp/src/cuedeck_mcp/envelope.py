"""JSON-RPC messages the SDK would drop or misread, answered before they reach it.

The SDK reads a request whose ``id`` is an object, a float, ``null`` or ``true`` as a
notification (extra keys are allowed there) and answers nothing, over stdio and HTTP
alike; JSON nested deeper than its decoder allows becomes a bare parse error. Every
request gets an answer here instead: a bad ``id`` is -32600 (with ``id: null``, as the
JSON-RPC specification says when the id cannot be read), and a request nested deeper
than :data:`MAX_NESTING` is CueDeck's 1004 with its own ``id``, the error a tool gives
for arguments nested too deep.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from cuedeck.plugins.tools import MAX_DEPTH

if TYPE_CHECKING:
    from collections.abc import MutableMapping

    from cuedeck.serving.http_guard import ASGIApp, Receive, Scope, Send

INVALID_REQUEST = -32600
INVALID_INPUT = 1004
#: Levels of nesting a whole request may have: tool arguments may nest MAX_DEPTH levels,
#: the envelope adds a few; anything deeper is refused before a decoder recurses into it.
MAX_NESTING = MAX_DEPTH * 2


def error_reply(request_id: Any, code: int, message: str, **data: Any) -> dict[str, Any]:
    """A JSON-RPC error response."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def nesting(value: Any) -> int:
    """How deeply ``value`` (decoded JSON) nests, iteratively: a level at a time, so that
    a request of a thousand objects costs a pass over them, not a tuple each."""
    level: list[Any] = [value] if isinstance(value, dict | list) else []
    depth = 0
    while level:
        depth += 1
        inner: list[Any] = []
        for node in level:
            items = node.values() if isinstance(node, dict) else node
            inner += [item for item in items if isinstance(item, dict | list)]
        level = inner
    return depth


def refusal(message: Any) -> dict[str, Any] | None:
    """The error reply to a decoded request the SDK would not answer properly, else None."""
    if not isinstance(message, dict) or "method" not in message or "id" not in message:
        return None  # responses, notifications and non-objects go their usual way
    request_id = message["id"]
    if not isinstance(request_id, str | int) or isinstance(request_id, bool):
        return error_reply(
            None, INVALID_REQUEST, "Invalid Request: id must be a string or an integer"
        )
    if nesting(message) > MAX_NESTING:
        return error_reply(
            request_id,
            INVALID_INPUT,
            f"Invalid Input: the request is nested deeper than {MAX_NESTING} levels "
            f"(tool arguments may nest {MAX_DEPTH})",
            field="arguments",
        )
    return None


class EnvelopeGuard:
    """ASGI middleware answering, for the MCP HTTP transport, the POSTed requests that
    :func:`refusal` refuses; everything else reaches the app with its body unchanged."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        ended: list[MutableMapping[str, Any]] = []
        while True:  # the body is capped and timed by HostOriginGuard, which runs first
            message = await receive()
            if message["type"] != "http.request":
                ended.append(message)
                break
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        reply = None
        if not ended:
            try:
                reply = refusal(json.loads(body))
            except (ValueError, RecursionError):
                reply = None  # the SDK answers what is not JSON
        if reply is not None:
            data = json.dumps(reply).encode()
            status = 400 if reply["id"] is None else 200
            await send(
                {
                    "type": "http.response.start",
                    "status": status,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(data)).encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": data})
            return
        replayed = False

        async def replay() -> MutableMapping[str, Any]:
            nonlocal replayed
            if not replayed:
                replayed = True
                if ended:
                    return ended[0]
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)
