"""Several workspaces behind one server, and one workspace behind several workers."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import MCPError
from mcp.client import Client

from tests.mcp.conftest import (
    CUE,
    DEMO,
    add_token,
    bearer_session,
    environment,
    free_port,
    wait_until_listening,
)

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

UNLIMITED = "".join(
    f"[rate_limits.{tool}]\nper_minute = 0\n" for tool in ("update_task", "list_tasks", "read_doc")
)


def _copy_demo(into: Path, card: str, title: str) -> Path:
    """A demo copy holding one extra card of its own."""
    shutil.copytree(DEMO, into, ignore=shutil.ignore_patterns(".cache", "state.json"))
    (into / ".cuedeck" / "config.toml").write_text(UNLIMITED, encoding="utf-8")
    (into / ".cuedeck" / "cards" / f"{card}.md").write_text(
        f"---\nid: {card}\ntitle: {title}\nstatus: todo\npriority: low\n---\n# {title}\n",
        encoding="utf-8",
    )
    return into


@contextmanager
def _running(argv: list[str], port: int, **env: str) -> Iterator[str]:
    process = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=environment(**env)
    )
    try:
        wait_until_listening(
            port,
            process,
            lambda: process.stderr.read().decode(),
            timeout=60,  # type: ignore[union-attr]
        )
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        if process.stderr is not None:
            process.stderr.close()


async def _card_ids(client: Client) -> set[str]:
    reply = (await client.call_tool("list_tasks", {})).structured_content
    assert reply is not None
    return {card["id"] for card in reply["result"]}


async def test_three_workspaces_in_one_process_never_see_each_other(tmp_path: Path) -> None:
    roots = {
        name: _copy_demo(tmp_path / name, f"{name}001", f"Only in {name}")
        for name in ("api", "web", "ops")
    }
    (roots["web"] / ".cuedeck" / "docs" / "web-only.md").write_text("# Web only\n")
    port = free_port()
    argv = [CUE, "mcp", "--transport", "http", "--port", str(port)]
    for name, root in roots.items():
        argv += ["--workspace", f"{name}={root}"]
    with _running(argv, port) as base:
        async with httpx2.AsyncClient() as http:
            listing = (await http.get(f"{base}/mcp")).json()
            missing = await http.get(f"{base}/mcp/nope")
        cards = {
            name: await bearer_session(f"{base}/mcp/{name}", None, _card_ids) for name in roots
        }

        async def read_web_doc(client: Client) -> Any:
            try:
                return await client.call_tool("read_doc", {"path": "docs/web-only.md"})
            except MCPError as error:
                return error.error

        from_web = await bearer_session(f"{base}/mcp/web", None, read_web_doc)
        from_api = await bearer_session(f"{base}/mcp/api", None, read_web_doc)

        async def whoami(client: Client) -> Any:
            return (await client.call_tool("whoami", {})).structured_content

        who = await bearer_session(f"{base}/mcp/ops", None, whoami)
    assert listing == {
        "workspaces": [{"name": n, "endpoint": f"/mcp/{n}"} for n in ("api", "ops", "web")]
    }
    assert missing.status_code == 404
    for name in roots:
        own = f"{name}001"
        assert own in cards[name]
        assert not (cards[name] - {own}) & {f"{other}001" for other in roots}
    assert from_web.structured_content["path"] == ".cuedeck/docs/web-only.md"
    assert from_api.code == 1001
    assert who["workspace"] == "ops"


async def test_two_workers_lose_no_update_and_serve_fresh_results(tmp_path: Path) -> None:
    root = _copy_demo(tmp_path / "shared", "zz0001", "Shared card")
    port = free_port()
    argv = [
        sys.executable, "-m", "uvicorn", "cuedeck_mcp.asgi:app",
        "--workers", "2", "--port", str(port), "--log-level", "warning",
    ]  # fmt: skip
    with _running(
        argv, port, CUEDECK_MCP_WORKSPACES=f"team={root}", CUEDECK_MCP_PORT=str(port)
    ) as base:
        url = f"{base}/mcp/team"

        async def add_notes(client_number: int) -> None:
            async def work(client: Client) -> None:
                for n in range(4):
                    note = f"note c{client_number:02d}-{n}"
                    await client.call_tool(
                        "update_task", {"id": "zz0001", "updates": {"notes": note}}
                    )

            await bearer_session(url, None, work)

        async with anyio.create_task_group() as group:
            for number in range(16):
                group.start_soon(add_notes, number)

        stale = []
        for n, priority in enumerate(["high", "low", "critical", "medium"] * 3):

            async def change(client: Client, priority: str = priority) -> None:
                await client.call_tool(
                    "update_task", {"id": "zz0001", "updates": {"priority": priority}}
                )

            async def read(client: Client) -> Any:
                reply = (await client.call_tool("list_tasks", {})).structured_content
                return next(c["priority"] for c in reply["result"] if c["id"] == "zz0001")

            await bearer_session(url, None, change)
            seen = await bearer_session(url, None, read)
            if seen != priority:
                stale.append((n, priority, seen))
    card = (root / ".cuedeck" / "cards" / "zz0001.md").read_text(encoding="utf-8")
    written = [f"note c{c:02d}-{n}" for c in range(16) for n in range(4)]
    assert [note for note in written if note not in card] == []  # 64 of 64 kept
    assert stale == []


async def test_the_team_set_up_of_docs_mcp_md(tmp_path: Path) -> None:
    """docs/mcp.md's team: a config file for `uvicorn cuedeck_mcp.asgi:app`, tokens per
    workspace with their roles, the file's tool profile for every workspace."""
    api = _copy_demo(tmp_path / "api", "api001", "Only in api")
    web = _copy_demo(tmp_path / "web", "web001", "Only in web")
    alice = add_token(api, "alice", "admin")
    ci = add_token(web, "ci", "read")
    port = free_port()
    config = tmp_path / "mcp.toml"
    config.write_text(
        f'host = "127.0.0.1"\nport = {port}\ntools = "core,git"\n\n'
        f'[workspaces]\napi = "{api}"\nweb = "{web}"\n',
        encoding="utf-8",
    )
    argv = [
        sys.executable, "-m", "uvicorn", "cuedeck_mcp.asgi:app",
        "--workers", "2", "--port", str(port), "--log-level", "warning",
    ]  # fmt: skip

    async def names_and_who(client: Client) -> Any:
        names = {tool.name for tool in (await client.list_tools()).tools}
        return names, (await client.call_tool("whoami", {})).structured_content

    async def read_tries_to_write(client: Client) -> Any:
        with pytest.raises(MCPError) as refused:
            await client.call_tool("update_task", {"id": "web001", "updates": {"notes": "x"}})
        return await _card_ids(client), refused.value.error

    with _running(argv, port, CUEDECK_MCP_CONFIG=str(config)) as base:
        api_names, api_who = await bearer_session(f"{base}/mcp/api", alice, names_and_who)
        web_cards, refused = await bearer_session(f"{base}/mcp/web", ci, read_tries_to_write)
        async with httpx2.AsyncClient() as http:
            ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
            wrong_workspace = await http.post(
                f"{base}/mcp/web", json=ping, headers={"Authorization": f"Bearer {alice}"}
            )
            anonymous = await http.post(f"{base}/mcp/api", json=ping)
            listing = (await http.get(f"{base}/mcp")).json()
    assert listing == {"workspaces": [{"name": n, "endpoint": f"/mcp/{n}"} for n in ("api", "web")]}
    assert api_who["name"] == "alice" and api_who["role"] == "admin"
    assert api_who["workspace"] == "api"
    # The file's profile: core (with the memory essentials) and git, no file tools.
    assert {"git_status", "git_reset", "context_capture", "update_task"} <= api_names
    assert "edit_file" not in api_names and "context_gc_prune" not in api_names
    assert "web001" in web_cards and "api001" not in web_cards
    assert refused.code == 1012 and refused.data["required_role"] == "write"
    assert wrong_workspace.status_code == 401  # a token is good for its own workspace only
    assert anonymous.status_code == 401
