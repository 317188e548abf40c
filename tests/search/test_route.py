"""Search's own modes run inside cuedeck-search: a query on files changed since the last
one refreshes the index, and the engine follows it itself, not through core's
after-refresh event calling back into the engine while the engine is answering.

The call path is read with a profiler on a real workspace: no engine or catalog
function may run below a core frame below :meth:`SearchEngine.answer`.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import pytest

from cuedeck import open_workspace
from cuedeck.models import SearchFilters
from tests.conftest import MakeWorkspace, needs

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import FrameType

FILES = {"docs/a.md": "# Alpha\n\nThe webhook retries with backoff.\n"}
#: The engine's own state: nothing of these may be reached back through core.
ENGINE_MODULES = ("cuedeck_search.engine", "cuedeck_search.catalog")


def _frame(frame: FrameType) -> tuple[str, str]:
    return str(frame.f_globals.get("__name__", "")), frame.f_code.co_qualname


def _trace(work: Callable[[], Any]) -> tuple[list[list[tuple[str, str]]], set[str]]:
    """Run ``work()`` under a profiler: the stacks (outermost first, from the first
    ``SearchEngine.answer``) at which the engine was re-entered through core, and the
    qualified names of every function called."""
    stack: list[tuple[str, str]] = []
    reentered: list[list[tuple[str, str]]] = []
    called: set[str] = set()

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event == "return":
            if stack:
                stack.pop()
            return
        if event != "call":
            return
        module, name = _frame(frame)
        called.add(name)
        answering = next((i for i, (m, n) in enumerate(stack) if n == "SearchEngine.answer"), None)
        if answering is not None and module in ENGINE_MODULES:
            below = stack[answering + 1 :]
            if any(m == "cuedeck" or m.startswith("cuedeck.") for m, _ in below):
                reentered.append([*stack[answering:], (module, name)])
        stack.append((module, name))

    sys.setprofile(profile)
    try:
        work()
    finally:
        sys.setprofile(None)
    return reentered, called


@needs("cuedeck_search")
@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_a_query_on_changed_files_stays_inside_search(
    make_workspace: MakeWorkspace, mode: str
) -> None:
    from cuedeck_search.searchers import answer

    root = make_workspace(FILES)
    workspace = open_workspace(root)
    filters = SearchFilters()
    assert answer(workspace, "webhook", mode=mode, limit=5, filters=filters).results
    # Hybrid's embedding thread syncs before each round: still running at the edit, it
    # would follow it itself, in its own thread, where the profiler does not look.
    assert workspace.service("search").background_embedder().wait(120)
    (root / "docs" / "b.md").write_text("# Beta\n\nA webhook secret rotates.\n")
    workspace.invalidate()  # as the board and a new command see edits: re-read
    found: list[Any] = []
    reentered, called = _trace(
        lambda: found.append(answer(workspace, "webhook", mode=mode, limit=5, filters=filters))
    )
    assert {r.path for r in found[0].results} == {"docs/a.md", "docs/b.md"}  # followed
    assert "Catalog.apply" in called or "Catalog.sync" in called  # the engine did follow
    assert reentered == []
    assert not {"Workspace.search", "Workspace.searcher"} & called  # no detour via core


@needs("cuedeck_search")
def test_core_search_reaches_the_engine_once_and_not_back(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(FILES)
    workspace = open_workspace(root)
    assert workspace.search("webhook", mode="keyword")
    (root / "docs" / "b.md").write_text("# Beta\n\nA webhook secret rotates.\n")
    workspace.invalidate()
    found: list[Any] = []
    reentered, called = _trace(
        lambda: found.extend(workspace.search("webhook", mode="keyword", limit=5))
    )
    assert {r.path for r in found} == {"docs/a.md", "docs/b.md"}
    assert "SearchEngine.answer" in called and reentered == []
