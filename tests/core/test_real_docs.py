"""CueDeck over a real documentation set: the FastAPI docs in .cuedeck/docs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cuedeck.doctor import diagnose
from cuedeck.scene import build_scene
from cuedeck.workspace import open_workspace

pytestmark = pytest.mark.slow

CARD = (
    "---\ntitle: Test the login route\nstatus: active\n---\n# Test the login route\n\n"
    "Follow @doc/tutorial/testing for the TestClient.\n"
)


@pytest.fixture
def fastapi_workspace(fastapi_docs: Path, tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".cuedeck" / "cards").mkdir(parents=True)
    shutil.copytree(fastapi_docs, root / ".cuedeck" / "docs")
    (root / ".cuedeck" / "cards" / "aaa111.md").write_text(CARD)
    return root


def test_navigation_links_of_real_docs_are_no_cycle(fastapi_workspace: Path) -> None:
    workspace = open_workspace(fastapi_workspace)
    assert workspace.graph.cycles == []  # the docs link back and forth; that is navigation
    scene = build_scene(workspace, token_limit=8000)
    candidates = scene.manifest["candidates"]
    assert candidates[1]["path"] == ".cuedeck/docs/tutorial/testing.md"
    assert candidates[1]["priority"] == 50
    linked = [c for c in candidates if c["role"] == "linked"]
    assert linked and all(c["priority"] == 20 for c in linked)
    assert len({c["path"] for c in candidates}) == len(candidates)  # each file at most once
    assert scene.manifest["tokens"] <= 8000


def test_doctor_finds_no_error_in_untouched_docs(fastapi_workspace: Path) -> None:
    errors = [p for p in diagnose(open_workspace(fastapi_workspace)) if p.severity == "error"]
    assert errors == []
