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
            "scip_status",
            "scip_generate",
        }
        assert names <= set(listed)
        # No output schema is published (docs/mcp.md): the reply's structured content and
        # get_tool_docs' reference say its fields.
        assert listed["scip_impact"].output_schema is None
        assert listed["scip_impact"].input_schema["properties"]["depth"]["maximum"] == 10
        result = await client.call_tool("scip_definition", {"symbol": "Store.price"})
        found = result.structured_content
        assert found["results"][0]["symbol"] == "shop.base/Store#price()"
        assert found["text"] == "method shop.base/Store#price() (shop/base.py:6)"
        # The model reads the compact line in the reply's text, once: the results the
        # line already says are not drawn again as a table (reads_as="text").
        text = result.content[0].text
        assert text.count("shop/base.py") == 1, text
        assert "method shop.base/Store#price() (shop/base.py:6)" in text
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
        status = await use(client, "scip_status")
        assert status["files"] == 4 and status["edges"]["syntactic"] > 0
        assert {i["name"] for i in status["indexers"]} >= {"scip-python", "scip-typescript"}
        run = await use(client, "scip_generate", wait=True)
        assert run["state"] == "done"
        indexers = {i["name"]: i for i in run["indexers"]}
        assert indexers["scip-typescript"]["state"] == "skipped"  # no script here
        assert indexers["scip-python"]["state"] in {"done", "missing"}
        if indexers["scip-python"]["state"] == "missing":  # a note saying how to install it
            assert "npm install -g @sourcegraph/scip-python" in indexers["scip-python"]["note"]
        categories = await use(client, "get_tool_categories")
        scip = next(c for c in categories["categories"] if c["category"] == "scip")
        assert names <= {t["name"] for t in scip["tools"]}
        docs = await use(client, "get_tool_docs", tool="scip_callchain")
        assert docs["category"] == "scip" and docs["example"]


async def test_a_tool_asked_during_a_background_build_waits_with_progress(
    make_workspace: MakeWorkspace,
) -> None:
    import os
    import signal
    import subprocess
    import sys

    from cuedeck_code.intel import detached
    from cuedeck_code.intel.store import GraphStore

    root: Path = make_workspace(PYTHON)
    indexed = subprocess.run([CUE, "-C", str(root), "index", "--graph-wait"], check=False)
    assert indexed.returncode == 0
    params = StdioServerParameters(
        command=CUE, args=["-C", str(root), "mcp", "--tools", "core,scip"], env=environment()
    )
    async with Client(params, mode="legacy") as client:
        before = await use(client, "scip_references", symbol="Store.price")
    GraphStore(root).path.unlink()  # built again from nothing, by the builder
    builder = subprocess.Popen(
        [sys.executable, "-m", "cuedeck_code.intel.detached", str(root)],
        stdout=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    assert builder.stdout is not None
    assert builder.stdout.readline().startswith("building the code graph")  # it holds the lock
    os.kill(builder.pid, signal.SIGSTOP)
    waited: list[str | None] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        if message == detached.WAITING and detached.WAITING not in waited:
            os.kill(builder.pid, signal.SIGCONT)  # the server waits: let the build go on
        waited.append(message)

    try:
        async with Client(params, mode="legacy") as client:
            result = await client.call_tool(
                "scip_references", {"symbol": "Store.price"}, progress_callback=on_progress
            )
    finally:
        os.kill(builder.pid, signal.SIGCONT)
        builder.communicate(timeout=300)
    assert builder.returncode == 0
    assert detached.WAITING in waited
    assert not result.is_error and result.structured_content is not None
    after = result.structured_content
    assert {**after, "reflects": None} == {**before, "reflects": None}  # its time aside
    assert after["results"]
