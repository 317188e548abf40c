"""The HTTP guard against what a request may cost, on a real uvicorn and raw sockets.

Timeouts are shortened here (the guard reads them when it runs); the MCP server and the
board are checked with their real limits in tests/mcp and tests/cli.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from cuedeck.serving import http_guard
from cuedeck.serving.http_guard import HostOriginGuard, guarded_http_protocol

uvicorn = pytest.importorskip("uvicorn")


async def _echo(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Reads the whole body, answers with its length."""
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return
        size += len(message.get("body", b""))
        if not message.get("more_body"):
            break
    body = str(size).encode()
    headers = [(b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    """A guarded echo app on uvicorn with the guarded protocol, in a thread: its port."""
    monkeypatch.setattr(http_guard, "HEADER_TIMEOUT", 0.5)
    monkeypatch.setattr(http_guard, "BODY_TIMEOUT", 0.5)
    monkeypatch.setattr(http_guard, "MAX_BODY_BYTES", 100_000)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)  # connections wait in the backlog until the server runs
    port = listener.getsockname()[1]
    app = HostOriginGuard(_echo, host="127.0.0.1", port=port)
    config = uvicorn.Config(app, log_level="error", http=guarded_http_protocol(), lifespan="off")
    served = uvicorn.Server(config)
    thread = threading.Thread(target=served.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    try:
        yield port
    finally:
        served.should_exit = True
        thread.join(30)
        listener.close()


def _connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    return sock


def _answer(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def _request(port: int, head: str, body: bytes = b"") -> bytes:
    with _connect(port) as sock:
        sock.sendall(head.replace("\r\n\r\n", "\r\nConnection: close\r\n\r\n").encode() + body)
        return _answer(sock)


def test_a_plain_request_is_served(server: int) -> None:
    head = f"POST / HTTP/1.1\r\nHost: 127.0.0.1:{server}\r\nContent-Length: 5\r\n\r\n"
    assert _request(server, head, b"hello").endswith(b"\r\n\r\n5")


@pytest.mark.parametrize(
    "extra",
    ["Origin: http://evil.example\r\nOrigin: http://127.0.0.1:{port}\r\n",
     "Origin: http://127.0.0.1:{port}\r\nOrigin: http://evil.example\r\n",
     "Host: 127.0.0.1:{port}\r\n", "Content-Length: 2\r\n"],
)  # fmt: skip
def test_a_repeated_host_origin_or_length_is_400(server: int, extra: str) -> None:
    head = (
        f"POST / HTTP/1.1\r\nHost: 127.0.0.1:{server}\r\n{extra.format(port=server)}"
        "Content-Length: 1\r\n\r\n"
    )
    # The guard refuses it, or h11 before it (one Host, one length): never served.
    assert _request(server, head, b"x").startswith(b"HTTP/1.1 400 ")


def test_a_declared_body_over_the_cap_is_413(server: int) -> None:
    head = f"POST / HTTP/1.1\r\nHost: 127.0.0.1:{server}\r\nContent-Length: 100001\r\n\r\n"
    assert _request(server, head).startswith(b"HTTP/1.1 413 ")


def test_a_chunked_body_that_never_ends_is_cut_off(server: int) -> None:
    head = f"POST / HTTP/1.1\r\nHost: 127.0.0.1:{server}\r\nTransfer-Encoding: chunked\r\n\r\n"
    chunk = b"%x\r\n%s\r\n" % (65_536, b"x" * 65_536)
    sent = 0
    with _connect(server) as sock:
        sock.sendall(head.encode())
        try:
            while sent < 500_000_000:  # 5,000 times the cap: the server stops us first
                sock.sendall(chunk)
                sent += 65_536
        except (BrokenPipeError, ConnectionResetError):
            pass
        try:
            answer = _answer(sock)
        except ConnectionResetError:
            answer = b"reset"
    assert sent < 50_000_000  # what the kernel's buffers took after the server stopped
    assert answer.startswith((b"HTTP/1.1 413 ", b"reset"))


def test_a_body_that_stops_coming_is_408(server: int) -> None:
    head = f"POST / HTTP/1.1\r\nHost: 127.0.0.1:{server}\r\nTransfer-Encoding: chunked\r\n\r\n"
    with _connect(server) as sock:
        sock.sendall(head.encode() + b"5\r\nhello\r\n")  # and then nothing
        answer = _answer(sock)
    assert answer.startswith(b"HTTP/1.1 408 ")


def test_headers_that_never_end_lose_the_connection(server: int) -> None:
    with _connect(server) as sock:
        sock.sendall(f"POST / HTTP/1.1\r\nHost: 127.0.0.1:{server}\r\n".encode())
        sock.settimeout(0.1)
        closed = False
        for _ in range(300):  # a trickle: one header byte whenever the server is quiet
            try:
                if sock.recv(1024) == b"":
                    closed = True
                    break
            except TimeoutError:
                try:
                    sock.sendall(b"X")
                except (BrokenPipeError, ConnectionResetError):
                    closed = True
                    break
            except ConnectionResetError:
                closed = True
                break
    assert closed
