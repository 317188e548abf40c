"""The relay a stdio client starts: which resident server it shares, connecting to it
(starting it when none answers) and copying bytes both ways (see :mod:`cuedeck_mcp.resident`).
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

from cuedeck.layout import CONFIG_PATH
from cuedeck.watch.watcher import same_user
from cuedeck_mcp.resident_registry import registry

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path


#: ``0`` here serves every stdio client in its own process.
RESIDENT_ENV = "CUEDECK_MCP_RESIDENT"


#: Set for the process that is to be the resident server: its key.
SERVE_ENV = "CUEDECK_MCP_RESIDENT_KEY"


#: The first line a resident server sends each connection, once it can serve it.
GREETING = b"cuedeck-mcp resident 1\n"


#: How long a relay waits for a starting server's greeting (imports, config, store).
START_TIMEOUT = 120.0


_PACKAGES = ("cuedeck", "cuedeck_mcp", "cuedeck_cli")


def supported() -> bool:
    """Whether this system has abstract Unix sockets (Linux)."""
    return sys.platform.startswith("linux")


def enabled(seconds: int) -> bool:
    """Whether stdio clients share a resident server (``seconds``: ``[mcp]
    resident_seconds``)."""
    return supported() and seconds > 0 and os.environ.get(RESIDENT_ENV, "1") != "0"


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
