"""Services other packages use are asked for by their contract (cuedeck.plugins.services),
typed, and reach the very service their plugin registered by name."""

from __future__ import annotations

import pytest

from cuedeck import open_workspace
from cuedeck.errors import InvalidInput, MissingExtra
from cuedeck.hookspecs import TextRanker
from cuedeck.plugins.host import make_plugin_host
from cuedeck.plugins.services import SERVICE_NAMES, CardService, MemoryService, SearchService
from tests.conftest import MakeWorkspace, needs

FILES = {"notes.md": "# Notes\n\nThe webhook retries with backoff.\n"}


@needs("cuedeck_search", "cuedeck_tasks", "cuedeck_memory")
def test_a_contract_reaches_the_service_its_plugin_registered(
    make_workspace: MakeWorkspace,
) -> None:
    from cuedeck_memory.store import MemoryStore
    from cuedeck_search.engine import SearchEngine
    from cuedeck_tasks.store import CardStore

    workspace = open_workspace(make_workspace(FILES))
    engine = workspace.service(SearchService)
    assert isinstance(engine, SearchEngine) and engine is workspace.service("search")
    cards = workspace.service(CardService)
    assert isinstance(cards, CardStore) and cards is workspace.service("cards")
    memory = workspace.service(MemoryService)
    assert isinstance(memory, MemoryStore) and memory is workspace.service("context")
    assert set(SERVICE_NAMES) == {SearchService, CardService, MemoryService}


@needs("cuedeck_search")
def test_the_semantic_searcher_ranks_texts_through_its_declared_protocol(
    make_workspace: MakeWorkspace,
) -> None:
    workspace = open_workspace(make_workspace(FILES))
    assert isinstance(workspace.searcher("semantic"), TextRanker)
    assert not isinstance(object(), TextRanker)


def test_a_contract_no_plugin_provides_is_a_missing_extra(make_workspace: MakeWorkspace) -> None:
    workspace = open_workspace(make_workspace(FILES), plugins=make_plugin_host(entry_points=False))
    with pytest.raises(MissingExtra) as missing:
        workspace.service(SearchService)
    assert missing.value.code == 1008 and "'search' service" in str(missing.value)
    with pytest.raises(InvalidInput, match="Workspace is not a service contract"):
        workspace.service(type(workspace))
    assert not hasattr(workspace, "search_engine")
