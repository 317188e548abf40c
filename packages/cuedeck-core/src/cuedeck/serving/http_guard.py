"""Host and Origin checks of CueDeck's HTTP servers (protection from DNS rebinding).

Any web page the user visits can make the browser send requests to a loopback port. A
page on a rebound domain reaches it with its own name in ``Host``; a cross-site request
carries the page's ``Origin``. So a request passes only when ``Host`` names this server
(the bound address, a loopback name or an allowed host, at the bound port) and
``Origin``, when a browser sends one, is the server's own origin or an allowed one.
Clients that are not browsers send no ``Origin`` and are judged by ``Host`` alone.

The same guard caps what a request may cost: one ``Host`` and at most one ``Origin``
(two of either is 400, so no checker can read the other one), a body of at most
:data:`MAX_BODY_BYTES` read within :data:`BODY_TIMEOUT` seconds whatever its transfer
encoding (413 and 408, and the connection is closed), and, through
:func:`guarded_http_protocol` for uvicorn, headers complete within
:data:`HEADER_TIMEOUT` seconds of a request's first byte (slow clients are cut off).

Plain ASGI with no web framework, so that core holds the one rule for the MCP server and
the board alike.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
from collections.abc import Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
#: Seconds a client has to send a request's headers, from its first byte.
HEADER_TIMEOUT = 10.0
#: Seconds a client has to send a request's whole body.
BODY_TIMEOUT = 30.0
#: The largest request body, whatever its transfer encoding (an MCP call's arguments
#: are capped at a million characters a string: this leaves room for one of them).
MAX_BODY_BYTES = 8 * 1024 * 1024


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address, IPv6 with or without brackets) is loopback."""
    bare = host.strip("[]").lower()
    if bare == "localhost":
        return True
    try:
        return ipaddress.ip_address(bare).is_loopback
    except ValueError:
        return False


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _unspecified(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:
        return False


def _with_port(value: str, port: int) -> str:
    """``host:port`` for ``value``, which may carry its own port."""
    value = value.strip().lower()
    if value.startswith("["):
        return value if "]:" in value else f"{value}:{port}"
    if value.count(":") == 1:
        return value
    return f"{_bracketed(value)}:{port}"


class HostOriginGuard:
    """ASGI middleware refusing requests whose ``Host`` or ``Origin`` is not this server's.

    A wrong ``Host`` is 421 (Misdirected Request), a foreign ``Origin`` 403; the server
    that owns the guard says how to allow one (``host_help``, ``origin_help``: the
    setting to change, appended to the refusal).
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        host: str,
        port: int,
        allowed_hosts: Iterable[str] = (),
        allowed_origins: Iterable[str] = (),
        host_help: str = "",
        origin_help: str = "",
    ) -> None:
        self.app = app
        self.host_help = f" ({host_help})" if host_help else ""
        self.origin_help = f" ({origin_help})" if origin_help else ""
        names = list(LOOPBACK_NAMES)
        if not _unspecified(host):
            names.append(_bracketed(host))
        self.hosts = frozenset(_with_port(name, port) for name in [*names, *allowed_hosts])
        self.origins = frozenset(
            {f"{scheme}://{name}" for name in self.hosts for scheme in ("http", "https")}
            | {origin.strip().rstrip("/").lower() for origin in allowed_origins}
        )

    def host_allowed(self, host: str | None) -> bool:
        """Whether a ``Host`` header names this server."""
        if not host:
            return False
        return _with_port(host, 80) in self.hosts

    def origin_allowed(self, origin: str | None) -> bool:
        """Whether an ``Origin`` header (absent for non-browser clients) may call."""
        return origin is None or origin.strip().rstrip("/").lower() in self.origins

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # streamable HTTP serves no websockets
            await self.app(scope, receive, send)
            return
        raw = [(key.decode("latin-1").lower(), value) for key, value in scope.get("headers", [])]
        names = [key for key, _ in raw]
        headers = {key: value.decode("latin-1") for key, value in raw}
        length = headers.get("content-length")
        if any(names.count(name) > 1 for name in ("host", "origin", "content-length")):
            # Two Host or Origin headers: one checker may read the first, another the last.
            await _refuse(send, 400, "Bad Request: several Host, Origin or Content-Length headers")
        elif not self.host_allowed(headers.get("host")):
            await _refuse(
                send,
                421,
                f"Misdirected Request: the Host header does not name this server{self.host_help}",
            )
        elif not self.origin_allowed(headers.get("origin")):
            await _refuse(
                send,
                403,
                f"Forbidden: requests from this Origin are not allowed{self.origin_help}",
            )
        elif length is not None and (not length.strip().isdigit() or int(length) > MAX_BODY_BYTES):
            await _refuse(
                send, 413, f"Content Too Large: bodies are limited to {MAX_BODY_BYTES} bytes"
            )
        else:
            await _Limited(self.app).run(scope, receive, send)


class _Limited:
    """One request whose body must arrive in time and within size, whatever its transfer
    encoding; over either limit the client gets 408 or 413 and the connection closes."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.received = 0
        self.body_done = False
        self.refused = False
        self.started = False

    async def run(self, scope: Scope, receive: Receive, send: Send) -> None:
        deadline = asyncio.get_running_loop().time() + BODY_TIMEOUT

        async def limited_receive() -> MutableMapping[str, Any]:
            if self.body_done or self.refused:
                return await receive()
            remaining = deadline - asyncio.get_running_loop().time()
            try:
                message = await asyncio.wait_for(receive(), max(remaining, 0.001))
            except TimeoutError:
                await self.refuse(
                    send, 408, f"Request Timeout: the body took over {BODY_TIMEOUT:g} s"
                )
                return {"type": "http.disconnect"}
            if message["type"] == "http.request":
                self.received += len(message.get("body", b""))
                if self.received > MAX_BODY_BYTES:
                    await self.refuse(
                        send,
                        413,
                        f"Content Too Large: bodies are limited to {MAX_BODY_BYTES} bytes",
                    )
                    return {"type": "http.disconnect"}
                self.body_done = not message.get("more_body", False)
            return message

        async def guarded_send(message: MutableMapping[str, Any]) -> None:
            if self.refused:
                return  # the client has its answer; the app's comes too late
            if message["type"] == "http.response.start" and not self.body_done:
                # Answered before the body was read: close afterwards, or the server
                # would go on reading (and dropping) a body that may never end.
                headers = [
                    (k, v) for k, v in message.get("headers", []) if k.lower() != b"connection"
                ]
                message = {**message, "headers": [*headers, (b"connection", b"close")]}
            self.started = True
            await send(message)

        await self.app(scope, limited_receive, guarded_send)

    async def refuse(self, send: Send, status: int, text: str) -> None:
        if not self.refused and not self.started:
            self.refused = True
            await _refuse(send, status, text)
        self.refused = True


async def _refuse(send: Send, status: int, text: str) -> None:
    """A plain-text refusal that also closes the connection."""
    body = text.encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


@functools.cache
def guarded_http_protocol() -> type:
    """uvicorn's h11 protocol with a deadline for every request's headers: a connection
    that has not sent complete headers :data:`HEADER_TIMEOUT` seconds after a request's
    first byte (or after it opened) is closed, so trickling clients cannot hold it."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class GuardedH11Protocol(H11Protocol):
        _header_deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            if self.cycle is None or self.cycle.response_complete:
                self._arm()  # bytes of a new request: its headers have a deadline
            super().data_received(data)
            if self.cycle is not None and not self.cycle.response_complete:
                self._disarm()  # the headers are complete: the app has the request

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            if self._header_deadline is None:
                self._header_deadline = self.loop.call_later(HEADER_TIMEOUT, self._too_slow)

        def _disarm(self) -> None:
            if self._header_deadline is not None:
                self._header_deadline.cancel()
                self._header_deadline = None

        def _too_slow(self) -> None:
            self._header_deadline = None
            if not self.transport.is_closing():
                self.transport.close()

    return GuardedH11Protocol


def __getattr__(name: str) -> Any:
    """``GuardedH11Protocol``, built on first use (uvicorn is imported only then), so that
    ``uvicorn --http cuedeck.serving.http_guard:GuardedH11Protocol`` finds it."""
    if name == "GuardedH11Protocol":
        return guarded_http_protocol()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
