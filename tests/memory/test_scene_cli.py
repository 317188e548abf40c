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
        (f".cuedeck/memory/p/{pinned}", "memory", 40),
        (f".cuedeck/memory/p/{decision}", "memory", 40),
        (".cuedeck/docs/tokens.md", "indirect", 25),
    ]
    assert "we keep sessions in redis" in scene.text and "chatter" not in scene.text
    assert KEY not in scene.text
    assert scene.tokens <= scene.manifest["token_limit"]
    assert f".cuedeck/memory/p/{decision}" in scene.manifest["inputs"]
    # The written scene is checked against the segments as stored now.
    from cuedeck.scene.staleness import changed_inputs, read_recorded, write_scene

    write_scene(workspace, scene)
    recorded = read_recorded(workspace)
    assert recorded is not None and changed_inputs(workspace, recorded) == []
    store = workspace.service("context")
    store.change("p", [decision], lambda s: s.__class__(**{**_fields(s), "text": "redis, no"}))
    assert changed_inputs(open_workspace(root), recorded) == [f".cuedeck/memory/p/{decision}"]

    (root / ".cuedeck/config.toml").write_text("[scene]\nmemory = false\n")
    plain = build_scene(open_workspace(root), "c2c2c2")
    assert "memory" not in {c["role"] for c in plain.manifest["candidates"]}


def _fields(segment: Any) -> dict[str, Any]:
    import attrs

    return attrs.asdict(segment, recurse=False)


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


def test_restore_under_a_tight_budget_shows_text_or_says_what_fits(
    workspace: Workspace,
) -> None:
    long = "a longer segment with words " * 12
    call(workspace, "context_set_current_task", project_id="default", task_id="t1")
    call(
        workspace,
        "context_capture",
        project_id="default",
        segments=[{"text": "short one", "type": "decision"}, {"text": long, "pinned": True}],
    )
    count = workspace.token_counter.count
    # 100 tokens cannot hold one segment's fields: refused with what would, never a row
    # without text.
    small = run(workspace, "memory", "restore", "--max-tokens", "100", "--json")
    assert small.exit_code == 1
    error = json.loads(small.output)["error"]
    assert (error["code"], error["field"]) == (1004, "max_tokens")
    needed = error["needed"]
    # Segment ids are random: their token count, so the figure, varies by a few tokens.
    assert 100 < needed < 250 and "at least that" in error["message"]
    tight = json.loads(
        run(workspace, "memory", "restore", "--max-tokens", str(needed), "--json").output
    )
    assert count(json.dumps(tight)) <= needed
    [first] = tight["segments"]  # the pinned one first, cut to fit but never empty
    assert first["pinned"] and first["text_truncated"] and len(first["text"]) >= 40
    assert long.startswith(first["text"]) and tight["page"]["next_cursor"] == "1"
    table = run(workspace, "memory", "restore", "--max-tokens", str(needed)).output
    assert "a longer segment" in table and "cut to fit: cue memory show" in table
    roomy = json.loads(run(workspace, "memory", "restore", "--max-tokens", "900", "--json").output)
    assert [s["text"] for s in roomy["segments"]] == [long, "short one"]
    assert count(json.dumps(roomy)) <= 900


def test_a_short_segment_is_restored_whole_in_300_tokens(make_workspace: Any) -> None:
    """`cue memory status` and `restore` on the active card, no project or task given."""
    root = make_workspace({".cuedeck/cards/c2c2c2.md": card("c2c2c2", "Login", status="active")})
    workspace = open_workspace(root)
    text = (
        "Refresh tokens rotate on every use; a reused refresh token revokes the whole "
        "family, and the client must log in again."
    )
    captured = run(workspace, "memory", "capture", "-t", "decision", stdin=text)
    assert captured.exit_code == 0, captured.output
    assert run(workspace, "memory", "status").output.startswith("project default, task c2c2c2\n")
    count = workspace.token_counter.count
    assert 20 <= count(text) <= 30
    reply = run(workspace, "memory", "restore", "--max-tokens", "300", "--json")
    assert reply.exit_code == 0, reply.output
    restored = json.loads(reply.output)
    assert restored["task_id"] == "c2c2c2"
    [segment] = restored["segments"]
    assert segment["text"] == text and "text_truncated" not in segment
    assert count(json.dumps(restored, ensure_ascii=False)) <= 300


def test_counts_of_one_are_singular(workspace: Workspace) -> None:
    captured = run(workspace, "memory", "capture", "-t", "decision", stdin="use sqlite\n")
    assert captured.exit_code == 0, captured.output
    status = run(workspace, "memory", "status").output
    assert ", 1 working segment, 0 pinned" in status and "1 working segments" not in status
    stashed = run(workspace, "memory", "stash", "sqlite")
    assert stashed.output == "stashed 1 segment\n"
