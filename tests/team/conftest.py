"""Fixtures of the team tests: real upstream repositories (bare, reached by path or
``file://``), a team home, and a team server under uvicorn for the HTTP tests."""

from __future__ import annotations

import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

pytest.importorskip("cuedeck_git")

from cuedeck_team.home import Team
from tests.mcp.conftest import environment, free_port, wait_until_listening

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping

#: Calls of the limited tools never run out in these tests, but where a test says so.
UNLIMITED = "".join(
    f"[rate_limits.{tool}]\nper_minute = 0\n" for tool in ("read_doc", "read_context", "list_tasks")
)


def git(root: Path, *args: str) -> str:
    """Run git in ``root`` as a person would; its output."""
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


@pytest.fixture(autouse=True)
def _git_identity(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A private global git config with an identity (servers inherit it)."""
    config = tmp_path / "gitconfig"
    config.write_text(
        "[user]\n\tname = Ada Agent\n\temail = ada@example.org\n[init]\n\tdefaultBranch = main\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


@pytest.fixture
def upstream(tmp_path: Path) -> Callable[..., Path]:
    """``make(name, files, branches={})``: a bare repository holding ``files`` on main and
    each branch's files on top of main's; its path."""

    def make(
        name: str, files: Mapping[str, str], branches: Mapping[str, Mapping[str, str]] = {}
    ) -> Path:
        work = tmp_path / "upstream-work" / name
        work.mkdir(parents=True)
        git(work, "init", "--quiet", "-b", "main")
        write(work, files)
        git(work, "add", "--all")
        git(work, "commit", "--quiet", "-m", f"{name}: first")
        for branch, extra in branches.items():
            git(work, "checkout", "--quiet", "-b", branch, "main")
            write(work, extra)
            git(work, "add", "--all")
            git(work, "commit", "--quiet", "-m", f"{name}: {branch}")
        git(work, "checkout", "--quiet", "main")
        bare = tmp_path / "upstreams" / f"{name}.git"
        git(tmp_path, "clone", "--quiet", "--bare", str(work), str(bare))
        return bare

    return make


def write(root: Path, files: Mapping[str, str]) -> None:
    """Write ``files`` (relative path: text) under ``root``."""
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")


def push_from(bare: Path, tmp_path: Path, files: Mapping[str, str], message: str) -> str:
    """Commit ``files`` to ``bare``'s main from a clone of someone else; the new commit."""
    other = tmp_path / f"someone-else-{message.replace(' ', '-')}"
    git(tmp_path, "clone", "--quiet", str(bare), str(other))
    write(other, files)
    git(other, "add", "--all")
    git(other, "commit", "--quiet", "-m", message)
    git(other, "push", "--quiet", "origin", "main")
    return git(other, "rev-parse", "HEAD").strip()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A team's home: an empty CueDeck workspace."""
    root = tmp_path / "home"
    (root / ".cuedeck").mkdir(parents=True)
    (root / ".cuedeck" / "config.toml").write_text(UNLIMITED, encoding="utf-8")
    return root


@pytest.fixture
def team(home: Path) -> Team:
    """The team of ``home``."""
    return Team(home)


BACKEND = {
    "README.md": "# Backend\n\nThe payments backend. Tokens are rotated daily.\n",
    "docs/auth.md": "# Auth\n\n## Login\n\nLogin checks the password with bcrypt and issues "
    "a refresh token.\n\n## Sessions\n\nSessions live in Postgres.\n",
    "src/app.py": "def login(user):\n    return issue_token(user)\n",
}
FRONTEND = {
    "README.md": "# Frontend\n\nThe web client.\n",
    "docs/login-page.md": "# Login page\n\nThe login form posts the password; bcrypt is "
    "server-side.\n",
}


@contextmanager
def team_server(home: Path, *, workers: int = 1, **env: str) -> Iterator[tuple[str, Path]]:
    """``uvicorn cuedeck_mcp.asgi:app`` serving the team at ``home`` with ``workers``
    processes, until the block ends: (base URL, access log file)."""
    port = free_port()
    log = home.parent / f"access-{port}.log"
    argv = [
        sys.executable, "-m", "uvicorn", "cuedeck_mcp.asgi:app", "--workers", str(workers),
        "--port", str(port), "--log-level", "warning", "--no-access-log",
    ]  # fmt: skip
    errors = (home.parent / f"server-{port}.err").open("wb")
    process = subprocess.Popen(
        argv,
        stdout=subprocess.DEVNULL,
        stderr=errors,
        env=environment(
            CUEDECK_MCP_TEAM=str(home),
            CUEDECK_MCP_PORT=str(port),
            CUEDECK_ACCESS_LOG=str(log),
            **env,
        ),
    )
    try:
        why = lambda: (home.parent / f"server-{port}.err").read_text()  # noqa: E731
        wait_until_listening(port, process, why, timeout=60)
        yield f"http://127.0.0.1:{port}", log
    finally:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        errors.close()


async def session(url: str, token: str | None, work: Any) -> Any:
    """``await work(client)`` with the official MCP client over HTTP, sending ``token``,
    patient with long calls (registering a repository clones and indexes it)."""
    import httpx2
    from mcp.client import Client
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(300.0)) as http,
        Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
    ):
        return await work(client)


async def call(client: Any, tool: str, arguments: dict[str, Any]) -> Any:
    """The structured reply of a tool call (lists unwrapped)."""
    result = await client.call_tool(tool, arguments)
    content = result.structured_content
    if isinstance(content, dict) and set(content) == {"result"}:
        return content["result"]
    return content


async def refusal(client: Any, tool: str, arguments: dict[str, Any]) -> Any:
    """The JSON-RPC error a tool call is refused with."""
    from mcp import MCPError

    with pytest.raises(MCPError) as caught:
        await client.call_tool(tool, arguments)
    return caught.value.error


@pytest.fixture(scope="session")
def postgres() -> Iterator[Any]:
    """The session's PostgreSQL cluster (tests/team/postgres.py)."""
    from tests.team.postgres import start_cluster

    cluster = start_cluster()
    try:
        yield cluster
    finally:
        cluster.remove()


@pytest.fixture(params=["embedded", "postgresql"])
def store_kind(request: pytest.FixtureRequest) -> str:
    """Each store a team may keep its shared state in."""
    return str(request.param)


@pytest.fixture
def team_database(store_kind: str, request: pytest.FixtureRequest) -> str:
    """The database URL for ``store_kind`` (empty: the embedded store)."""
    if store_kind == "embedded":
        return ""
    return str(request.getfixturevalue("postgres").url())
