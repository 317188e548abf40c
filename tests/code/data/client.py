"""A small HTTP client: sessions, retries and a transport."""

from __future__ import annotations

import json
from dataclasses import dataclass

from .transport import HTTPTransport


@dataclass
class Response:
    """What a request returns."""

    status: int
    body: bytes

    def json(self) -> object:
        return json.loads(self.body)


class Client:
    """Sends requests through a transport, retrying on failure."""

    retries = 3

    def __init__(self, transport: HTTPTransport | None = None) -> None:
        self.transport = transport or HTTPTransport()

    @property
    def closed(self) -> bool:
        return self.transport.closed

    def send(self, method: str, url: str, *, body: bytes = b"") -> Response:
        """Send one request; retry up to ``retries`` times."""
        for _ in range(self.retries):
            status, data = self.transport.request(method, url, body)
            if status < 500:
                return Response(status, data)
        return Response(status, data)


def handle_request(client: Client, url: str) -> int:
    def inner() -> int:
        return client.send("GET", url).status

    return inner()
