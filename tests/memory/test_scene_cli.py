"""Memory in scenes, doctor and the `cue memory` commands."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from cuedeck.scene import build_scene
from cuedeck.workspace import Workspace, open_workspace
from cuedeck_cli.app import make_cli
from tests.memory.conftest import KEY, call, card


def test_the_active_cards_pins_and_decisions_join_its_scene(make_workspace: Any) -> None:
    root = make_workspace(
        {
            ".cuedeck/cards/c2c2c2.md": card("c2c2c2", "Login", status="active")
            + "\nSee @.cuedeck/docs/auth.md\n",
            ".cuedeck/docs/auth.md": "# Auth\n\nSee @.cuedeck/docs/tokens.md\n",
            ".cuedeck/docs/tokens.md": "# Tokens\n\nfifteen minutes\n",
        }
    )
    workspace = open_workspace(root)
    reply = call(
        workspace,
        "context_capture",
        project_id="p",
        task_id="c2c2c2",
        segments=[
            {"text": "we keep sessions in redis", "type": "decision"},
            {"text": f"pinned fact with {KEY}", "type": "note", "pinned": True},
            {"text": "chatter", "type": "message"},
            {"text": "other card's decision", "type": "decision", "task_id": "d3d3d3"},
        ],
    )
    decision, pinned = reply["segment_ids"][:2]
    scene = build_scene(workspace, "c2c2c2")
    rows = [(c["path"], c["role"], c["priority"]) for c in scene.manifest["candidates"]]
    assert rows == [
        (".cuedeck/cards/c2c2c2.md", "card", 100),
        (".cuedeck/docs/auth.md", "direct", 50),
        (f".cuedeck/memory/p/segments/{pinned}.md", "memory", 40),
        (f".cuedeck/memory/p/segments/{decision}.md", "memory", 40),
        (".cuedeck/docs/tokens.md", "indirect", 25),
    ]
    assert "we keep sessions in redis" in scene.text and "chatter" not in scene.text
    assert KEY not in scene.text
    assert scene.tokens <= scene.manifest["token_limit"]
    assert f".cuedeck/memory/p/segments/{decision}.md" in scene.manifest["inputs"]

    (root / ".cuedeck/config.toml").write_text("[scene]\nmemory = false\n")
    plain = build_scene(open_workspace(root), "c2c2c2")
    assert "memory" not in {c["role"] for c in plain.manifest["candidates"]}


def run(workspace: Workspace, *args: str, stdin: str | None = None) -> Any:
    result = CliRunner().invoke(make_cli(), ["-C", str(workspace.root), *args], input=stdin)
    return result


@pytest.mark.slow
def test_cue_memory_commands(workspace: Workspace, tmp_path: Any) -> None:
    captured = run(workspace, "memory", "capture", "-t", "log", "--json", stdin="build failed\n")
    assert captured.exit_code == 0, captured.output
    [segment_id] = json.loads(captured.output)["segment_ids"]
    note = tmp_path / "notes.txt"
    note.write_text("remember the schema\n")
    from_file = run(workspace, "memory", "capture", str(note), "--json")
    [file_segment] = json.loads(from_file.output)["segment_ids"]
    shown = json.loads(run(workspace, "memory", "show", file_segment, "--json").output)
    assert shown["file_path"] == str(note) and shown["text"] == "remember the schema\n"
    assert run(workspace, "memory", "pin", segment_id).output == f"pinned {segment_id}\n"
    listed = json.loads(run(workspace, "memory", "list", "--json").output)
    assert {s["segment_id"] for s in listed["segments"]} == {segment_id, file_segment}
    status = json.loads(run(workspace, "memory", "status", "--json").output)
    assert status["usage_metrics"]["pinned_segments_count"] == 1
    assert run(workspace, "memory", "unpin", segment_id).exit_code == 0
    gc = json.loads(run(workspace, "memory", "gc", "--target", "1", "--apply", "--json").output)
    assert gc["pruning_plan"]["target_met"] and gc["applied"]["action"] == "stashed"
    found = json.loads(run(workspace, "memory", "retrieve", "--move", "--json").output)
    assert found["segments_found"] == 1 and len(found["moved_to_active"]) == 1
    stash = json.loads(run(workspace, "memory", "stash", "schema", "--json").output)
    assert stash["stashed_segments"] == [file_segment]
    snap = json.loads(run(workspace, "memory", "snapshot", "before", "--json").output)
    listing = json.loads(run(workspace, "memory", "snapshot", "--list", "--json").output)
    assert listing["snapshots"][0]["snapshot_id"] == snap["snapshot_id"]
    restored = json.loads(run(workspace, "memory", "restore", "--json").output)
    assert restored["snapshot"]["name"] == "before"
    assert json.loads(run(workspace, "memory", "projects", "--json").output) == {
        "projects": ["default"]
    }
    missing = run(workspace, "memory", "show", "nope", "--json")
    assert missing.exit_code == 1 and json.loads(missing.output)["error"]["code"] == 1001


def test_cue_init_ignores_memory(tmp_path: Any) -> None:
    result = CliRunner().invoke(make_cli(), ["-C", str(tmp_path), "init"])
    assert result.exit_code == 0, result.output
    assert ".cuedeck/memory/" in (tmp_path / ".gitignore").read_text().splitlines()


def test_cue_memory_list_shows_an_edit_made_in_place(workspace: Workspace) -> None:
    captured = run(workspace, "memory", "capture", "--json", stdin="typed at first\n")
    [segment_id] = json.loads(captured.output)["segment_ids"]
    assert run(workspace, "memory", "list").exit_code == 0  # the index records the folder
    path = workspace.root / f".cuedeck/memory/default/segments/{segment_id}.md"
    path.write_text(path.read_text().replace("typed at first", "fixed by hand"))  # in place
    listed = json.loads(run(workspace, "memory", "list", "--json").output)
    assert [s["text"] for s in listed["segments"]] == ["fixed by hand\n"]


def test_counts_of_one_are_singular(workspace: Workspace) -> None:
    captured = run(workspace, "memory", "capture", "-t", "decision", stdin="use sqlite\n")
    assert captured.exit_code == 0, captured.output
    status = run(workspace, "memory", "status").output
    assert ", 1 working segment, 0 pinned" in status and "1 working segments" not in status
    stashed = run(workspace, "memory", "stash", "sqlite")
    assert stashed.output == "stashed 1 segment\n"
