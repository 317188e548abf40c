"""Claiming the TCP port of one of CueDeck's HTTP servers (the board, MCP over HTTP).

A port another program holds is :class:`~cuedeck.errors.PortInUse` (1050) naming it and
a free port to pass with ``--port``, never the operating system's ``[Errno 98]``.
"""

from __future__ import annotations

import errno
import socket

from cuedeck.errors import InvalidInput, PermissionDenied, PortInUse

#: How far past a taken port :func:`listen` looks for a free one to suggest.
_SUGGEST_WITHIN = 20


def listen(host: str, port: int, *, backlog: int = 128) -> socket.socket:
    """A socket listening on ``host:port`` (port 0: any free one), set up as uvicorn sets
    up its own (``SO_REUSEADDR``). Raises PortInUse (1050), PermissionDenied (1010) for a
    privileged port, InvalidInput (1004) for an address this machine does not have."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host.strip("[]"), port))
        listener.listen(backlog)
    except OSError as exc:
        listener.close()
        raise _bind_error(exc, host, port) from None
    return listener


def check_free(host: str, port: int) -> None:
    """Raise as :func:`listen` would when ``host:port`` cannot be served (for servers that
    bind their own socket a moment later)."""
    listen(host, port).close()


def _bind_error(exc: OSError, host: str, port: int) -> Exception:
    where = f"{host}:{port}"
    if exc.errno == errno.EADDRINUSE:
        free = _free_port_near(host, port)
        hint = f"--port {free}" if free is not None else "another --port"
        return PortInUse(
            f"port {port} on {host} is taken: another program is listening on {where}",
            host=host,
            port=port,
            help=f"stop that program, or serve on another port: {hint}",
        )
    if exc.errno == errno.EACCES:
        return PermissionDenied(
            f"may not listen on {where}: ports below 1024 need administrator rights",
            path=None,
            reason="privileged port",
            help="choose a port of 1024 or more with --port",
        )
    return InvalidInput(
        f"cannot listen on {where}: {exc.strerror or exc}",
        field="host",
        help="use an address of this machine with --host (127.0.0.1 by default)",
    )


def _free_port_near(host: str, port: int) -> int | None:
    for candidate in range(port + 1, min(port + _SUGGEST_WITHIN, 65535) + 1):
        try:
            probe = socket.socket(
                socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET, socket.SOCK_STREAM
            )
            with probe:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                probe.bind((host.strip("[]"), candidate))
            return candidate
        except OSError:
            continue
    return None
