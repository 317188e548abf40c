"""Fixtures of the memory tests: real workspaces, the tools called as MCP clients call them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("cuedeck_memory")

from cuedeck.workspace import Workspace, open_workspace
from cuedeck_memory.store import MemoryStore

KEY = "sk_live_4eC39HqLyjWDarjtT1zdp7dcTYooMQauvdEDq54NiTphI7jx"

Call = Callable[..., Any]


def call(workspace: Workspace, tool: str, **arguments: Any) -> Any:
    """Run a registered tool with validation, as MCP and the CLI do."""
    return workspace.plugins.tools()[tool].call(workspace, arguments)


def store_of(workspace: Workspace) -> MemoryStore:
    """The workspace's memory store, typed."""
    store = workspace.service("context")
    assert isinstance(store, MemoryStore)
    return store


def card(
    card_id: str, title: str, *, depends_on: tuple[str, ...] = (), status: str = "todo"
) -> str:
    """A hand-written card file."""
    return (
        f"---\nid: {card_id}\ntitle: {title}\nstatus: {status}\npriority: medium\n"
        f"depends_on: [{', '.join(depends_on)}]\ncreated: '2026-01-10T09:00:00Z'\n---\n# {title}\n"
    )


@pytest.fixture
def workspace(make_workspace: Callable[..., Path]) -> Workspace:
    """An empty workspace with two cards: c2c2c2 depends on a1a1a1."""
    root = make_workspace(
        {
            ".cuedeck/cards/a1a1a1.md": card("a1a1a1", "Set up the database"),
            ".cuedeck/cards/c2c2c2.md": card("c2c2c2", "Login", depends_on=("a1a1a1",)),
            ".cuedeck/cards/d3d3d3.md": card("d3d3d3", "Unrelated"),
        }
    )
    return open_workspace(root)


@pytest.fixture
def capture(workspace: Workspace) -> Callable[..., list[str]]:
    """``capture(text, type=..., ...)`` -> the new segment ids (project ``p``)."""

    def run(*texts: str, project: str = "p", **fields: Any) -> list[str]:
        reply = call(
            workspace,
            "context_capture",
            project_id=project,
            segments=[{"text": text, **fields} for text in texts],
        )
        return list(reply["segment_ids"])

    return run
