"""Segment files on disk: what a capture writes, what a read gives back, and what a new
process trusts before it has looked at every file."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from cuedeck.workspace import Workspace, open_workspace
from cuedeck_memory.segments import Segment, parse_file, render_file
from tests.memory.conftest import KEY, call, store_of

Capture = Callable[..., list[str]]


def _folder(workspace: Workspace, project: str = "p") -> os.PathLike[str]:
    return workspace.root / f".cuedeck/memory/{project}/segments"


def test_a_batch_writes_one_whole_file_per_segment_and_no_temporary_ones(
    workspace: Workspace, capture: Capture
) -> None:
    ids = capture(*[f"segment number {n}" for n in range(300)], type="log")
    names = sorted(os.listdir(_folder(workspace)))
    assert names == sorted(f"{i}.md" for i in ids)  # nothing left behind
    store = store_of(workspace)
    indexed = store.index.stats("p")
    for segment_id in ids:
        path = os.path.join(_folder(workspace), f"{segment_id}.md")
        stat = os.stat(path)
        assert indexed[segment_id] == (stat.st_mtime_ns, stat.st_size)  # no needless re-read
        with open(path, encoding="utf-8") as handle:
            assert parse_file(handle.read(), segment_id=segment_id, project_id="p").type == "log"
    texts = {s.id: s.text for s in store.segments("p")}
    assert texts == {i: f"segment number {n}" for n, i in enumerate(ids)}


def test_texts_and_values_come_back_exactly(workspace: Workspace, capture: Capture) -> None:
    text = "line one\r\nline two\rthree\n\nfour\n"
    tags = ["a\u0085b", "c\u2028d", 'quote " and \\ slash', "é"]
    [segment_id] = capture(text, tags=tags, file_path="src/x y.py", line_range=[3, 9])
    fresh = open_workspace(workspace.root)  # the index deleted: everything from the file
    store = store_of(fresh)
    store.index.close()
    for suffix in ("", "-wal", "-shm"):
        store.index.path.with_name(store.index.path.name + suffix).unlink(missing_ok=True)
    store.refresh("p", full=True)
    segment = store.segment("p", segment_id)
    assert segment.text == text
    assert list(segment.tags) == tags
    assert (segment.file_path, segment.line_range) == ("src/x y.py", (3, 9))
    # A pin rewrites the file from what is on disk: still exact.
    call(fresh, "context_gc_pin", project_id="p", segment_ids=[segment_id])
    again = store_of(fresh).segment("p", segment_id)
    assert again.pinned and again.text == text and list(again.tags) == tags


def test_the_hand_rolled_writer_writes_what_json_would() -> None:
    import json

    segment = Segment(
        id="abc",
        type="note",
        text="body",
        project_id="p",
        created_at=1.5,
        tags=("x\n", "\u00e9", "\x00"),
        refs=("r1",),
        line_range=(1, 2),
    )
    lines = render_file(segment).split("\n")
    assert lines[5] == f"tags: {json.dumps(list(segment.tags), ensure_ascii=False)}"
    assert lines[7] == "line_range: [1, 2]" and lines[9] == 'refs: ["r1"]'


def test_a_file_saved_with_windows_line_ends_is_read(
    workspace: Workspace, capture: Capture
) -> None:
    [segment_id] = capture("hello")
    path = _folder(workspace) / f"{segment_id}.md"  # type: ignore[operator]
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n").replace(b"hello", b"hi there"))
    store = store_of(workspace)
    store.refresh("p", full=True)
    assert store.segment("p", segment_id).text == "hi there"
    assert not store.index.problems("p")


def test_secrets_are_masked_in_every_field_a_capture_writes(
    workspace: Workspace, capture: Capture
) -> None:
    [segment_id] = capture("plain text", tags=[KEY], file_path=f"keys/{KEY}.txt", topic_id=KEY)
    on_disk = (_folder(workspace) / f"{segment_id}.md").read_text()  # type: ignore[operator]
    assert KEY not in on_disk and on_disk.count("[REDACTED:stripe-secret-key#1]") == 3


def test_a_new_process_answers_first_and_a_pin_made_by_hand_still_holds(
    workspace: Workspace, capture: Capture
) -> None:
    a, b = capture("keep me", "drop me")
    path = _folder(workspace) / f"{a}.md"  # type: ignore[operator]
    stamp = os.stat(_folder(workspace)).st_mtime_ns
    # In place: the folder's mtime stays, so a new process trusts its index at first.
    path.write_text(path.read_text().replace("pinned: false", "pinned: true"))
    assert os.stat(_folder(workspace)).st_mtime_ns == stamp
    fresh = open_workspace(workspace.root)
    pruned = call(fresh, "context_gc_prune", project_id="p", segment_ids=[a, b], action="stash")
    assert pruned["pruned_segments"] == [b]
    assert [(e["segment_id"], e["error"]) for e in pruned["errors"]] == [(a, "pinned")]
    assert 'tier: "working"' in path.read_text() and "pinned: true" in path.read_text()
    store_of(fresh).close()  # waits for any look still running
    # Delete goes by the index alone: it too must see the pin before offering a token.
    path.write_text(path.read_text().replace("pinned: true", "pinned: false"))
    between = open_workspace(workspace.root)
    call(between, "context_get_working_set", project_id="p")
    store_of(between).close()  # its look recorded "pinned: false"
    path.write_text(path.read_text().replace("pinned: false", "pinned: true"))
    again = open_workspace(workspace.root)
    asked = call(
        again, "context_gc_prune", project_id="p", segment_ids=[a], action="delete", confirm=True
    )
    assert asked["segment_ids"] == [] and asked["errors"][0]["error"] == "pinned"
    store_of(again).close()


def test_a_new_process_sees_a_hand_edit_once_its_look_is_done(
    workspace: Workspace, capture: Capture
) -> None:
    [segment_id] = capture("before")
    path = _folder(workspace) / f"{segment_id}.md"  # type: ignore[operator]
    path.write_text(path.read_text().replace("before", "after, by hand"))
    fresh = open_workspace(workspace.root)
    call(fresh, "context_get_working_set", project_id="p")  # answers from the index
    store = store_of(fresh)
    assert store.wait_for_scan("p", timeout=60)
    assert store._background_error is None
    [seg] = call(fresh, "context_get_working_set", project_id="p")["segments"]
    assert seg["text"] == "after, by hand"
    # A third process finds the index in step: the look was recorded.
    third = store_of(open_workspace(workspace.root))
    assert third.index.get("p", [segment_id])[segment_id].text == "after, by hand"
    store.close()


def test_a_batch_that_fails_leaves_no_temporary_file_and_no_half_file(tmp_path: Path) -> None:
    from cuedeck_memory.durable import write_batch

    (tmp_path / "b.md").mkdir()
    (tmp_path / "b.md" / "keep").write_text("a folder where a file should go")
    files = [(f"{name}.md", name.encode() * 1000) for name in "abcd"]
    with pytest.raises(IsADirectoryError):
        write_batch(tmp_path, files)
    assert sorted(os.listdir(tmp_path)) == ["a.md", "b.md"]  # nothing staged is left
    assert (tmp_path / "a.md").read_bytes() == b"a" * 1000  # what was renamed is whole
    stats = write_batch(tmp_path, [("c.md", b"x"), ("d.md", b"yy"), ("e.md", b"zzz")])
    assert [s.st_size for s in stats] == [1, 2, 3]
    assert [os.stat(tmp_path / n).st_mtime_ns for n in ("c.md", "d.md", "e.md")] == [
        s.st_mtime_ns for s in stats
    ]


@pytest.mark.slow
def test_advice_and_plans_fit_the_reply_budget(workspace: Workspace, capture: Capture) -> None:
    # 400 small logs and a window they fill to 90%: the full plan names hundreds of ids.
    ids = capture(*[f"log line {n} of a noisy build" for n in range(400)], type="log")
    store = store_of(workspace)
    tokens = sum(s.tokens for s in store.segments("p"))
    limit = int(tokens / 0.9)
    count = workspace.token_counter.count
    report = call(
        workspace, "context_analyze_usage", project_id="p", token_limit=limit, max_tokens=1000
    )
    assert count(json.dumps(report)) <= 1000
    [action] = report["suggested_actions"]
    assert action["complete"] is False and 0 < action["segments"] < action["segments_in_plan"]
    kept = action["arguments"]["segment_ids"]
    assert len(kept) == action["segments"] and set(kept) <= set(ids)
    assert action["tokens_freed"] == sum(s.tokens for s in store.index.get("p", kept).values())
    assert f"stash {action['segments_in_plan']} segments" in report["warnings"][0]["message"]
    # The whole plan stays reachable: its ids are the first candidates, page by page.
    plan_reply = call(
        workspace, "context_gc_analyze", project_id="p", target_tokens=tokens, max_tokens=1000
    )
    assert count(json.dumps(plan_reply)) <= 1000
    plan = plan_reply["pruning_plan"]
    assert plan["stash_segments_complete"] is False
    assert len(plan["stash_segments"]) < plan["candidates_count"] == 400
    seen, cursor = [], None
    while True:
        page = call(
            workspace,
            "context_gc_analyze",
            project_id="p",
            target_tokens=tokens,
            max_tokens=1000,
            cursor=cursor,
        )
        seen += [c["segment_id"] for c in page["pruning_candidates"]]
        cursor = page["page"]["next_cursor"]
        if cursor is None:
            break
    assert seen[: len(plan["stash_segments"])] == plan["stash_segments"]
    assert sorted(seen) == sorted(ids)
    small = call(workspace, "context_analyze_usage", project_id="p", token_limit=limit * 10)
    assert small["suggested_actions"] == [] and "complete" not in json.dumps(small)
