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
starts a new one and the old one idles out. Both ends check that the other runs as this
user (an abstract socket has no file permissions). Every server registers itself in
``mcp-resident/`` of the user cache (its log is there too), where ``cue mcp stop`` finds it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import sys
import threading
from typing import TYPE_CHECKING, Any

from cuedeck.layout import CONFIG_PATH, user_cache_dir
from cuedeck.watch.watcher import same_user

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from pathlib import Path

    from fastmcp import FastMCP

    from cuedeck.workspace import Workspace

#: ``0`` here serves every stdio client in its own process.
RESIDENT_ENV = "CUEDECK_MCP_RESIDENT"
#: Set for the process that is to be the resident server: its key.
SERVE_ENV = "CUEDECK_MCP_RESIDENT_KEY"
#: The first line a resident server sends each connection, once it can serve it.
GREETING = b"cuedeck-mcp resident 1\n"
#: How long a relay waits for a starting server's greeting (imports, config, store).
START_TIMEOUT = 120.0
#: Requests longer than this (bytes, one JSON-RPC line) end the session.
MAX_LINE = 64 * 1024 * 1024
_PACKAGES = ("cuedeck", "cuedeck_mcp", "cuedeck_cli")


def supported() -> bool:
    """Whether this system has abstract Unix sockets (Linux)."""
    return sys.platform.startswith("linux")


def enabled(seconds: int) -> bool:
    """Whether stdio clients share a resident server (``seconds``: ``[mcp]
    resident_seconds``)."""
    return supported() and seconds > 0 and os.environ.get(RESIDENT_ENV, "1") != "0"


def registry() -> str:
    """The folder where resident servers register (and log)."""
    return os.path.join(user_cache_dir(), "mcp-resident")


def _sources() -> list[Any]:
    """Every Python file of CueDeck's own packages and the installed plugins, with
    what changes when it does (found without importing them)."""
    import importlib.util

    from cuedeck.plugins.entry_points import entry_points
    from cuedeck.system.remembered import file_key, tree_keys

    packages = set(_PACKAGES)
    for entry in entry_points("cuedeck"):
        packages.add(entry.value.partition(":")[0].partition(".")[0])
    found: list[Any] = []
    for package in sorted(packages):
        spec = importlib.util.find_spec(package)
        if spec is None:
            continue
        folders = list(spec.submodule_search_locations or [])
        if not folders and spec.origin:
            found.append([spec.origin, file_key(spec.origin)])
        for folder in folders:
            found.extend(tree_keys(folder))
    return found


def key(root: Path, tools: Sequence[str] | None) -> str:
    """The name of the resident server a client starting ``cue -C root mcp --tools
    tools`` here would share (see the module)."""
    from cuedeck.plugins.entry_points import path_stamps
    from cuedeck.system.remembered import file_key

    environment = sorted((k, v) for k, v in os.environ.items() if k != SERVE_ENV)
    parts = [
        str(root),
        os.getcwd(),
        list(tools) if tools is not None else None,
        environment,
        sys.executable,
        path_stamps(),
        _sources(),
        file_key(str(root / CONFIG_PATH)),
        os.getuid(),
    ]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:24]


def address(name: str) -> str:
    """The abstract socket of the resident server named ``name``."""
    return f"\0cuedeck-mcp-{name}"


# -- the relay: what a client starts ---------------------------------------------------------


def attach(name: str, *, timeout: float) -> socket.socket | None:
    """A connection to the resident server ``name`` that greeted it, or None when none
    answers (or one of another user does)."""
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.settimeout(timeout)
        connection.connect(address(name))
        if not same_user(connection):
            connection.close()
            return None
        greeting = b""
        while not greeting.endswith(b"\n") and len(greeting) < len(GREETING):
            chunk = connection.recv(len(GREETING) - len(greeting))
            if not chunk:
                break
            greeting += chunk
        if greeting != GREETING:
            connection.close()
            return None
        connection.settimeout(None)
        return connection
    except OSError:
        connection.close()
        return None


def start(root: Path, name: str, tools: Sequence[str] | None) -> bool:
    """Start the resident server ``name`` for ``root``; whether it came up (it says so
    on its stdout once its socket listens; a second one for the same name exits)."""
    import subprocess

    folder = registry()
    os.makedirs(folder, mode=0o700, exist_ok=True)
    from cuedeck.system.spawn import start_python

    args = ["-C", str(root), "mcp"]
    if tools is not None:
        args += ["--tools", ",".join(tools)]
    with open(os.path.join(folder, f"{name}.log"), "ab") as log:
        process = start_python(
            "cuedeck_cli",
            *args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=log,
            env={**os.environ, SERVE_ENV: name},
            start_new_session=True,
            close_fds=True,
        )
    import select

    _STARTED.append(process)
    assert process.stdout is not None  # stdout=PIPE above
    with process.stdout:  # its line, or its end: either makes the pipe readable
        if not select.select([process.stdout], [], [], START_TIMEOUT)[0]:
            return False
        return process.stdout.readline() == b"listening\n"


_STARTED: list[Any] = []  # servers started (Popen objects kept: they outlive the relay)


def connect(root: Path, tools: Sequence[str] | None) -> socket.socket | None:
    """A greeted connection to the workspace's resident server, started if need be; None
    when none can be had (the caller then serves in its own process)."""
    name = key(root, tools)
    connection = attach(name, timeout=START_TIMEOUT)
    if connection is None:
        start(root, name, tools)  # lost a race to start it: the winner answers
        connection = attach(name, timeout=START_TIMEOUT)
    return connection


def relay(connection: socket.socket) -> None:
    """Copy the process's stdin to ``connection`` and what comes back to its stdout, until
    the server ends the session (or the client stops reading)."""

    def upstream() -> None:
        try:
            while chunk := os.read(0, 1 << 16):
                connection.sendall(chunk)
        except OSError:
            pass
        finally:  # the end of input: the server answers what was asked, then closes
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_WR)

    threading.Thread(target=upstream, name="cuedeck-relay", daemon=True).start()
    try:
        while chunk := connection.recv(1 << 16):
            view = memoryview(chunk)
            while view:
                view = view[os.write(1, view) :]
    except OSError:  # the client is gone, or the server
        pass
    finally:
        connection.close()


# -- the resident server ---------------------------------------------------------------------


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


@contextlib.contextmanager
def _registered(name: str, root: Path) -> Iterator[None]:
    """This server's entry in :func:`registry` while it serves."""
    path = os.path.join(registry(), f"{name}.json")
    entry = {"pid": os.getpid(), "root": str(root), "server": name, "argv": sys.argv}
    with open(path, "w", encoding="utf-8") as out:
        json.dump(entry, out)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.remove(path)
        _drop_empty_log(name)


def _drop_empty_log(name: str) -> None:
    """Remove server ``name``'s log when it holds nothing."""
    log = os.path.join(registry(), f"{name}.log")
    with contextlib.suppress(OSError):
        if os.path.getsize(log) == 0:
            os.remove(log)


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
    with _registered(name, workspace.root):
        anyio.run(_serve, server, listener, float(seconds))


async def _serve(server: FastMCP, listener: socket.socket, seconds: float) -> None:
    import anyio
    import anyio.abc
    from fastmcp.server.context import reset_transport, set_transport

    from cuedeck_mcp.stdio import furnish_while_serving

    sessions = _Sessions()
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
                await sessions.idle_for(seconds)
                accept.cancel_scope.cancel()  # closes the socket: the next client starts anew
            await sessions.ended()
            if furnishing is not None:
                await furnishing.wait()
            tasks.cancel_scope.cancel()
    finally:
        reset_transport(token)


class _Sessions:
    """How many sessions are open, and waits on that count."""

    def __init__(self) -> None:
        import anyio

        self.open = 0
        self.changed = anyio.Event()

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


def _alive(pid: int) -> int | None:
    """A descriptor that becomes readable when process ``pid`` ends, or None when it has
    (or is not a resident server of ours: a pid can be reused)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            if b"cuedeck_cli" not in cmdline.read():
                return None
        return os.pidfd_open(pid)
    except OSError:
        return None


def stop_servers(root: Path, *, timeout: float = 10.0) -> list[dict[str, Any]]:
    """Stop the resident servers of ``root`` and wait for them to end; what was stopped
    (``server``: its name, ``pid``)."""
    import select
    import signal

    stopped: list[dict[str, Any]] = []
    folder = registry()
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".json"))
    except OSError:
        return stopped
    for file_name in names:
        path = os.path.join(folder, file_name)
        try:
            with open(path, encoding="utf-8") as entry_file:
                entry = json.load(entry_file)
            pid, served = int(entry["pid"]), str(entry["root"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if served != str(root):
            continue
        ending = _alive(pid)
        if ending is not None:
            try:
                os.kill(pid, signal.SIGTERM)
                select.select([ending], [], [], timeout)  # the process's end, not a sleep
            finally:
                os.close(ending)
            stopped.append({"server": file_name.removesuffix(".json"), "pid": pid})
        with contextlib.suppress(OSError):
            os.remove(path)
        _drop_empty_log(file_name.removesuffix(".json"))
    return stopped


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
