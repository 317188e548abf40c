"""Several nodes serve one team on one PostgreSQL: separate server processes, each with a
home and caches of its own, share members, rate limits and confirmation tokens; a member
removed through one is refused by all; a PostgreSQL restart is a clear error, then calls
work again without restarting a node."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx2
import pytest
import yaml

from cuedeck_mcp.errors import RateLimited
from cuedeck_team.store import open_store
from tests.mcp.conftest import environment, free_port, wait_until_listening
from tests.team.conftest import BACKEND, UNLIMITED, call, session, team_server

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

LIMIT = 5


def node_home(root: Path) -> Path:
    """A node's own home: an empty workspace whose config limits list_global_repos."""
    (root / ".cuedeck").mkdir(parents=True)
    (root / ".cuedeck" / "config.toml").write_text(
        UNLIMITED + f"[rate_limits.list_global_repos]\nper_minute = {LIMIT}\nburst = {LIMIT}\n",
        encoding="utf-8",
    )
    return root


@pytest.fixture(scope="module")
def database(postgres: Any) -> str:
    return str(postgres.url())


@pytest.fixture(scope="module")
def nodes(tmp_path_factory: pytest.TempPathFactory, database: str) -> Iterator[list[str]]:
    """Three nodes (uvicorn processes, homes of their own) on one database: their URLs
    (one set for the module: each test signs in members of its own)."""
    folder = tmp_path_factory.mktemp("nodes")
    with ExitStack() as stack:
        urls = []
        for number in (1, 2, 3):
            home = node_home(folder / f"node{number}")
            url, _ = stack.enter_context(team_server(home, CUEDECK_TEAM_DATABASE=database))
            urls.append(url + "/mcp")
        yield urls


def status(url: str, token: str) -> int:
    """The HTTP status of an MCP initialize request carrying ``token``."""
    body = {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "probe", "version": "1"}},
    }  # fmt: skip
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    return httpx2.post(url, json=body, headers=headers, timeout=10).status_code


async def test_a_rate_limit_holds_across_every_node(database: str, nodes: list[str]) -> None:
    from mcp import MCPError

    with member("alice", "read", database) as token:
        outcomes = []
        for number in range(LIMIT + 4):

            async def work(client: Any) -> str:
                try:
                    await client.call_tool("list_global_repos", {})
                except MCPError as refused:
                    return str(refused.error.code)
                return "ok"

            # Round robin over the nodes, as a load balancer would spread the calls.
            outcomes.append(await session(nodes[number % 3], token, work))
    assert outcomes == ["ok"] * LIMIT + [str(RateLimited.code)] * 4


@contextmanager
def member(name: str, role: str, database: str) -> Iterator[str]:
    """A member added straight into the team's database; their token."""
    store = open_store(Path("unused"), database)  # a home matters to the embedded store only
    try:
        yield store.add_member(name, role)
    finally:
        store.close()


async def test_a_removed_member_is_refused_by_every_node_within_a_second(
    database: str, nodes: list[str]
) -> None:
    store = open_store(Path("unused"), database)
    try:
        token = store.add_member("bob", "write")
        assert [status(url, token) for url in nodes] == [200, 200, 200]
        store.remove_member("bob")
        removed = time.monotonic()
        refused_after = []
        for url in nodes:
            code = status(url, token)
            refused_after.append(time.monotonic() - removed)
            assert code == 401
        assert max(refused_after) < 1.0
    finally:
        store.close()


async def test_a_member_signs_in_on_every_node(database: str, nodes: list[str]) -> None:
    async def who(client: Any) -> Any:
        return await call(client, "whoami", {})

    with member("carol", "read", database) as token:
        answers = [await session(url, token, who) for url in nodes]
    assert [(a["name"], a["role"]) for a in answers] == [("carol", "read")] * 3


async def test_a_postgres_restart_is_a_clear_error_then_calls_work_again(
    postgres: Any, database: str, nodes: list[str]
) -> None:
    with member("erin", "read", database) as token:
        assert [status(url, token) for url in nodes] == [200, 200, 200]
        postgres.stop()
        try:
            down = httpx2.post(nodes[0], json={}, headers={"Authorization": f"Bearer {token}"},
                               timeout=30)  # fmt: skip
            unready = httpx2.get(nodes[1].removesuffix("/mcp") + "/readyz", timeout=30)
        finally:
            postgres.start()
        assert down.status_code == 503
        assert down.json()["code"] == 1408
        assert "cannot be reached" in down.json()["error_description"]
        assert unready.status_code == 503 and "store" in unready.text
        # No node restarts: each pool reconnects by itself, its retry a moment after the
        # database is back (no event says when, so the nodes are asked again meanwhile).
        deadline = time.monotonic() + 30
        while (codes := [status(url, token) for url in nodes]) != [200, 200, 200]:
            assert set(codes) <= {200, 503} and time.monotonic() < deadline, codes
            time.sleep(0.2)


async def test_nodes_on_one_shared_home_share_activations_and_confirmations(
    tmp_path: Path, postgres: Any, upstream: Callable[..., Path]
) -> None:
    """Working copies on storage every node mounts (here: one folder); the registry,
    members, confirmations and the audit trail in PostgreSQL; shared repositories' clones
    in each node's own cache, caught up with the registered head."""
    import psycopg

    from tests.team.conftest import push_from

    database = postgres.url()
    home = node_home(tmp_path / "mounted" / "home")
    bare = upstream("backend", BACKEND)
    caches = [tmp_path / f"node{n}-cache" for n in (1, 2, 3, 4)]
    with (
        member("root", "admin", database) as admin,
        member("alice", "write", database) as alice,
        ExitStack() as stack,
    ):
        one, two, three = (
            stack.enter_context(
                team_server(home, CUEDECK_TEAM_DATABASE=database, CUEDECK_TEAM_NODE_CACHE=str(c))
            )[0]
            + "/mcp"
            for c in caches[:3]
        )

        async def register(client: Any) -> Any:
            arguments = {"repo_url": str(bare), "alias": "backend", "embed": False}
            return await call(client, "add_golden_repo", arguments)

        first = (await session(one, admin, register))["head"]
        assert clones(caches[0]) == {first}  # node 1's own clone; no other node made one yet
        assert clones(caches[1]) == clones(caches[2]) == set()
        assert not (home / ".cuedeck" / "team" / "shared").exists()

        async def activate(client: Any) -> Any:
            arguments = {"golden_repo_alias": "backend-global", "user_alias": "backend"}
            return await call(client, "activate_repository", arguments)

        await session(one, alice, activate)
        assert (home / ".cuedeck" / "team" / "users" / "alice" / "backend" / ".git").is_dir()

        async def read(client: Any, alias: str = "backend", query: str = "refresh token") -> Any:
            arguments = {"repository_alias": alias, "query": query}
            return await call(client, "read_context", arguments)

        found = await session(two, alice, read)  # the copy node 1 made, through node 2
        assert {"docs/auth.md", "src/app.py"} & {hit["path"] for hit in found["results"]}

        # Refreshed through node 1; node 3 serves the new head at its next call.
        second = push_from(bare, tmp_path, {"docs/rotation.md": ROTATION}, "rotation")

        async def refresh(client: Any) -> Any:
            arguments = {"repository_alias": "backend-global", "embed": False}
            return await call(client, "refresh_golden_repo", arguments)

        refreshed = await session(one, admin, refresh)
        assert (refreshed["previous_head"], refreshed["head"]) == (first, second)
        found = await session(three, alice, lambda c: read(c, "backend-global", "quarterly"))
        assert "docs/rotation.md" in {hit["path"] for hit in found["results"]}
        assert clones(caches[2]) == {second}

        # A node started late catches up before it says it is ready, then serves at once.
        late = stack.enter_context(
            team_server(
                home, CUEDECK_TEAM_DATABASE=database, CUEDECK_TEAM_NODE_CACHE=str(caches[3])
            )
        )[0]
        deadline = time.monotonic() + 120
        while (ready := httpx2.get(late + "/readyz", timeout=10)).status_code != 200:
            assert ready.status_code == 503 and time.monotonic() < deadline, ready.text
            assert "catching up" in ready.text
            time.sleep(0.2)
        assert clones(caches[3]) == {second}  # before any call
        found = await session(
            late + "/mcp", alice, lambda c: read(c, "backend-global", "quarterly")
        )
        assert "docs/rotation.md" in {hit["path"] for hit in found["results"]}

        async def remove(client: Any, token: str | None = None) -> Any:
            arguments = {"repository_alias": "backend-global", "confirmation_token": token}
            return await call(client, "remove_golden_repo", arguments)

        asked = await session(one, admin, remove)
        assert asked["requires_confirmation"] is True
        with psycopg.connect(database) as conn:
            kept = conn.execute("SELECT count(*) FROM confirmations").fetchone()
        assert kept == (1,)
        assert not (home / ".cuedeck" / ".cache" / "confirmations.json").exists()
        token = asked["confirmation_token"]
        removed = await session(three, admin, lambda client: remove(client, token))
        assert removed.get("requires_confirmation") is not True
        assert clones(caches[2]) == set()  # the node that removed it deleted its clone

    store = open_store(Path("unused"), database)
    try:
        written = [(e.member, e.tool, e.repository, e.outcome) for e in reversed(store.audit())]
    finally:
        store.close()
    assert written == [
        ("root", "add_golden_repo", "backend-global", "ok"),
        ("alice", "activate_repository", "backend", "ok"),
        ("root", "refresh_golden_repo", "backend-global", "ok"),
        ("root", "remove_golden_repo", "backend-global", "ok"),
        ("root", "remove_golden_repo", "backend-global", "ok"),
    ]


ROTATION = "# Rotation\n\nKeys are rotated quarterly by the platform team.\n"


def clones(cache: Path) -> set[str]:
    """The heads of the shared repositories' clones a node keeps in ``cache``."""
    return {
        path.read_text(encoding="utf-8").strip() for path in (cache / "shared").glob("*/*.head")
    }


#: How long the clients of the chaos test run, and how many there are.
CHAOS_SECONDS = 60.0
CHAOS_CLIENTS = 30


class Node:
    """A node as a process on a fixed port, so that it can be killed and started again at
    the same address (as a load balancer knows it)."""

    def __init__(self, home: Path, database: str) -> None:
        self.home = home
        self.database = database
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.start()

    def start(self) -> None:
        errors = self.home.parent / f"node-{self.port}.err"
        argv = [sys.executable, "-m", "uvicorn", "cuedeck_mcp.asgi:app", "--port",
                str(self.port), "--log-level", "warning", "--no-access-log"]  # fmt: skip
        with errors.open("ab") as sink:
            self.process = subprocess.Popen(
                argv, stdout=subprocess.DEVNULL, stderr=sink,
                env=environment(CUEDECK_MCP_TEAM=str(self.home), CUEDECK_MCP_PORT=str(self.port),
                                CUEDECK_TEAM_DATABASE=self.database),
            )  # fmt: skip
        wait_until_listening(self.port, self.process, errors.read_text, timeout=60)

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


def _reply(text: str) -> dict[str, Any]:
    """The JSON-RPC message of a reply (plain JSON or one server-sent event)."""
    for line in text.splitlines():
        if line.startswith("data:"):
            return dict(json.loads(line[5:]))
    return dict(json.loads(text))


async def test_thirty_clients_lose_no_acknowledged_write_when_a_node_is_killed(
    tmp_path: Path, postgres: Any, upstream: Callable[..., Path]
) -> None:
    import anyio

    database = postgres.url()
    home = node_home(tmp_path / "mounted" / "home")
    config = home / ".cuedeck" / "config.toml"
    config.write_text(
        config.read_text() + "[rate_limits.create_task]\nper_minute = 0\n"
        '\n[mcp]\ntools = ["all"]\n',
        encoding="utf-8",
    )
    bare = upstream("backend", BACKEND)
    nodes: list[Node] = []
    with member("root", "admin", database) as admin, member("ann", "write", database) as ann:
        try:
            nodes.extend(Node(home, database) for _ in range(3))

            async def prepare(client: Any, token: str) -> None:
                await call(
                    client,
                    "add_golden_repo",
                    {"repo_url": str(bare), "alias": "backend", "embed": False},
                )

            await session(nodes[0].url, admin, lambda c: prepare(c, admin))
            await session(
                nodes[1].url,
                ann,
                lambda c: call(
                    c,
                    "activate_repository",
                    {"golden_repo_alias": "backend-global", "user_alias": "backend"},
                ),
            )

            acknowledged: dict[str, str] = {}  # card path -> title
            answered_after_kill = [0] * CHAOS_CLIENTS
            failures = [0] * CHAOS_CLIENTS
            killed_at: list[float] = []
            headers = {
                "accept": "application/json, text/event-stream",
                "mcp-protocol-version": "2025-06-18",
                "authorization": f"Bearer {ann}",
            }
            deadline = time.monotonic() + CHAOS_SECONDS

            async def client(number: int, http: httpx2.AsyncClient) -> None:
                calls = 0
                while time.monotonic() < deadline:
                    calls += 1
                    title = f"client {number} call {calls}"
                    name, arguments = (
                        ("create_task", {"title": title})
                        if calls % 2
                        else ("list_tasks", {"status": "archived"})
                    )
                    body = {
                        "jsonrpc": "2.0",
                        "id": calls,
                        "method": "tools/call",
                        "params": {
                            "name": name,
                            "arguments": {**arguments, "repository_alias": "backend"},
                        },
                    }
                    node = nodes[(number + failures[number]) % 3]  # the balancer's next choice
                    try:
                        reply = await http.post(node.url, json=body, headers=headers)
                    except httpx2.HTTPError:
                        failures[number] += 1  # a node down: the next call goes elsewhere
                        continue
                    if reply.status_code >= 500:
                        failures[number] += 1
                        continue
                    message = _reply(reply.text)
                    assert "result" in message, message  # no call refused
                    result = message["result"]
                    assert not result["isError"], result
                    if name == "create_task":
                        acknowledged[result["structuredContent"]["path"]] = title
                    if killed_at:
                        answered_after_kill[number] += 1

            async def chaos() -> None:
                await anyio.sleep(CHAOS_SECONDS / 3)
                nodes[2].kill()
                killed_at.append(time.monotonic())
                await anyio.sleep(CHAOS_SECONDS / 3)
                await anyio.to_thread.run_sync(nodes[2].start)  # the same address again

            limits = httpx2.Limits(max_connections=CHAOS_CLIENTS)
            async with (
                httpx2.AsyncClient(timeout=120, limits=limits) as http,
                anyio.create_task_group() as group,
            ):
                group.start_soon(chaos)
                for number in range(CHAOS_CLIENTS):
                    group.start_soon(client, number, http)

            copy = home / ".cuedeck" / "team" / "users" / "ann" / "backend"
            cards = sorted((copy / ".cuedeck" / "cards").glob("*.md"))
            titles = {}
            for card in cards:  # every card whole: frontmatter that parses, a title
                text = card.read_text(encoding="utf-8")
                assert text.startswith("---\n") and "\n---\n" in text[4:], card
                front = yaml.safe_load(text[4 : text.index("\n---\n", 4)])
                titles[card.relative_to(copy).as_posix()] = front["title"]
            lost = {
                path: title for path, title in acknowledged.items() if titles.get(path) != title
            }
            assert not lost, f"{len(lost)} acknowledged writes lost"
            assert len(acknowledged) > CHAOS_CLIENTS  # the run did write
            assert all(answered_after_kill), answered_after_kill
            for node in nodes:  # the restarted node serves again
                assert status(node.url, ann) == 200
        finally:
            for node in nodes:
                node.stop()
