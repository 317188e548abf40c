"""Fixtures of the tasks tests: workspaces with cards written as real files."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from cuedeck.workspace import Workspace, open_workspace
from cuedeck_tasks.store import CardStore


def card_text(
    card_id: str,
    title: str,
    *,
    status: str = "todo",
    priority: str = "medium",
    depends_on: tuple[str, ...] = (),
    extra: str = "",
    created: str = "2026-01-10T09:00:00Z",
    updated: str | None = None,
) -> str:
    """A hand-written card file."""
    deps = ", ".join(depends_on)
    return (
        f"---\nid: {card_id}\ntitle: {title}\nstatus: {status}\npriority: {priority}\n"
        f"{extra}depends_on: [{deps}]\ncreated: '{created}'\nupdated: '{updated or created}'\n"
        f"---\n# {title}\n"
    )


CardsFactory = Callable[..., Workspace]


@pytest.fixture
def workspace_with(make_workspace: Callable[..., Path]) -> CardsFactory:
    """``workspace_with({"abc123": card_text(...)})`` -> an open workspace with those cards."""

    def build(cards: dict[str, str] | None = None, *, config: str | None = None) -> Workspace:
        files: dict[str, str | bytes] = {
            f".cuedeck/cards/{card_id}.md": text for card_id, text in (cards or {}).items()
        }
        return open_workspace(make_workspace(files, config=config))

    return build


@pytest.fixture
def chain(workspace_with: CardsFactory) -> Workspace:
    """Three cards: c3c3c3 depends on b2b2b2, which depends on a1a1a1 (done)."""
    return workspace_with(
        {
            "a1a1a1": card_text("a1a1a1", "Set up the database", status="done"),
            "b2b2b2": card_text("b2b2b2", "Create the users table", depends_on=("a1a1a1",)),
            "c3c3c3": card_text("c3c3c3", "Implement login", depends_on=("b2b2b2",)),
        }
    )


def store_of(workspace: Workspace) -> CardStore:
    """The workspace's card store, typed."""
    store = workspace.service("cards")
    assert isinstance(store, CardStore)
    return store
