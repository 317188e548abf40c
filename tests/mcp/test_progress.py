"""Progress notifications of long tool calls, through a real `cue mcp` over stdio."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import ProgressNotification

from tests.conftest import MakeWorkspace
from tests.mcp.conftest import CUE, environment

pytest.importorskip("cuedeck_search")
pytestmark = [pytest.mark.anyio, pytest.mark.slow]

TOPICS = ("harbour", "orchard", "glacier", "lantern", "meadow", "quarry")


def many_sections(make_workspace: MakeWorkspace) -> Path:
    """A workspace of 300 sections never embedded anywhere (their text is new), whose
    searches wait for every vector (``[search] wait``): two chunks of embedding."""
    nonce = uuid.uuid4().hex
    files: dict[str, str | bytes] = {}
    for number, topic in enumerate(TOPICS):
        parts = [f"# The {topic} ({nonce})\n\nAbout the {topic}, page {number}.\n"]
        parts += [
            f"## Part {part}\n\nNotes {nonce} on the {topic}, part {part}.\n"
            for part in range(1, 50)
        ]
        files[f".cuedeck/docs/{topic}.md"] = "\n".join(parts)
    return make_workspace(files, config="[search]\nwait = true\n")


def server(root: Path) -> StdioServerParameters:
    return StdioServerParameters(command=CUE, args=["-C", str(root), "mcp"], env=environment())


async def test_a_waiting_search_reports_embedding_progress(make_workspace: MakeWorkspace) -> None:
    root = many_sections(make_workspace)
    received: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        received.append((progress, total, message))

    async with Client(server(root), mode="legacy") as client:
        result = await client.call_tool(
            "read_context",
            {"query": "fruit trees", "mode": "semantic"},
            progress_callback=on_progress,
        )
    assert not result.is_error
    reply = result.structured_content
    assert reply is not None
    assert reply["results"][0]["path"] == ".cuedeck/docs/orchard.md"
    assert (reply["semantic_coverage"], reply["answered_by"]) == (1.0, "semantic")
    embedding = [
        (done, total) for done, total, message in received if message == "Embedding sections"
    ]
    assert len(embedding) >= 2, received  # one notification per chunk committed
    done = [value for value, _ in embedding]
    assert done == sorted(done) and len(set(done)) == len(done)  # strictly increasing
    total = embedding[-1][1]
    assert total is not None and total >= 300
    assert done[-1] == total  # the last one says it is finished
    assert {t for _, t in embedding} == {total}


async def test_no_progress_without_a_token(make_workspace: MakeWorkspace) -> None:
    root = many_sections(make_workspace)
    notifications: list[Any] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, ProgressNotification):
            notifications.append(message)

    async with Client(server(root), mode="legacy", message_handler=on_message) as client:
        result = await client.call_tool(
            "read_context", {"query": "fruit trees", "mode": "semantic"}
        )
    assert result.structured_content is not None
    assert result.structured_content["semantic_coverage"] == 1.0
    assert notifications == []
