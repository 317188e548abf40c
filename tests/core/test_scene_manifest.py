"""A tight budget: the rendered manifest counts what did not fit instead of listing it."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree

import pytest

from cuedeck import open_workspace
from cuedeck.scene import build_scene
from cuedeck.scene.render import LISTED_ROWS
from tests.conftest import MakeWorkspace

DOCS = 155


def wide_workspace(make_workspace: MakeWorkspace) -> MakeWorkspace:
    """A card that cites 155 docs of ~120 tokens each (far more than 5,000 tokens)."""
    files = {
        f".cuedeck/docs/topic{n:03}.md": (
            f"# Topic {n}\n\n"
            + " ".join(f"Rule {k} of topic {n} keeps the ledger balanced." for k in range(12))
            + "\n"
        )
        for n in range(DOCS)
    }
    refs = "\n".join(f"- @doc/topic{n:03}" for n in range(DOCS))
    files[".cuedeck/cards/wide01.md"] = (
        "---\nid: wide01\ntitle: Audit every topic\nstatus: active\n---\n"
        f"# Audit every topic\n\n{refs}\n"
    )
    return make_workspace(files)


@pytest.mark.parametrize("fmt", ["markdown", "xml", "json"])
def test_a_card_citing_155_docs_fits_5000_tokens(make_workspace: MakeWorkspace, fmt: str) -> None:
    root = wide_workspace(make_workspace)
    scene = build_scene(open_workspace(root), "wide01", 5000, format=fmt)
    assert scene.tokens <= 5000
    candidates = scene.manifest["candidates"]
    assert len(candidates) == DOCS + 1  # --json still lists every candidate
    dropped = [c for c in candidates if c["placed"] == "dropped"]
    placed = len(candidates) - len(dropped)
    assert len(dropped) > 100 and placed > 1
    more = len(dropped) - LISTED_ROWS
    if fmt == "markdown":
        summary = [line for line in scene.text.splitlines() if "more dropped" in line]
        assert summary == [
            f"{more} more dropped, not listed ({more} too large for the tokens left): "
            "`cue scene --json` for all"
        ]
        rows = [line for line in scene.text.splitlines() if line.startswith("| ")]
        assert len(rows) == 2 + placed + LISTED_ROWS  # header, rule, placed, the first dropped
    elif fmt == "xml":
        manifest = ElementTree.fromstring(scene.text).find("manifest")
        assert manifest is not None
        assert len(manifest.findall("candidate")) == placed + LISTED_ROWS
        node = manifest.find("more")
        assert node is not None and node.get("dropped") == str(more)
    else:
        value = json.loads(scene.text)["manifest"]
        assert len(value["candidates"]) == placed + LISTED_ROWS
        assert value["more"]["dropped"] == more


def test_a_budget_for_the_card_alone_counts_the_rest(make_workspace: MakeWorkspace) -> None:
    root = wide_workspace(make_workspace)
    scene = build_scene(open_workspace(root), "wide01", 1400)
    placed = [c["placed"] for c in scene.manifest["candidates"]]
    dropped = placed.count("dropped")
    # The card fills nearly all of it (how many docs squeeze in depends on the counter).
    assert dropped >= DOCS - 5 and placed.count("whole") == DOCS + 1 - dropped
    assert f"{dropped - LISTED_ROWS} more dropped, not listed (" in scene.text
    assert scene.tokens <= 1400


def test_few_dropped_candidates_are_all_listed(make_workspace: MakeWorkspace) -> None:
    root = wide_workspace(make_workspace)
    scene = build_scene(open_workspace(root), "wide01", 200_000)
    assert "more dropped" not in scene.text
    assert all(c["placed"] == "whole" for c in scene.manifest["candidates"])
