"""``cuedeck_card_changed``: the card store tells every card it writes, after the write."""

from __future__ import annotations

from typing import Any

import pytest

from cuedeck import hookimpl, open_workspace
from cuedeck.plugins.host import make_plugin_host
from tests.conftest import MakeWorkspace

pytest.importorskip("cuedeck_tasks")


class CardListener:
    def __init__(self) -> None:
        self.told: list[tuple[str, str, tuple[str, ...], str]] = []

    @hookimpl
    def cuedeck_card_changed(self, workspace: Any, changed: Any) -> None:
        # What the file holds when told: the write is done.
        text = (workspace.root / ".cuedeck" / "cards" / f"{changed.card_id}.md").read_text()
        self.told.append((changed.card_id, changed.change, changed.fields, text))


def test_hook_cuedeck_card_changed(make_workspace: MakeWorkspace) -> None:
    from cuedeck_tasks.store import CardChanges, CardStore

    pm = make_plugin_host()
    listener = CardListener()
    pm.register(listener, name="listener")
    workspace = open_workspace(make_workspace({}), plugins=pm)
    store = CardStore(workspace)
    card = store.create("Refunds", priority="high")
    assert listener.told[-1][:3] == (card.id, "created", ())
    store.update(card.id, CardChanges(priority="low", note="Asked finance"))
    card_id, change, fields, text = listener.told[-1]
    assert (card_id, change, fields) == (card.id, "updated", ("priority", "notes"))
    assert "priority: low" in text  # told after the write
    told = len(listener.told)
    store.update(card.id, CardChanges(priority="low"))  # nothing to write: nothing told
    assert len(listener.told) == told
    store.activate(card.id)
    assert [c for _, c, _, _ in listener.told[-2:]] == ["updated", "activated"]  # todo -> active
