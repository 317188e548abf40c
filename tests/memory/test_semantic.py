"""Stash queries ranked by meaning through cuedeck-search's semantic searcher."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("cuedeck_search")

from cuedeck.workspace import open_workspace
from tests.memory.conftest import call

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
def test_stash_queries_rank_by_meaning(make_workspace: Any, mode: str) -> None:
    root = make_workspace(config=f'[memory]\nsearch_mode = "{mode}"\n')
    workspace = open_workspace(root)
    texts = [
        "database connection pooling settings for postgres",
        "my cat sleeps on the warm laptop keyboard all afternoon",
        "the CI pipeline caches wheels between runs",
    ]
    call(workspace, "context_capture", project_id="p", segments=[{"text": t} for t in texts])
    call(workspace, "context_stash", project_id="p", filters={"type": "note"})
    found = call(workspace, "context_search_stashed", project_id="p", query="kitten napping")
    assert found["ranking"] == mode
    assert found["segments"][0]["text"] == texts[1]
