"""Docs of every format beside code: a Sphinx ``literalinclude`` of a Python object
places that definition in a scene, and search_code keeps to code."""

from __future__ import annotations

import shutil
from pathlib import Path

from cuedeck import open_workspace
from cuedeck.scene import build_scene
from tests.conftest import needs

PROJECT = Path(__file__).parents[1] / "core" / "sphinx_project"
CARD = """---
id: refund
title: Refund windows
status: active
---
Read @docs/source/install.rst#refund-policy.
"""


def _workspace(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    shutil.copytree(PROJECT, root)
    (root / ".cuedeck" / "cards").mkdir(parents=True)
    (root / ".cuedeck" / "cards" / "refund.md").write_text(CARD, encoding="utf-8")
    return root


def test_literalinclude_pyobject_places_the_definition(tmp_path: Path) -> None:
    workspace = open_workspace(_workspace(tmp_path))
    scene = build_scene(workspace, "refund", token_limit=4000)
    rows = {(c["path"], c["anchor"]): c for c in scene.manifest["candidates"]}
    row = rows[("src/shop/refunds.py", "RefundPolicy.window")]
    assert (row["role"], row["lines"]) == ("indirect", "L11-L15")  # included by the doc
    assert "```python\n    def window(self, amount: int) -> timedelta:\n" in scene.text
    assert workspace.graph.problems[0].message.endswith(  # the only one: a dead label
        "names label 'no-such-label', which no reStructuredText file defines"
    )
    assert len(workspace.graph.problems) == 1


@needs("cuedeck_search")
def test_search_code_finds_code_not_docs(tmp_path: Path) -> None:
    workspace = open_workspace(_workspace(tmp_path))
    tool = workspace.plugins.tools()["search_code"]
    reply = tool.call(workspace, {"query": "refund window", "mode": "keyword"})
    paths = {result["path"] for result in reply["results"]}
    assert paths == {"src/shop/refunds.py"}  # install.rst says "refund" more, and is prose
