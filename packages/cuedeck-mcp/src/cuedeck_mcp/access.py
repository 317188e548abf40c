"""Structured access logs: one JSON line per HTTP request and per tool call, no secrets.

A line names who (a token's name, never the token), what (method and path without the
query; the tool and the repository), the outcome (status, or the error code) and how
long it took. Headers and arguments are never logged. Lines go to the ``cuedeck.access``
logger; :func:`configure` sends them to stderr or a file (``CUEDECK_ACCESS_LOG``).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterator

    from starlette.types import ASGIApp, Message, Receive, Scope, Send

    from cuedeck_mcp.roles import Caller

log = logging.getLogger("cuedeck.access")

#: Where access lines go: ``-`` (stderr, the default of the ASGI app), ``off``, or a file.
ACCESS_LOG_ENV = "CUEDECK_ACCESS_LOG"


def configure(target: str | None = None) -> None:
    """Send access lines to ``target`` (``-``: stderr, a file's path, or ``off``; default
    ``$CUEDECK_ACCESS_LOG``, else off). Idempotent."""
    chosen = target if target is not None else os.environ.get(ACCESS_LOG_ENV, "off")
    for handler in list(log.handlers):
        log.removeHandler(handler)
        handler.close()
    log.propagate = False
    if chosen == "off":
        log.disabled = True
        return
    log.disabled = False
    handler = logging.StreamHandler(sys.stderr) if chosen == "-" else logging.FileHandler(chosen)
    handler.setFormatter(logging.Formatter("%(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)


def emit(event: str, fields: dict[str, Any]) -> None:
    """One access line: ``{"ts", "event", "pid", ...fields}``."""
    if not log.isEnabledFor(logging.INFO):
        return
    stamp = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    line = {"ts": stamp, "event": event, "pid": os.getpid(), **fields}  # pid: which worker
    log.info(json.dumps(line, separators=(",", ":")))


@contextlib.contextmanager
def logged_call(tool: str, caller: Caller) -> Iterator[dict[str, Any]]:
    """Log the tool call made inside the block; the block may add fields (the repository)
    to the record it is given. The outcome is ``ok`` or the error's code."""
    from mcp import MCPError

    record: dict[str, Any] = {"tool": tool, "caller": caller.name, "role": caller.role}
    started = time.perf_counter()
    outcome: Any = "ok"
    try:
        yield record
    except MCPError as error:
        outcome = error.error.code
        raise
    except BaseException:
        outcome = "error"
        raise
    finally:
        record.setdefault("outcome", outcome)  # the block may say (a failure answered)
        record["ms"] = round((time.perf_counter() - started) * 1000, 1)
        emit("tool", record)


class AccessLog:
    """ASGI middleware: one line per HTTP request (method, path, status, time, client
    address, bytes sent). A path that is none of ``routes`` is logged as ``(other)``: a
    request may put anything in its path, a secret included."""

    def __init__(self, app: ASGIApp, routes: frozenset[str]) -> None:
        self.app = app
        self.routes = routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        seen: dict[str, Any] = {"status": None, "bytes": 0}

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                seen["status"] = message["status"]
            elif message["type"] == "http.response.body":
                seen["bytes"] += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            client = scope.get("client")
            emit(
                "http",
                {
                    "method": scope.get("method"),
                    "path": _shown(scope.get("path", ""), self.routes),
                    "status": seen["status"],
                    "bytes": seen["bytes"],
                    "client": client[0] if client else None,
                    "ms": round((time.perf_counter() - started) * 1000, 1),
                },
            )


def _shown(path: str, routes: frozenset[str]) -> str:
    return path if path.rstrip("/") in routes else "(other)"
