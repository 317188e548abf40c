"""The board's HTTP server against costly requests, over raw sockets (no browser needed):
two Origin headers, a body that never ends, headers that never end."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cuedeck.serving.http_guard import HEADER_TIMEOUT, MAX_BODY_BYTES
from tests.conftest import endless_chunked_body, raw_http

pytest.importorskip("cuedeck_tasks")
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
CUE = str(Path(sys.executable).with_name("cue"))


@pytest.fixture
def board_port(tmp_path: Path) -> Iterator[int]:
    """`cue board --no-open` on a demo copy: its port."""
    root = tmp_path / "demo"
    shutil.copytree(REPO / "examples" / "demo", root, ignore=shutil.ignore_patterns(".cache"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUEDECK_", "CUE_"))}
    process = subprocess.Popen(
        [CUE, "-C", str(root), "board", "--no-open"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, text=True,
    )  # fmt: skip
    try:
        assert process.stderr is not None
        line = process.stderr.readline()  # "board of ... at http://127.0.0.1:PORT/open/TOKEN"
        found = re.search(r"http://127\.0\.0\.1:(\d+)/open/\S+", line)
        assert found, line + process.stderr.read()
        yield int(found.group(1))
    finally:
        process.terminate()
        process.wait(15)
        if process.stderr is not None:
            process.stderr.close()


def test_two_origins_are_refused(board_port: int) -> None:
    port = board_port
    for origins in (("http://evil.example", f"http://127.0.0.1:{port}"),
                    (f"http://127.0.0.1:{port}", "http://evil.example")):  # fmt: skip
        extra = "".join(f"Origin: {origin}\r\n" for origin in origins)
        answer = raw_http(
            port,
            f"POST /api/cards HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{extra}"
            "Content-Length: 2\r\nConnection: close\r\n\r\n{}".encode(),
        )
        assert answer.startswith(b"HTTP/1.1 400 "), answer[:200]


def test_a_body_that_never_ends_is_cut_off(board_port: int) -> None:
    sent, answer = endless_chunked_body(board_port, "/api/cards")
    assert sent < MAX_BODY_BYTES * 8  # the cap, and what the kernel's buffers took
    assert answer.startswith((b"HTTP/1.1 4", b"reset")), answer[:200]


def test_headers_that_never_end_lose_the_connection(board_port: int) -> None:
    with socket.create_connection(("127.0.0.1", board_port), timeout=HEADER_TIMEOUT * 6) as sock:
        sock.sendall(f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{board_port}\r\n".encode())
        assert sock.recv(1024) == b""  # waits for the server: it closes at the deadline
