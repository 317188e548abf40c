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
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import socket
import sys
import threading
import time
from typing import TYPE_CHECKING, Any

from cuedeck.layout import CONFIG_PATH, user_cache_dir
from cuedeck.watch.watcher import same_user

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from pathlib import Path

    from fastmcp import FastMCP

    from cuedeck.models import BackgroundProcess
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
#: The signal that asks a resident server to retire: no new client, exit after the last.
RETIRE: signal.Signals = getattr(signal, "SIGUSR1", signal.SIGTERM)  # residents: Linux only
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
    folder = registry()
    os.makedirs(folder, mode=0o700, exist_ok=True)
    from cuedeck.system.readable import readable
    from cuedeck.system.spawn import start_detached

    args = ["-C", str(root), "mcp"]
    if tools is not None:
        args += ["--tools", ",".join(tools)]
    said, told = os.pipe()  # it says "listening" there once its socket listens
    try:
        with open(os.path.join(folder, f"{name}.log"), "ab") as log:
            start_detached(
                "cuedeck_cli", *args, stdout=told, stderr=log, env={**os.environ, SERVE_ENV: name}
            )
    finally:
        os.close(told)
    with os.fdopen(said, "rb") as line:  # its line, or its end: either makes it readable
        if not readable([line], START_TIMEOUT):
            return False
        return line.readline() == b"listening\n"


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


class _Entry:
    """This server's entry in :func:`registry`: who it is, its clients, whether it retires."""

    def __init__(self, name: str, root: Path, seconds: int) -> None:
        self.path = os.path.join(registry(), f"{name}.json")
        now = time.time()
        self.data: dict[str, Any] = {
            "pid": os.getpid(), "root": str(root), "server": name, "argv": sys.argv,
            "started": now, "seconds": seconds, "sessions": 0, "idle_since": now,
            "retiring": False, "retires": True,  # it takes RETIRE (older servers did not)
        }  # fmt: skip
        self.write()

    def update(self, **changes: Any) -> None:
        """Change fields and write the entry again (atomically: readers see one or the other)."""
        self.data.update(changes)
        self.write()

    def write(self) -> None:
        temporary = f"{self.path}.{os.getpid()}.tmp"
        with contextlib.suppress(OSError):
            with open(temporary, "w", encoding="utf-8") as out:
                json.dump(self.data, out)
            os.replace(temporary, self.path)


@contextlib.contextmanager
def _registered(name: str, root: Path, seconds: int) -> Iterator[_Entry]:
    """This server's entry in :func:`registry` while it serves."""
    entry = _Entry(name, root, seconds)
    try:
        yield entry
    finally:
        with contextlib.suppress(OSError):
            os.remove(entry.path)
        _drop_empty_log(name)


def _entries(root: Path) -> list[tuple[str, dict[str, Any]]]:
    """``(file name, entry)`` of every server registered for ``root``."""
    folder = registry()
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".json"))
    except OSError:
        return []
    found = []
    for file_name in names:
        try:
            with open(os.path.join(folder, file_name), encoding="utf-8") as entry_file:
                entry = json.load(entry_file)
            if isinstance(entry, dict) and str(entry["root"]) == str(root):
                int(entry["pid"])
                found.append((file_name, entry))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return found


def _retire_others(name: str, root: Path) -> None:
    """Ask the other resident servers of ``root`` to retire (one per workspace)."""
    for _, entry in _entries(root):
        if entry.get("server") == name or not entry.get("retires"):
            continue
        ending = _alive(int(entry["pid"]))
        if ending is not None:
            os.close(ending)
            with contextlib.suppress(OSError):
                os.kill(int(entry["pid"]), RETIRE)


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
    # Asked to retire while starting (before the event loop listens for it): noted, not
    # the signal's default, which would end the process with its first client unserved.
    signal.signal(RETIRE, lambda *_: _RETIRE_ASKED.set())
    with _registered(name, workspace.root, seconds) as entry:
        _retire_others(name, workspace.root)
        anyio.run(_serve, server, listener, float(seconds), entry)


async def _serve(server: FastMCP, listener: socket.socket, seconds: float, entry: _Entry) -> None:
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


async def _retired(entry: _Entry) -> None:
    """Return when asked to retire (:data:`RETIRE`), saying so in the entry."""
    import anyio

    with anyio.open_signal_receiver(RETIRE) as signals:
        if not _RETIRE_ASKED.is_set():  # checked once the loop listens: nothing is lost
            async for _ in signals:
                break
    entry.update(retiring=True)


class _Sessions:
    """How many sessions are open, and waits on that count (written to the entry)."""

    def __init__(self, entry: _Entry | None = None) -> None:
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
    from cuedeck.system.readable import readable

    stopped: list[dict[str, Any]] = []
    for file_name, entry in _entries(root):
        path = os.path.join(registry(), file_name)
        pid = int(entry["pid"])
        ending = _alive(pid)
        if ending is not None:
            try:
                os.kill(pid, signal.SIGTERM)
                readable([ending], timeout)  # the process's end, not a sleep
            finally:
                os.close(ending)
            stopped.append({"server": file_name.removesuffix(".json"), "pid": pid})
        with contextlib.suppress(OSError):
            os.remove(path)
        _drop_empty_log(file_name.removesuffix(".json"))
    return stopped


def listed(workspace: Workspace) -> list[BackgroundProcess]:
    """The workspace's resident servers that run (for ``cue status``)."""
    from cuedeck.models import BackgroundProcess
    from cuedeck.text import duration

    found = []
    for file_name, entry in _entries(workspace.root):
        pid = int(entry["pid"])
        ending = _alive(pid)
        if ending is None:
            continue  # gone without a word (killed): its entry is stale
        os.close(ending)
        clients = int(entry.get("sessions") or 0)
        limit = duration(float(entry.get("seconds") or 0))
        idle_since = entry.get("idle_since")
        if entry.get("retiring"):
            ends = f"when its {clients} client(s) leave (a newer server took its place)"
        elif clients:
            ends = f"{limit} after its last client leaves ({clients} connected now)"
        elif isinstance(idle_since, int | float):
            ends = f"after {limit} without a client (idle for {duration(time.time() - idle_since)})"
        else:
            ends = f"after {limit} without a client"
        log = os.path.join(registry(), file_name.removesuffix(".json") + ".log")
        detail = "keeps `cue mcp` warm for stdio clients (`cue mcp stop` ends it)"
        found.append(
            BackgroundProcess("resident MCP server", pid, entry.get("started"), ends, detail, log)
        )
    return found


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
