"""The code-intelligence tools on a team server: a read-only member asks a shared
repository, named by its repository_alias, with the official MCP client over HTTP."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

pytest.importorskip("cuedeck_code")

from cuedeck_team import shared
from cuedeck_team.home import Team
from tests.code.test_intel import PYTHON
from tests.mcp.conftest import add_token
from tests.team.conftest import call, refusal, session, team_server

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from mcp.client import Client

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_reader_asks_a_shared_repository(home: Path, upstream: Callable[..., Path]) -> None:
    config = home / ".cuedeck" / "config.toml"
    config.write_text(config.read_text() + '\n[mcp]\ntools = ["all"]\n', encoding="utf-8")
    reader = add_token(home, "reader", "read")
    shared.register(Team(home), str(upstream("shop", PYTHON)), "shop", by="admin", embed=False)
    with team_server(home) as (base, _log):

        async def work(client: Client) -> Any:
            listed = {t.name for t in (await client.list_tools()).tools}
            alias = {"repository_alias": "shop-global"}
            found = await call(client, "scip_definition", {**alias, "symbol": "Store.price"})
            refs = await call(
                client, "scip_references", {**alias, "symbol": "Store.price", "exact": True}
            )
            chain = await call(
                client,
                "scip_callchain",
                {**alias, "from_symbol": "main", "to_symbol": "Store.price"},
            )
            impact = await call(client, "scip_impact", {**alias, "symbol": "Store.checkout"})
            unknown = await refusal(
                client, "scip_definition", {"repository_alias": "nobody-global", "symbol": "x"}
            )
            return listed, found, refs, chain, impact, unknown

        listed, found, refs, chain, impact, unknown = await session(f"{base}/mcp", reader, work)
    # A reader sees the reading tools of the category, not the one that runs indexers.
    assert {"scip_definition", "scip_references", "scip_callchain", "scip_status"} <= listed
    assert "scip_generate" not in listed
    assert found["results"][0]["symbol"] == "shop.base/Store#price()"
    assert {(r["file_path"], r["line"]) for r in refs["results"]} >= {
        ("shop/base.py", 3),
        ("shop/discount.py", 6),
    }
    assert [s["symbol"] for s in chain["chains"][0]["path"]][-1] == "shop.base/Store#price()"
    assert impact["affected_files"][0]["path"] == "app.py"
    assert unknown.code == 1400
