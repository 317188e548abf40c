"""Host and Origin checks of CueDeck's HTTP servers (protection from DNS rebinding).

Any web page the user visits can make the browser send requests to a loopback port. A
page on a rebound domain reaches it with its own name in ``Host``; a cross-site request
carries the page's ``Origin``. So a request passes only when ``Host`` names this server
(the bound address, a loopback name or an allowed host, at the bound port) and
``Origin``, when a browser sends one, is the server's own origin or an allowed one.
Clients that are not browsers send no ``Origin`` and are judged by ``Host`` alone.

Plain ASGI with no web framework, so that core holds the one rule for the MCP server and
the board alike.
"""

from __future__ import annotations

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

    A wrong ``Host`` is 421 (Misdirected Request), a foreign ``Origin`` 403.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        host: str,
        port: int,
        allowed_hosts: Iterable[str] = (),
        allowed_origins: Iterable[str] = (),
    ) -> None:
        self.app = app
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
        headers = {
            key.decode("latin-1").lower(): value.decode("latin-1")
            for key, value in scope.get("headers", [])
        }
        if not self.host_allowed(headers.get("host")):
            status, text = (
                421,
                (
                    "Misdirected Request: the Host header does not name this server "
                    "(add it to [mcp] allowed_hosts to serve under that name)"
                ),
            )
        elif not self.origin_allowed(headers.get("origin")):
            status, text = (
                403,
                (
                    "Forbidden: requests from this Origin are not allowed "
                    "(add it to [mcp] allowed_origins to trust it)"
                ),
            )
        else:
            await self.app(scope, receive, send)
            return
        body = text.encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"text/plain; charset=utf-8"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
