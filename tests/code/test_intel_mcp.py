"""The code-intelligence tools over MCP with the official client: every scip_* tool on a
plain server, repository_alias naming the workspace, the scip category and the docs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("cuedeck_mcp")

from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from tests.code.test_intel import PYTHON
from tests.conftest import MakeWorkspace
from tests.mcp.conftest import CUE, environment

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def use(client: Client, name: str, **arguments: Any) -> Any:
    result = await client.call_tool(name, arguments)
    assert not result.is_error, (name, result.content)
    assert result.structured_content is not None, name
    return result.structured_content


async def test_every_scip_tool_over_stdio(make_workspace: MakeWorkspace) -> None:
    root: Path = make_workspace(PYTHON)
    params = StdioServerParameters(
        command=CUE, args=["-C", str(root), "mcp", "--tools", "core,scip"], env=environment()
    )
    async with Client(params, mode="legacy") as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        names = {
            "scip_definition",
            "scip_references",
            "scip_dependencies",
            "scip_dependents",
            "scip_impact",
            "scip_callchain",
            "scip_context",
            "scip_call_graph",
        }
        assert names <= set(listed)
        assert listed["scip_impact"].output_schema is not None
        assert listed["scip_impact"].input_schema["properties"]["depth"]["maximum"] == 10
        found = await use(client, "scip_definition", symbol="Store.price")
        assert found["results"][0]["symbol"] == "shop.base/Store#price()"
        assert found["text"] == "method shop.base/Store#price() (shop/base.py:6)"
        # repository_alias naming the one workspace is the same call (a team server
        # resolves it to one of its repositories).
        alias = await use(
            client, "scip_definition", symbol="Store.price", repository_alias=root.name
        )
        assert alias["results"] == found["results"]
        references = await use(client, "scip_references", symbol="Store.checkout", exact=True)
        assert references["results"][0]["context"] == "store.checkout(items)"
        assert (await use(client, "scip_dependencies", symbol="Store.checkout"))["results"][0][
            "symbol"
        ] == "shop.base/Store#price()"
        dependents = await use(client, "scip_dependents", symbol="Store.checkout", exact=True)
        assert [r["symbol"] for r in dependents["results"]] == ["app/main()"]
        impact = await use(client, "scip_impact", symbol="Store.price", exact=True)
        assert impact["depth_analyzed"] == 3 and impact["total_affected"] >= 2
        chain = await use(client, "scip_callchain", from_symbol="main", to_symbol="Store.price")
        assert chain["chains"][0]["path"][-1]["symbol"] == "shop.base/Store#price()"
        context = await use(client, "scip_context", symbol="Store.price", exact=True)
        assert context["files"][0]["path"] == "shop/base.py"
        graph = await use(client, "scip_call_graph", symbol="main", depth=1)
        assert {n["symbol"] for n in graph["callees"]} >= {"shop.base/Store#checkout()"}
        with pytest.raises(Exception) as caught:  # noqa: PT011 - the client's own error type
            await use(client, "scip_references", symbol="NoSuchThing", exact=True)
        assert "1001" in str(caught.value) or "no definition" in str(caught.value)
        categories = await use(client, "get_tool_categories")
        scip = next(c for c in categories["categories"] if c["category"] == "scip")
        assert names <= {t["name"] for t in scip["tools"]}
        docs = await use(client, "get_tool_docs", tool="scip_callchain")
        assert docs["category"] == "scip" and docs["example"]
