"""Fixtures of the MCP tests: a copy of the demo workspace and FastMCP in-memory clients."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from cuedeck.workspace import open_workspace

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from fastmcp import FastMCP

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "examples" / "demo"
CUE = str(Path(sys.executable).with_name("cue"))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    """A private copy of examples/demo (its cache left behind)."""
    root = tmp_path / "demo"
    shutil.copytree(DEMO, root, ignore=shutil.ignore_patterns(".cache", "state.json"))
    return root


def server_for(root: Path, **options: Any) -> FastMCP:
    """A fresh server on the workspace at ``root``."""
    from cuedeck_mcp.server import build_server

    return build_server(open_workspace(root), **options)


def environment(**extra: str) -> dict[str, str]:
    """This process's environment without CueDeck's variables (but the test's own user
    cache, so a server never touches the real one, and whether it may be resident),
    plus ``extra``."""
    kept = ("CUEDECK_CACHE_DIR", "CUEDECK_MCP_RESIDENT")
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("CUEDECK_", "CUE_")) or k in kept
    }
    env.update(extra)
    return env


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_listening(
    port: int, process: subprocess.Popen[bytes], why: Callable[[], str], timeout: float = 30
) -> None:
    """Wait until ``port`` accepts connections; fail with ``why()`` if ``process`` dies."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(why()) from None
            time.sleep(0.05)  # polling a port: there is no event to wait on


@contextmanager
def http_server(root: Path, *args: str, **env: str) -> Iterator[tuple[str, int]]:
    """``cue mcp --transport http`` on a free port, until the block ends: (url, port)."""
    port = free_port()
    process = subprocess.Popen(
        [CUE, "-C", str(root), "mcp", "--transport", "http", "--port", str(port), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environment(**env),
    )
    try:
        wait_until_listening(port, process, lambda: process.stderr.read().decode())  # type: ignore[union-attr]
        yield f"http://127.0.0.1:{port}/mcp", port
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def add_token(root: Path, name: str, role: str) -> str:
    """A new bearer token of ``role`` for ``root``, made by `cue mcp token add`."""
    done = subprocess.run(
        [CUE, "-C", str(root), "mcp", "token", "add", name, "--role", role],
        capture_output=True, text=True, env=environment(),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


async def bearer_session(url: str, token: str | None, work: Any) -> Any:
    """``await work(client)`` with a real MCP client over HTTP, sending ``token``."""
    import httpx2
    from mcp.client import Client
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        # A loaded machine can take longer than httpx's 5 s over a server's first call.
        httpx2.AsyncClient(headers=headers, timeout=120) as http,
        Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
    ):
        return await work(client)
