"""Lines the stdio transport cannot decode get a JSON-RPC error, never silence."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from cuedeck_mcp.stdio import INVALID_REQUEST, PARSE_ERROR, rejection
from tests.mcp.conftest import CUE, environment

pytestmark = pytest.mark.slow

INITIALIZE = (
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
    '"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
)
INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}'
LONE_SURROGATE = (
    '{"jsonrpc":"2.0","id":2,"method":"tools/call",'
    '"params":{"name":"read_doc","arguments":{"path":"\\ud800.md"}}}'
)
DEEP = '{"jsonrpc":"2.0","id":3,"method":"ping","params":' + "[" * 5000 + "]" * 5000 + "}"
NOT_JSON = "this is not json"
#: Nested 200 deep in a tool's arguments: CueDeck's 1004, like any argument too deep.
DEEP_ARGUMENTS = (
    '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"list_tasks",'
    '"arguments":{"status":' + "[" * 200 + "]" * 200 + "}}}"
)
NOT_A_MESSAGE = '{"id": 5, "hello": "world"}'
PING = '{"jsonrpc":"2.0","id":6,"method":"ping"}'


def test_every_undecodable_line_is_answered_and_the_session_goes_on(demo: Path) -> None:
    lines = [INITIALIZE, INITIALIZED, LONE_SURROGATE, DEEP, NOT_JSON, NOT_A_MESSAGE,
             '{"jsonrpc":"2.0","id":1.5,"method":"ping"}', DEEP_ARGUMENTS, PING]  # fmt: skip
    done = subprocess.run(
        [CUE, "-C", str(demo), "mcp"],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        env=environment(),
        check=False,
    )
    replies = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    errors = [(reply["id"], reply["error"]["code"]) for reply in replies if "error" in reply]
    assert errors == [
        (2, PARSE_ERROR),  # the id is read back, so the client's request is answered
        (None, PARSE_ERROR),  # nested too deep to read an id
        (None, PARSE_ERROR),
        (5, INVALID_REQUEST),
        (None, INVALID_REQUEST),  # an id that is no string or integer: answered, not dropped
        (8, 1004),
    ]
    assert {"jsonrpc": "2.0", "id": 6, "result": {}} in replies
    assert [reply["id"] for reply in replies] == [1, 2, None, None, 5, None, 8, 6]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (PING, None),
        (INITIALIZED, None),
        ('{"jsonrpc":"2.0","id":true,"method":"ping","params":{"x":"\\udfff"}}', (None, -32600)),
        ('{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', (None, -32600)),
        ('{"jsonrpc":"2.0","id":1.5,"method":"ping"}', (None, -32600)),
        ('{"jsonrpc":"2.0","id":null,"method":"ping"}', (None, -32600)),
        ('{"jsonrpc":"2.0","id":true,"method":"ping"}', (None, -32600)),
        ('{"jsonrpc":"2.0","id":[1],"method":"ping"}', (None, -32600)),
        (DEEP_ARGUMENTS, (8, 1004)),
        ('{"jsonrpc":"2.0","id":"a","method":7}', ("a", -32600)),
        ("[1, 2", (None, -32700)),
    ],
)
def test_rejection(line: str, expected: tuple[object, int] | None) -> None:
    reply = rejection(line)
    if expected is None:
        assert reply is None
    else:
        decoded = json.loads(reply or "")
        assert (decoded["id"], decoded["error"]["code"]) == expected
