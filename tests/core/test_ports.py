"""Claiming a server port: a taken one is error 1050 with a free port to use instead."""

from __future__ import annotations

import socket

import pytest

from cuedeck.errors import PortInUse
from cuedeck.serving.ports import check_free, listen


def test_a_taken_port_names_itself_and_a_free_one() -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        with pytest.raises(PortInUse) as caught:
            listen("127.0.0.1", port)
        error = caught.value
        assert error.code == 1050
        assert error.message == (
            f"port {port} on 127.0.0.1 is taken: another program is listening on 127.0.0.1:{port}"
        )
        assert error.data["port"] == port
        assert error.help is not None
        suggested = int(error.help.rsplit("--port ", 1)[1])
        assert suggested > port
        with pytest.raises(PortInUse):
            check_free("127.0.0.1", port)
    with listen("127.0.0.1", suggested) as served:  # the suggestion was free
        assert served.getsockname()[1] == suggested


def test_port_zero_listens_on_a_free_port() -> None:
    with listen("127.0.0.1", 0) as served:
        assert served.getsockname()[1] > 0
