"""Watcher-driven freshness: what changes on disk is seen by the next call, without a walk."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from cuedeck.workspace import Workspace, open_workspace
from cuedeck_mcp.freshness import Freshness


@pytest.fixture
def workspace(demo: Path) -> Workspace:
    return open_workspace(demo)


def _walks(workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count full refreshes (tree walks) of ``workspace`` from now on."""
    walks: list[int] = []
    original = workspace.index.refresh

    def counted(**options: object) -> object:
        walks.append(1)
        return original(**options)  # type: ignore[arg-type]

    monkeypatch.setattr(workspace.index, "refresh", counted)
    return walks


def test_edit_create_delete_and_rename_are_seen_without_a_walk(
    workspace: Workspace, demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    freshness = Freshness(workspace)
    try:
        assert freshness.watching
        freshness.ensure()  # the first call reads everything once
        walks = _walks(workspace, monkeypatch)
        assert freshness.ensure() is False  # nothing changed: not even a stat

        auth = demo / ".cuedeck" / "docs" / "auth.md"
        auth.write_text(auth.read_text() + "\n## Lockout\n\nTen minutes.\n")
        (demo / "docs" / "new.md").write_text("# Brand new\n")
        (demo / ".cuedeck" / "docs" / "conventions.md").unlink()
        os.rename(
            demo / ".cuedeck" / "docs" / "schema.md", demo / ".cuedeck" / "docs" / "tables.md"
        )
        for rel in (
            ".cuedeck/docs/auth.md", "docs/new.md", ".cuedeck/docs/conventions.md",
            ".cuedeck/docs/schema.md", ".cuedeck/docs/tables.md",
        ):  # fmt: skip
            assert freshness.wait_for(rel), rel
        assert freshness.ensure() is True
        paths = set(workspace.index.paths)
        assert walks == []  # applied path by path
        assert "docs/new.md" in paths and ".cuedeck/docs/tables.md" in paths
        assert ".cuedeck/docs/conventions.md" not in paths
        assert ".cuedeck/docs/schema.md" not in paths
        assert "Lockout" in [h.text for h in workspace.index.get(".cuedeck/docs/auth.md").headings]
    finally:
        freshness.close()


def test_rules_still_apply_to_reported_files(workspace: Workspace, demo: Path) -> None:
    (demo / ".gitignore").write_text("docs/draft-*.md\n")
    freshness = Freshness(workspace)
    try:
        freshness.ensure()
        (demo / "docs" / "draft-1.md").write_text("# Draft\n")
        (demo / "docs" / "kept.md").write_text("# Kept\n")
        (demo / "notes.txt").write_text("not markdown\n")
        assert freshness.wait_for("docs/draft-1.md")
        assert freshness.wait_for("docs/kept.md")
        freshness.ensure()
        paths = workspace.index.paths
        assert "docs/kept.md" in paths
        assert "docs/draft-1.md" not in paths  # .gitignore'd, judged path by path
    finally:
        freshness.close()


def test_a_new_folder_is_read_whole(workspace: Workspace, demo: Path) -> None:
    """Files made right after their folder may come before the folder is watched: the
    folder's own report makes the next call refresh in full."""
    freshness = Freshness(workspace)
    try:
        freshness.ensure()
        (demo / "guides").mkdir()
        (demo / "guides" / "setup.md").write_text("# Setup\n")
        assert freshness.wait_for("guides")
        freshness.ensure()
        assert "guides/setup.md" in workspace.index.paths
    finally:
        freshness.close()


def test_a_new_gitignore_rule_costs_a_full_refresh(workspace: Workspace, demo: Path) -> None:
    freshness = Freshness(workspace)
    try:
        freshness.ensure()
        assert "docs/deployment.md" in workspace.index.paths
        (demo / ".gitignore").write_text("docs/\n")
        assert freshness.wait_for(".gitignore")
        freshness.ensure()
        assert "docs/deployment.md" not in workspace.index.paths
    finally:
        freshness.close()


def test_without_a_watcher_stamps_still_see_every_change(workspace: Workspace, demo: Path) -> None:
    freshness = Freshness(workspace, watch=False)  # as where events cannot be had
    assert not freshness.watching
    freshness.ensure()
    (demo / "docs" / "fresh.md").unlink(missing_ok=True)
    deployment = demo / "docs" / "deployment.md"
    deployment.write_text(deployment.read_text() + "\n## Rollback\n")
    assert freshness.ensure() is True
    headings = [h.text for h in workspace.index.get("docs/deployment.md").headings]
    assert "Rollback" in headings
    assert freshness.ensure() is False  # and nothing changed since


def test_source_files_are_followed_like_markdown(workspace: Workspace, demo: Path) -> None:
    """Every file a parser reads is followed, code included; others are not read."""
    pytest.importorskip("cuedeck_code")
    freshness = Freshness(workspace)
    try:
        freshness.ensure()
        (demo / "src").mkdir()
        assert freshness.wait_for("src")
        freshness.ensure()  # a new folder: read whole
        (demo / "src" / "app.py").write_text("def serve_quokkas():\n    return 1\n")
        (demo / "src" / "notes.bin").write_bytes(b"\0\1")
        assert freshness.wait_for("src/app.py") and freshness.wait_for("src/notes.bin")
        assert freshness.ensure() is True
        symbols = [s.name for s in workspace.index.get("src/app.py").symbols]
        assert "serve_quokkas" in symbols
        assert "src/notes.bin" not in workspace.index
    finally:
        freshness.close()


def test_replies_name_what_was_reported_and_not_read_yet(workspace: Workspace, demo: Path) -> None:
    from cuedeck.watch.reflects import reflects

    freshness = Freshness(workspace)
    try:
        freshness.ensure()
        before = reflects(workspace)
        assert (before["watch"], before["pending"]) == ("watcher", [])
        (demo / "docs" / "late.md").write_text("# Late\n")
        assert freshness.wait_for("docs/late.md")
        during = reflects(workspace)  # a reply made now does not hold it
        assert (during["pending"], during["tree"]) == (["docs/late.md"], before["tree"])
        freshness.ensure()  # the next call reads it
        after = reflects(workspace)
        assert after["pending"] == [] and after["tree"] != before["tree"]
        (demo / ".gitignore").write_text("docs/late.md\n")
        assert freshness.wait_for(".gitignore")
        assert reflects(workspace)["pending"] is None  # the next call reads everything
    finally:
        freshness.close()
    assert workspace.freshness is None


def test_a_dropped_watcher_ends_with_its_workspace(demo: Path) -> None:
    """A server a Python caller builds and drops (a test, a script serving many
    repositories) takes its file watcher with it: the watch thread holds it weakly and
    ends once it is collected, releasing its inotify instance."""
    import gc

    workspace = open_workspace(demo)
    freshness = Freshness(workspace)
    assert freshness.watching
    thread = freshness._thread
    assert thread is not None and thread.is_alive()
    del workspace, freshness
    gc.collect()
    thread.join(10)  # it looks at its owner at every wake-up (50 ms)
    assert not thread.is_alive()


def test_a_dropped_server_lets_its_workspace_go(demo: Path) -> None:
    """A script that builds a server, serves a client and drops it (one repository after
    another) keeps nothing of it: its workspace, databases and file watcher are collected
    with it, although FastMCP keeps its resource templates' functions."""
    import asyncio
    import gc
    import weakref

    from fastmcp import Client

    from cuedeck_mcp.server import build_server

    def serve_once() -> tuple[weakref.ref[Workspace], Any]:
        workspace = open_workspace(demo)

        async def session() -> None:
            async with Client(build_server(workspace)) as client:
                names = {template.name for template in await client.list_resource_templates()}
                assert names >= {"card", "doc"}

        asyncio.run(session())
        assert isinstance(workspace.freshness, Freshness)
        return weakref.ref(workspace), workspace.freshness._thread

    gone, thread = serve_once()
    # The watch's thread holds its owner for the moment it reports a change: a collection
    # in that moment leaves it; the next one, after the thread's wake-up, must not.
    for _ in range(200):
        gc.collect()
        if gone() is None:
            break
        thread.join(0.05)  # it looks at its owner at every wake-up (50 ms)
    assert gone() is None
    thread.join(10)
    assert not thread.is_alive()
