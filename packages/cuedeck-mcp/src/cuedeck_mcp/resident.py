"""A stdio server that stays warm: ``cue mcp`` relays to a resident server per workspace.

A client starts ``cue mcp`` again at every session, and importing FastMCP and the MCP SDK
alone costs a second of CPU before the first answer. So, on Linux, ``cue mcp`` (stdio)
is a thin relay: it connects to the workspace's resident server over an abstract Unix
socket and copies bytes both ways until either side ends. When none answers, it starts
one (``python -m cuedeck_cli -C ROOT mcp`` in its own session, its log in the user cache)
and relays to it once it is up. The resident server serves each connection as its own
MCP session, exactly as a stdio server would, and exits after ``[mcp] resident_seconds``
without a connection. ``resident_seconds = 0`` or ``CUEDECK_MCP_RESIDENT=0`` serves each
client in its own process, as does any system without abstract sockets.

A resident server serves only clients that would have started the same server: its
socket is named after a key of everything that could make two servers differ (the
workspace, the tools asked for, the folder and the whole environment the client starts
it in, the Python and every installed package folder's time, CueDeck's and the plugins'
source files, the workspace's config file), so an upgrade, an edit or a changed variable
starts a new one. A workspace has one resident server: a new one asks the others of its
workspace to retire (SIGUSR1), and a retiring server takes no new client and exits when
its last one leaves. Both ends check that the other runs as this user (an abstract socket
has no file permissions). Every server registers itself in ``mcp-resident/`` of the user
cache (its log is there too), with its clients and since when it is idle, where ``cue mcp
stop`` and ``cue status`` find it.

This module is the server; the client's side is :mod:`cuedeck_mcp.resident_relay`, the
registry :mod:`cuedeck_mcp.resident_registry`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import threading
import time
from typing import TYPE_CHECKING, Any

from cuedeck.watch.watcher import same_user
from cuedeck_mcp.resident_registry import RETIRE, Entry, registered, retire_others
from cuedeck_mcp.resident_relay import GREETING, SERVE_ENV, address, connect, enabled, relay

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from fastmcp import FastMCP

    from cuedeck.workspace import Workspace

#: Requests longer than this (bytes, one JSON-RPC line) end the session.
MAX_LINE = 64 * 1024 * 1024


def _listen(name: str) -> socket.socket | None:
    """The listening socket of server ``name``, or None when one already listens."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(address(name))
    except OSError:
        listener.close()
        return None
    listener.listen(64)
    return listener


def serve(workspace: Workspace, name: str, tools: Sequence[str] | None, seconds: int) -> None:
    """Be the resident server ``name`` of ``workspace`` until ``seconds`` pass without a
    connection."""
    import anyio

    listener = _listen(name)
    os.write(1, b"listening\n" if listener is not None else b"taken\n")
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)  # nothing of a tool's may read or write the starter's pipe
    os.dup2(2, 1)
    os.close(null)
    if listener is None:
        return
    from cuedeck_mcp.server import build_server

    server = build_server(workspace, profile=tools, defer=True)
    # Asked to retire while starting (before the event loop listens for it): noted, not
    # the signal's default, which would end the process with its first client unserved.
    signal.signal(RETIRE, lambda *_: _RETIRE_ASKED.set())
    with registered(name, workspace.root, seconds) as entry:
        retire_others(name, workspace.root)
        anyio.run(_serve, server, listener, float(seconds), entry)


async def _serve(server: FastMCP, listener: socket.socket, seconds: float, entry: Entry) -> None:
    import anyio
    import anyio.abc
    from fastmcp.server.context import reset_transport, set_transport

    from cuedeck_mcp.stdio import furnish_while_serving

    sessions = _Sessions(entry)
    token = set_transport("stdio")
    try:
        async with server._lifespan_manager(), anyio.create_task_group() as tasks:
            furnishing = furnish_while_serving(server, tasks)
            accepting = await anyio.abc.SocketListener.from_socket(listener)

            async def session(stream: anyio.abc.SocketStream) -> None:
                with sessions.one():
                    await _session(server, stream)

            async with anyio.create_task_group() as accept:
                accept.start_soon(accepting.serve, session, tasks)
                async with anyio.create_task_group() as serving:  # until idle or retired
                    serving.start_soon(_ended_by, sessions.idle_for(seconds), serving)
                    serving.start_soon(_ended_by, _retired(entry), serving)
                accept.cancel_scope.cancel()  # closes the socket: the next client starts anew
            await sessions.ended()
            if furnishing is not None:
                await furnishing.wait()
            tasks.cancel_scope.cancel()
    finally:
        reset_transport(token)


async def _ended_by(waiting: Any, group: Any) -> None:
    """Await ``waiting``, then end the task group ``group``."""
    await waiting
    group.cancel_scope.cancel()


_RETIRE_ASKED = threading.Event()  # RETIRE came before the event loop listened for it


async def _retired(entry: Entry) -> None:
    """Return when asked to retire (:data:`RETIRE`), saying so in the entry."""
    import anyio

    with anyio.open_signal_receiver(RETIRE) as signals:
        if not _RETIRE_ASKED.is_set():  # checked once the loop listens: nothing is lost
            async for _ in signals:
                break
    entry.update(retiring=True)


class _Sessions:
    """How many sessions are open, and waits on that count (written to the entry)."""

    def __init__(self, entry: Entry | None = None) -> None:
        import anyio

        self.open = 0
        self.changed = anyio.Event()
        self.entry = entry

    @contextlib.contextmanager
    def one(self) -> Iterator[None]:
        """Count a session while it lasts."""
        self._move(+1)
        try:
            yield
        finally:
            self._move(-1)

    def _move(self, step: int) -> None:
        import anyio

        self.open += step
        self.changed.set()
        self.changed = anyio.Event()
        if self.entry is not None:
            self.entry.update(sessions=self.open, idle_since=None if self.open else time.time())

    async def idle_for(self, seconds: float) -> None:
        """Return once no session has been open for ``seconds``."""
        import anyio

        while True:
            changed = self.changed
            if self.open:
                await changed.wait()
                continue
            with anyio.move_on_after(seconds):
                await changed.wait()
                continue
            return

    async def ended(self) -> None:
        """Return once no session is open."""
        while self.open:
            await self.changed.wait()


async def _session(server: FastMCP, stream: Any) -> None:
    """Serve one relayed client: greet it, then speak MCP over the connection."""
    import anyio
    from anyio.streams.buffered import BufferedByteReceiveStream

    from cuedeck_mcp.stdio import Wire, serve_session

    async with stream:
        raw = stream.extra(anyio.abc.SocketAttribute.raw_socket)
        if not same_user(raw):
            return
        await stream.send(GREETING)

        async def send(text: str) -> None:
            await stream.send(text.encode("utf-8"))

        buffered = BufferedByteReceiveStream(stream)

        async def lines() -> Any:
            while True:
                try:
                    line = await buffered.receive_until(b"\n", MAX_LINE)
                except (anyio.IncompleteRead, anyio.EndOfStream, anyio.BrokenResourceError):
                    return
                except anyio.DelimiterNotFound:
                    return  # a line past MAX_LINE: end the session rather than buffer it
                yield line.decode("utf-8", errors="replace") + "\n"

        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
            await serve_session(server, lines(), Wire(send))


def run(workspace: Workspace, tools: Sequence[str] | None, seconds: int) -> bool:
    """Serve this stdio client through a resident server (see the module); False when
    it is to be served in this process instead."""
    name = os.environ.pop(SERVE_ENV, None)
    if name is not None:  # this process is the resident server
        serve(workspace, name, tools, seconds)
        return True
    if not enabled(seconds):
        return False
    connection = connect(workspace.root, tools)
    if connection is None:
        return False
    relay(connection)
    return True
