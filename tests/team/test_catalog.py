"""The catalog of shared repositories (``cidx-meta-global``): written from the registry on
this node, again whenever the registry changed, read like any shared repository."""

from __future__ import annotations

from importlib.util import find_spec
from typing import TYPE_CHECKING, Any

import pytest

from cuedeck.errors import InvalidInput
from cuedeck_team import catalog, shared
from tests.mcp.conftest import add_token
from tests.team.conftest import BACKEND, FRONTEND, call, refusal, session, team_server

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from mcp.client import Client

    from cuedeck_team.home import Team

#: The indexes a shared repository reports with the plugins installed here (tox runs the
#: team's tests with neither search nor code).
REPORTED = [
    name
    for name, module in (
        ("documents", "cuedeck"),
        ("code graph", "cuedeck_code"),
        ("search", "cuedeck_search"),
    )
    if find_spec(module)
]

CODE = {
    **BACKEND,
    "src/tokens.py": "def issue_token(user):\n    return rotate(user)\n\n\n"
    "def rotate(user):\n    return user\n",
}


def test_the_catalog_describes_each_shared_repository(
    team: Team, upstream: Callable[..., Path]
) -> None:
    shared.register(team, str(upstream("backend", CODE)), "backend", by="admin", embed=False)
    folder = catalog.ensure(team)
    entry = (folder / "backend-global.md").read_text(encoding="utf-8")
    assert entry.startswith("# backend-global\n")
    assert "> The payments backend. Tokens are rotated daily." in entry  # its README
    assert "| branch | main |" in entry
    code = "code graph" in REPORTED  # without cuedeck-code, no parser reads Python
    assert ("- python: 2 files" in entry) == code and "- markdown: 2 files" in entry
    # Which indexes exist: core's documents, search's sections, the code graph (a
    # reporter says what is there; the graph of a repository never asked is not built).
    assert f"- **documents** (ready): {4 if code else 2} files" in entry
    assert ("- **search** (ready): keyword:" in entry) == ("search" in REPORTED)
    assert ("- **code graph** (not ready)" in entry) == ("code graph" in REPORTED)
    assert ("- `src/` 2 files" in entry) == code
    listing = (folder / "README.md").read_text(encoding="utf-8")
    assert "- [backend-global](backend-global.md): The payments backend." in listing


def test_the_catalog_follows_the_registry(team: Team, upstream: Callable[..., Path]) -> None:
    shared.register(team, str(upstream("backend", CODE)), "backend", by="admin", embed=False)
    folder = catalog.ensure(team)
    stamp = catalog.fingerprint(team)
    assert catalog.ensure(team) == folder and catalog.fingerprint(team) == stamp

    shared.set_description(team, "backend-global", "Payments: cards, refunds.")
    catalog.ensure(team)
    entry = (folder / "backend-global.md").read_text(encoding="utf-8")
    assert entry.startswith("# backend-global\n\nPayments: cards, refunds.\n\nFrom its README:")
    assert "[backend-global](backend-global.md): Payments: cards, refunds." in (
        folder / "README.md"
    ).read_text(encoding="utf-8")

    shared.register(team, str(upstream("frontend", FRONTEND)), "frontend", by="admin", embed=False)
    shared.remove(team, "backend-global")
    catalog.ensure(team)
    assert sorted(p.name for p in folder.glob("*.md")) == ["README.md", "frontend-global.md"]
    # A repository registered again under the alias starts without the old description.
    shared.register(team, str(upstream("backend2", CODE)), "backend", by="admin", embed=False)
    assert team.registry.find_shared("backend-global").description == ""


def test_the_catalogs_alias_is_reserved(team: Team, upstream: Callable[..., Path]) -> None:
    with pytest.raises(InvalidInput, match="catalog"):
        shared.register(team, str(upstream("x", FRONTEND)), "cidx-meta", by="admin", embed=False)


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_reader_reads_the_catalog_over_mcp(
    home: Path, upstream: Callable[..., Path]
) -> None:
    config = home / ".cuedeck" / "config.toml"
    config.write_text(config.read_text() + '\n[mcp]\ntools = ["all"]\n', encoding="utf-8")
    reader = add_token(home, "reader", "read")
    admin = add_token(home, "root", "admin")
    from cuedeck_team.home import Team

    shared.register(Team(home), str(upstream("backend", CODE)), "backend", by="admin", embed=False)
    meta = {"repository_alias": "cidx-meta-global"}
    with team_server(home) as (base, _log):

        async def read(client: Client) -> Any:
            listing = await call(client, "get_file_content", {**meta, "file_path": "README.md"})
            status = await call(
                client, "global_repo_status", {"repository_alias": "backend-global"}
            )
            denied = await refusal(
                client,
                "set_global_repo_description",
                {"repository_alias": "backend-global", "description": "mine"},
            )
            written = await refusal(
                client, "create_file", {**meta, "file_path": "x.md", "content": "no"}
            )
            return listing, status, denied, written

        async def describe(client: Client) -> Any:
            return await call(
                client,
                "set_global_repo_description",
                {"repository_alias": "backend-global", "description": "Payments."},
            )

        async def reread(client: Client) -> Any:
            return await call(
                client, "get_file_content", {**meta, "file_path": "backend-global.md"}
            )

        listing, status, denied, written = await session(f"{base}/mcp", reader, read)
        described = await session(f"{base}/mcp", admin, describe)
        entry = await session(f"{base}/mcp", reader, reread)
    assert "[backend-global](backend-global.md)" in listing["content"]
    assert [found["name"] for found in status["indexes"]] == REPORTED
    assert denied.code and written.code  # a reader cannot describe; nobody writes the catalog
    assert described["description"] == "Payments."
    assert entry["content"].startswith("# backend-global\n\nPayments.\n")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
