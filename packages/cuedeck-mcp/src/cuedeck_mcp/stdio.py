"""The stdio transport, answering every line it cannot decode.

The SDK's stdio reader hands a line that is not a valid JSON-RPC message to the session
as an exception, which logs it and answers nothing: the client then waits for a reply
that never comes. Here each line is checked first. One that fails gets a JSON-RPC error
(-32700 parse error, or -32600 for well-formed JSON that is not a message) with the
request's id when it can be read; so does a request the SDK would take for a
notification (an ``id`` that is no string or integer) or nest too deep to decode
(:mod:`cuedeck_mcp.envelope`). Every other line reaches the server unchanged.

Replies and refusals share one writer, a whole line at a time, so they never interleave.
While serving, fd 0 reads the null device and fd 1 points at stderr (as the SDK's own
transport arranges), so stray output of libraries cannot corrupt the wire.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from typing import TYPE_CHECKING, Any, cast

import anyio
import anyio.abc
import anyio.to_thread

if TYPE_CHECKING:
    from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterator

    from fastmcp import FastMCP

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


def _lone_surrogate(data: Any) -> bool:
    stack = [data]
    while stack:  # iterative: decoded JSON can be nested deeper than the recursion limit
        node = stack.pop()
        if isinstance(node, str):
            if any("\ud800" <= char <= "\udfff" for char in node):
                return True
        elif isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


def _reply(request_id: str | int | None, code: int, message: str) -> str:
    error = {"code": code, "message": message}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}, separators=(",", ":"))


#: A surrogate escape (``\\ud800``-``\\udfff``): the one thing json reads that the SDK's
#: decoder may not (a lone half), so a line holding one takes the full check.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _plainly_valid(data: Any) -> bool:
    """Whether decoded ``data`` is a request or notification the SDK's message model takes
    as it is (``mcp_types.jsonrpc``: extra keys are ignored there), so its line need not
    be validated twice before the SDK validates it."""
    if not isinstance(data, dict) or data.get("jsonrpc") != "2.0":
        return False
    if not isinstance(data.get("method"), str) or not isinstance(data.get("params", {}), dict):
        return False
    if "id" not in data:
        return True
    request_id = data["id"]
    return isinstance(request_id, str) or (
        isinstance(request_id, int) and not isinstance(request_id, bool)
    )


def rejection(line: str) -> str | None:
    """The JSON-RPC error reply to ``line`` when the transport cannot decode it, or when the
    SDK would not answer it properly (:func:`cuedeck_mcp.envelope.refusal`), else None."""
    return checked(line)[0]


def checked(line: str) -> tuple[str | None, Any]:
    """:func:`rejection` of ``line``, and the message it decodes to (None when refused)."""
    import mcp_types

    from cuedeck_mcp.envelope import refusal

    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        return _reply(None, PARSE_ERROR, "Parse error: the line is not JSON CueDeck can read"), None
    refused = refusal(data)
    if refused is not None:
        return json.dumps(refused, separators=(",", ":")), None
    if _plainly_valid(data) and not _SURROGATE_ESCAPE.search(line):
        return None, data
    try:
        mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        return None, data
    except Exception:  # whatever the validator raises, the line is refused below
        pass
    raw_id = data.get("id") if isinstance(data, dict) else None
    request_id = raw_id if isinstance(raw_id, str | int) and not isinstance(raw_id, bool) else None
    if _lone_surrogate(data):
        return _reply(
            request_id,
            PARSE_ERROR,
            "Parse error: the request contains a lone surrogate escape, which is not Unicode text",
        ), None
    return _reply(request_id, INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message"), None


DRAIN_SECONDS = 60.0


class InFlight:
    """Requests read but not yet answered, so that a client closing stdin right after its
    last request still gets every answer (the SDK would cancel them as "Connection
    closed"): the end of input waits for them, up to :data:`DRAIN_SECONDS`."""

    def __init__(self) -> None:
        self.ids: set[str] = set()
        self.settled = anyio.Event()
        self.settled.set()

    def sent(self, message: Any) -> None:
        """Note ``message`` (decoded) when it is a request, which a reply must settle."""
        if isinstance(message, dict) and "method" in message and "id" in message:
            self.ids.add(json.dumps(message["id"]))
            if self.settled.is_set():
                self.settled = anyio.Event()

    def answered(self, text: str) -> None:
        """Settle the request ``text`` (a line the server writes) replies to, if any."""
        if not self.ids:
            return
        try:
            message = json.loads(text)
        except ValueError:
            return
        if isinstance(message, dict) and ("result" in message or "error" in message):
            self.ids.discard(json.dumps(message.get("id")))
            if not self.ids:
                self.settled.set()

    async def drained(self) -> None:
        """Return once every request read is answered, or after :data:`DRAIN_SECONDS`."""
        with anyio.move_on_after(DRAIN_SECONDS):
            await self.settled.wait()


class Wire:
    """The client's side of the output: one whole line per write, in order."""

    def __init__(self, send: Callable[[str], Awaitable[None]]) -> None:
        self.send = send
        self.lock = anyio.Lock()
        self.in_flight = InFlight()

    async def write(self, text: str) -> None:
        """Send ``text`` (a whole line) before any other line."""
        async with self.lock:
            await self.send(text)
        self.in_flight.answered(text)

    async def flush(self) -> None:
        """Nothing to do: every write is sent whole."""


class CheckedLines:
    """The client's stdin, with lines the transport cannot decode answered and dropped."""

    def __init__(self, lines: AsyncIterable[str], wire: Wire) -> None:
        self.lines = lines
        self.wire = wire

    def __aiter__(self) -> AsyncIterator[str]:
        return self._checked()

    async def _checked(self) -> AsyncIterator[str]:
        async for line in self.lines:
            if not line.strip():
                continue
            refusal, message = checked(line)
            if refusal is None:
                self.wire.in_flight.sent(message)
                yield line
            else:
                await self.wire.write(refusal + "\n")
        await self.wire.in_flight.drained()  # the end of input: answer what was asked


@contextlib.contextmanager
def _claimed_stdio() -> Iterator[tuple[anyio.AsyncFile[str], Wire]]:
    """The process's stdin and stdout for the protocol alone, restored on exit."""
    sys.stdout.flush()
    wire_in, wire_out = os.dup(0), os.dup(1)
    saved_in, saved_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)
    os.close(null)
    # The reader is never closed: a worker thread may still be blocked reading it when
    # the server stops, and a closed descriptor could be reused under it.
    reader = open(wire_in, encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115
    writer = anyio.wrap_file(open(wire_out, "w", encoding="utf-8", closefd=True))  # noqa: SIM115

    async def send(text: str) -> None:
        await writer.write(text)
        await writer.flush()

    try:
        yield anyio.wrap_file(reader), Wire(send)
    finally:
        with contextlib.suppress(OSError, ValueError):
            writer.wrapped.close()
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        os.close(saved_in)
        os.close(saved_out)


async def serve_session(server: FastMCP, lines: AsyncIterable[str], wire: Wire) -> None:
    """Serve one client's session: requests from ``lines``, answers to ``wire``, until the
    lines end and every request read is answered."""
    from mcp.server.stdio import stdio_server

    checked = cast("anyio.AsyncFile[str]", CheckedLines(lines, wire))
    async with stdio_server(stdin=checked, stdout=cast("Any", wire)) as (read, write):
        low = server._mcp_server
        await low.run(read, write, low.create_initialization_options())


async def serve_stdio(server: FastMCP) -> None:
    """Run ``server`` over the process's stdin and stdout until the client closes them."""
    from fastmcp.server.context import reset_transport, set_transport

    token = set_transport("stdio")
    try:
        # FastMCP's run_stdio_async does the same, but cannot take our streams.
        async with server._lifespan_manager(), anyio.create_task_group() as tasks:
            furnishing = furnish_while_serving(server, tasks)
            with _claimed_stdio() as (lines, wire):
                await serve_session(server, lines, wire)
            if furnishing is not None:
                await furnishing.wait()  # the worker thread finishes before the process ends
    finally:
        reset_transport(token)


def furnish_while_serving(server: FastMCP, tasks: anyio.abc.TaskGroup) -> anyio.Event | None:
    """Start furnishing a server built with ``defer`` (its tools, schemas, worker) in a
    thread, so that ``initialize`` is answered meanwhile; None for a furnished one."""
    furnish = getattr(server, "cuedeck_furnish", None)
    middleware = getattr(server, "cuedeck_middleware", None)
    if furnish is None or middleware is None or hasattr(server, "cuedeck_runtime"):
        return None
    done = anyio.Event()
    middleware.furnishing = done

    async def run() -> None:
        try:
            await anyio.to_thread.run_sync(furnish)
        except Exception as exc:  # every request after initialize says why
            middleware.broken = exc
        finally:
            middleware.furnishing = None
            done.set()

    tasks.start_soon(run)
    return done
