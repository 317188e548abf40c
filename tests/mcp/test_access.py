"""Nobody gets more than their role: a writer cannot reach the files that grant roles, and
a broken or emptied ``access.toml`` locks the HTTP server instead of opening it."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import MCPError
from mcp.client import Client

from tests.mcp.conftest import add_token, bearer_session, http_server

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"},
    },
}
HEADERS = {"Accept": "application/json, text/event-stream"}


async def _status(url: str, token: str | None) -> int:
    headers = {**HEADERS, **({"Authorization": f"Bearer {token}"} if token else {})}
    async with httpx2.AsyncClient() as http:
        return (await http.post(url, json=INITIALIZE, headers=headers)).status_code


async def test_a_write_token_cannot_make_itself_admin(demo: Path) -> None:
    writer = add_token(demo, "writer", "write")
    forged = "cdk_forged-admin-token"
    access = demo / ".cuedeck" / "access.toml"
    config = demo / ".cuedeck" / "config.toml"
    (demo / "docs" / "deck").symlink_to("../.cuedeck", target_is_directory=True)
    before = access.read_bytes(), config.read_bytes()
    grant = (
        f'\n[[token]]\nname = "evil"\nrole = "admin"\n'
        f'sha256 = "{hashlib.sha256(forged.encode()).hexdigest()}"\n'
    )

    async def escalate(client: Client) -> list[Any]:
        codes = []
        for path, old, new in (
            (".cuedeck/access.toml", "[[token]]", grant + "[[token]]"),
            ("docs/deck/access.toml", "[[token]]", grant + "[[token]]"),
            (".cuedeck/config.toml", "[", "[masking]\nenabled = false\n\n["),
            ("docs/deck/config.toml", "[", "[files]\ndeny = []\n\n["),
        ):
            for tool, arguments in (
                ("create_file", {"file_path": path, "content": grant}),
                ("edit_file", {"file_path": path, "old_string": old, "new_string": new,
                               "content_hash": "0" * 64}),
            ):  # fmt: skip
                with pytest.raises(MCPError) as refused:
                    await client.call_tool(tool, arguments)
                codes.append((tool, path, refused.value.error.code))
        return codes

    with http_server(demo, "--tools", "all") as (url, _port):
        codes = await bearer_session(url, writer, escalate)
        assert await _status(url, forged) == 401
    assert {code for _tool, _path, code in codes} == {1013}, codes
    assert (access.read_bytes(), config.read_bytes()) == before


async def test_a_broken_access_file_refuses_every_bearer_request(
    demo: Path, tmp_path: Path
) -> None:
    admin = add_token(demo, "admin", "admin")
    access = demo / ".cuedeck" / "access.toml"
    with http_server(demo) as (url, _port):
        assert await _status(url, admin) == 200
        access.write_text(access.read_text() + "\n[[token\n")  # a typo, or an attack
        assert await _status(url, admin) == 401
        assert await _status(url, None) == 401
        assert await _status(url, "junk") == 401
        access.write_text("")  # emptied: still locked, never open
        assert await _status(url, admin) == 401
        assert await _status(url, None) == 401
    # Restarted with the empty file: tokens are still required, none is accepted.
    with http_server(demo) as (url, _port):
        assert await _status(url, None) == 401
        assert await _status(url, admin) == 401
    access.write_text("[[token\n")
    with http_server(demo) as (url, _port):
        assert await _status(url, None) == 401
        assert await _status(url, admin) == 401
    access.unlink()  # only removing the file serves loopback without tokens
    with http_server(demo) as (url, _port):
        assert await _status(url, None) == 200


async def test_the_broken_file_is_logged_with_its_code(demo: Path, tmp_path: Path) -> None:
    from tests.mcp.test_roles import _serving

    admin = add_token(demo, "admin", "admin")
    (demo / ".cuedeck" / "access.toml").write_text("[[token\nname = 'x'\n")
    log = tmp_path / "server.log"
    with _serving(demo, log) as base:
        assert await _status(f"{base}/mcp", admin) == 401
    text = log.read_text()
    assert "error[1015]" in text and "access.toml" in text
    assert admin not in text
