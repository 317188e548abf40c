"""The memory store on disk: what it keeps, what never reaches the disk, plain files out
and in, and the move of an older CueDeck's segment files into it."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from attrs import evolve as attrs_evolve
from click.testing import CliRunner

from cuedeck.workspace import Workspace, open_workspace
from cuedeck_cli.app import make_cli
from cuedeck_memory.segments import Segment, parse_file, render_file
from cuedeck_memory.store import STORE_PATH
from tests.memory.conftest import KEY, call, store_of

Capture = Callable[..., list[str]]
GITHUB = "ghp_kNwpQ5mdlHsFzGlSOGWn7Xr7ZVFsIOwoiS94"
SLACK = "xoxb-835115667737-2467709194573-g3AzIQ8O4qvGSxRBcMODeoPJ"
AWS = "AKIAPYCDYBK377OXTZQ6"


def on_disk(root: Path) -> bytes:
    """Every byte memory keeps on disk: the store, its WAL, and any file beside them."""
    store_of(open_workspace(root)).close()
    found = b""
    for path in sorted((root / ".cuedeck/memory").rglob("*")):
        if path.is_file():
            found += path.read_bytes()
    return found


def test_texts_and_values_come_back_exactly_in_a_new_process(
    workspace: Workspace, capture: Capture
) -> None:
    text = "line one\r\nline two\rthree\n\nfour\n" + "long words " * 40
    tags = ["a\u0085b", "c\u2028d", 'quote " and \\ slash', "é"]
    [segment_id] = capture(text, tags=tags, file_path="src/x y.py", line_range=[3, 9])
    fresh = store_of(open_workspace(workspace.root))
    segment = fresh.segment("p", segment_id)
    assert segment.text == text and list(segment.tags) == tags
    assert (segment.file_path, segment.line_range) == ("src/x y.py", (3, 9))
    call(fresh.workspace, "context_gc_pin", project_id="p", segment_ids=[segment_id])
    again = store_of(open_workspace(workspace.root)).segment("p", segment_id)
    assert again.pinned and again.text == text and list(again.tags) == tags
    # Stored once: the row holds the text as it is, the index no copy of it.
    db = sqlite3.connect(workspace.root / STORE_PATH)
    assert db.execute("SELECT body FROM segments").fetchone()[0] == text
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
    assert "segments_fts_content" not in tables and "segments_fts_docsize" not in tables
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def _index_segments(db: sqlite3.Connection) -> int:
    """How many segments FTS5 keeps the text index in (a segment's pages are rows of
    ``segments_fts_data`` whose id holds the segment's number above bit 37)."""
    return int(
        db.execute(
            "SELECT count(DISTINCT id >> 37) FROM segments_fts_data WHERE id >> 37 > 0"
        ).fetchone()[0]
    )


def test_the_text_index_is_merged_after_commits_not_inside_them(
    workspace: Workspace, capture: Capture
) -> None:
    """Each capture is a commit that adds a segment to the text index; FTS5 does not
    merge them inside the commit (automerge off), the store's upkeep thread does, after
    it, and every text stays found."""
    for n in range(12):
        capture(f"batch {n} of common words", f"and its own word{n}")
    database = store_of(workspace).database
    database.settle()
    db = sqlite3.connect(workspace.root / STORE_PATH)
    assert db.execute("SELECT v FROM segments_fts_config WHERE k = 'automerge'").fetchone() == (0,)
    assert _index_segments(db) <= 4  # twelve commits, merged by fours
    [common] = database.term_rows("common")
    assert len(common) == 12
    assert all(
        len(found) == 1 for found in database.term_rows(" ".join(f"word{n}" for n in range(12)))
    )
    db.execute("INSERT INTO segments_fts (segments_fts, rank) VALUES ('integrity-check', 0)")


def test_nothing_memory_writes_holds_a_secret(workspace: Workspace, capture: Capture) -> None:
    capture(
        f"the key is {KEY}",
        tags=[GITHUB],
        file_path=f"keys/{AWS}.txt",
        topic_id=SLACK,
        refs=[GITHUB],
        type="message",
    )
    call(workspace, "context_set_current_task", project_id="p", task_id=GITHUB)
    call(workspace, "context_create_task_snapshot", project_id="p", name=f"before {SLACK}")
    call(
        workspace,
        "context_analyze_usage",
        project_id="p",
        context_descriptors={"recent_messages": [{"role": "user", "content": f"use {AWS}"}]},
    )
    raw = on_disk(workspace.root)
    for secret in (KEY, GITHUB, SLACK, AWS):
        assert secret.encode() not in raw, secret
    assert call(workspace, "context_list_projects")["projects"] == ["p"]
    task = call(workspace, "context_get_task_context", project_id="p")
    assert task["task_id"].startswith("[REDACTED:github")
    export = CliRunner().invoke(
        make_cli(), ["-C", str(workspace.root), "memory", "export", "-p", "p"]
    )
    assert export.exit_code == 0, export.output
    for secret in (KEY, GITHUB, SLACK, AWS):
        assert secret.encode() not in on_disk(workspace.root)


def test_masking_switched_off_keeps_every_field(make_workspace: Any) -> None:
    workspace = open_workspace(make_workspace(config="[memory]\nmask_on_capture = false\n"))
    call(workspace, "context_set_current_task", project_id="p", task_id=GITHUB)
    call(workspace, "context_capture", project_id="p", segments=[{"text": KEY, "tags": [GITHUB]}])
    [segment] = call(workspace, "context_get_task_context", project_id="p")["segments"]
    assert segment["text"] == KEY and segment["tags"] == [GITHUB]


def test_export_gives_plain_files_and_import_takes_edits_back(
    workspace: Workspace, capture: Capture
) -> None:
    keep, edit = capture("keep me", "before the edit")
    cli = make_cli()
    out = CliRunner().invoke(cli, ["-C", str(workspace.root), "memory", "export", "-p", "p"])
    assert out.exit_code == 0, out.output
    folder = workspace.root / ".cuedeck/memory/export/p"
    assert sorted(os.listdir(folder)) == sorted([f"{keep}.md", f"{edit}.md"])
    parsed = parse_file((folder / f"{keep}.md").read_text(), segment_id=keep, project_id="p")
    assert parsed.text == "keep me"
    path = folder / f"{edit}.md"
    path.write_text(
        path.read_text()
        .replace("before the edit", "after, by hand")
        .replace("pinned: false", "pinned: true")
        .replace("tags: []", "tags:\n  - handmade")  # YAML syntax, not JSON
    )
    new = Segment(
        id="1m8new000000abc", type="note", text="written by hand", project_id="p", created_at=1.0
    )
    (folder / f"{new.id}.md").write_text(render_file(new))
    (folder / "broken.md").write_text("---\npinned: [unclosed\n---\nx\n")
    outside = workspace.root.parent / "secret.md"
    outside.write_text(render_file(attrs_evolve(new, id="leaky", text="outside")))
    (folder / "leaky.md").symlink_to(outside)
    done = CliRunner().invoke(
        cli, ["-C", str(workspace.root), "memory", "import", "-p", "p", str(folder), "--json"]
    )
    assert done.exit_code == 0, done.output
    reply = json.loads(done.output)
    assert reply["updated"] == [edit] and reply["added"] == [new.id]
    assert sorted((p["path"].rsplit("/", 1)[1], p["line"]) for p in reply["problems"]) == [
        ("broken.md", 2),
        ("leaky.md", 1),
    ]
    store = store_of(open_workspace(workspace.root))
    edited = store.segment("p", edit)
    assert (edited.text, edited.pinned, edited.tags) == ("after, by hand", True, ("handmade",))
    assert store.segment("p", new.id).text == "written by hand"
    hits = call(store.workspace, "context_get_working_set", project_id="p")
    assert {s["segment_id"] for s in hits["segments"]} == {keep, edit, new.id}
    outside = CliRunner().invoke(
        cli, ["-C", str(workspace.root), "memory", "import", "-p", "p", "/tmp", "--json"]
    )
    assert outside.exit_code == 1 and json.loads(outside.output)["error"]["code"] == 1004


def _legacy_workspace(root: Path) -> list[Segment]:
    """The files today's main writes: segment files, project.json, a snapshot, its index."""
    folder = root / ".cuedeck/memory/web"
    (folder / "segments").mkdir(parents=True)
    (folder / "snapshots").mkdir()
    made = [
        Segment(
            id="1m879xgecngadtf",
            type="decision",
            text="We keep sessions in redis.\r\n",
            project_id="web",
            created_at=1_790_000_000.0,
            task_id="c2c2c2",
            pinned=True,
        ),
        Segment(
            id="1m879xgecngadtg",
            type="log",
            text="build output " * 30,
            project_id="web",
            created_at=1_790_000_100.0,
            tier="stashed",
            tags=("ci",),
        ),
        Segment(
            id="1m879xgecngadth",
            type="note",
            text="see the decision",
            project_id="web",
            created_at=1_790_000_200.0,
            refs=("1m879xgecngadtf",),
        ),
    ]
    for segment in made:
        (folder / "segments" / f"{segment.id}.md").write_text(render_file(segment), newline="")
    (folder / "segments" / "1m879xbadbadbad.md").write_text("no frontmatter here\n")
    (folder / "project.json").write_text(json.dumps({"current_task": "c2c2c2", "updated_at": 1.0}))
    snapshot = {
        "snapshot_id": "snap-1m879xgecngzzz",
        "name": "before",
        "task_id": "c2c2c2",
        "segment_ids": [made[0].id],
        "working_ids": [made[0].id],
        "pinned_ids": [made[0].id],
        "tokens": 9,
        "created_at": 1_790_000_300.0,
    }
    (folder / "snapshots" / "snap-1m879xgecngzzz.json").write_text(json.dumps(snapshot))
    index = root / ".cuedeck/.cache/memory.sqlite3"
    index.parent.mkdir(parents=True)
    db = sqlite3.connect(index)
    db.execute(
        "CREATE TABLE segments (project TEXT, id TEXT, last_touched_at REAL, "
        "gc_survival_count INTEGER)"
    )
    db.execute("INSERT INTO segments VALUES ('web', '1m879xgecngadtg', 1790000500.0, 3)")
    db.commit()
    db.close()
    return made


def test_a_store_written_by_an_older_cuedeck_opens_with_every_segment(
    make_workspace: Any,
) -> None:
    from cuedeck.doctor import diagnose

    root = make_workspace()
    made = _legacy_workspace(root)
    workspace = open_workspace(root)
    store = store_of(workspace)
    for segment in made:
        moved = store.segment("web", segment.id)
        assert (moved.text, moved.pinned, moved.tier, moved.tags, moved.refs) == (
            segment.text,
            segment.pinned,
            segment.tier,
            segment.tags,
            segment.refs,
        )
    log = store.segment("web", made[1].id)
    assert (log.last_touched_at, log.gc_survival_count) == (1790000500.0, 3)
    assert store.current_task("web") == "c2c2c2"
    restored = call(workspace, "context_restore", project_id="web")
    assert restored["snapshot"]["name"] == "before"
    assert restored["segments"][0]["segment_id"] == made[0].id
    assert not (root / ".cuedeck/memory/web").exists()
    legacy = root / ".cuedeck/memory/.legacy/web/segments"
    assert len(list(legacy.glob("*.md"))) == 4  # kept, the unreadable one included
    [problem] = [p for p in diagnose(open_workspace(root)) if p.path and "memory" in p.path]
    assert (problem.path, problem.line, problem.code) == (
        ".cuedeck/memory/.legacy/web/segments/1m879xbadbadbad.md",
        1,
        1004,
    )
    # A second process finds it moved once, not twice.
    again = store_of(open_workspace(root))
    assert len(again.table.rows("web")) == 3


def test_a_restart_reads_the_tables_copy_and_only_what_changed_since(
    make_workspace: Any,
) -> None:
    import numpy as np

    from cuedeck_memory.store import RESAVE_ROWS, TABLE_PATH
    from cuedeck_memory.table import SegmentTable
    from cuedeck_memory.table_copy import load

    root = make_workspace()
    first = open_workspace(root)
    segments = [{"text": f"segment {n}", "tags": [f"t{n % 3}"]} for n in range(1000)]
    for _ in range(RESAVE_ROWS // 1000 + 1):
        ids = call(first, "context_capture", project_id="p", segments=segments)["segment_ids"]
        # References, resolved or not: the copy keeps them resolved.
        segments[0] = {"text": "refers", "refs": [ids[1], "a1a1a1", "not-yet"]}
    store = store_of(first)
    assert len(store.table.rows("p")) == 6000  # past the threshold, the copy was written
    store.close()  # waits for the copy, and brings it up to date (1,000 rows behind)
    copy = (root / TABLE_PATH).read_bytes()
    saved = load(copy, store.database.store_id(), store.database.version())
    assert saved is not None and len(saved) == 6000
    # Ids become strings when asked for: a few at first, all of them at once later.
    rows = store.table.rows("p")[[0, 2999, -1]]
    assert saved.segment_ids(rows) == store.table.segment_ids(rows)
    every = store.table.rows("p")
    assert saved.segment_ids(every) == store.table.segment_ids(every)
    assert saved.ids[rows].tolist() == store.table.segment_ids(rows)
    # Changes after the copy: a restart reads them from the store.
    [late] = call(first, "context_capture", project_id="p", segments=[{"text": "late"}])[
        "segment_ids"
    ]
    gone = store.table.segment_id(int(store.table.rows("p")[0]))
    store.delete("p", [gone])
    store.set_fields("p", [late], {"tier": "stashed"})
    store.survived("p")  # a GC run: every working row survives it, none is written
    store.close()
    restarted = store_of(open_workspace(root))
    table = restarted.table
    assert table.rowid("p", late) is not None and table.rowid("p", gone) is None
    full = SegmentTable()
    full.sync(restarted.database)
    live = full.rows(None)
    assert np.array_equal(table.rows(None), live)
    interned = {
        "project": "projects", "kind": "kinds", "task": "values", "file": "values",
        "topic": "values", "tagset": "tagsets",
    }  # fmt: skip
    for name, _ in SegmentTable.NUMERIC:
        mine, theirs = getattr(table, name)[live], getattr(full, name)[live]
        if name in interned:  # codes may differ; what they stand for may not
            mine = [getattr(table, interned[name]).strings[c] for c in mine]
            theirs = [getattr(full, interned[name]).strings[c] for c in theirs]
        assert np.array_equal(mine, theirs), name
    assert table.refs == full.refs
    for code, project in enumerate(full.projects.strings):
        assert table.ids_of(table.projects.find(project)) == full.ids_of(code)
    mine, theirs = table.links(), full.links()
    assert sorted(zip(mine.sources.tolist(), mine.targets.tolist(), strict=True)) == sorted(
        zip(theirs.sources.tolist(), theirs.targets.tolist(), strict=True)
    )
    assert len(mine.sources) == 5 and sorted(mine.cards) == sorted(theirs.cards)
    assert set(table.survived[live].tolist()) == {0, 1}  # the stashed one survived none
    # A copy of another store's table is not this one's.
    other = make_workspace()
    call(open_workspace(other), "context_capture", project_id="p", segments=[{"text": "x"}])
    (other / TABLE_PATH).parent.mkdir(parents=True, exist_ok=True)
    (other / TABLE_PATH).write_bytes(copy)
    assert len(store_of(open_workspace(other)).table.rows("p")) == 1
    assert load(b"not a table", "", 0) is None


def test_reading_memory_where_there_is_none_leaves_no_store(workspace: Workspace) -> None:
    from cuedeck.doctor import diagnose

    assert call(workspace, "context_list_projects")["projects"] == []
    usage = call(workspace, "context_analyze_usage", project_id="p")
    assert usage["usage_metrics"]["total_segments"] == 0
    diagnose(workspace)
    assert not (workspace.root / STORE_PATH).exists()
    call(workspace, "context_capture", project_id="p", segments=[{"text": "now there is"}])
    assert (workspace.root / STORE_PATH).is_file()


def test_a_batch_masked_in_one_pass_is_masked_as_one_by_one(workspace: Workspace) -> None:
    """A secret cut across two texts, or a text holding the joint, falls back to
    masking each text alone; either way every text comes out as it would alone."""
    from tests.core.test_masking import PEM_KEY

    head, tail = PEM_KEY.split("\n", 1)
    texts = [
        f"first {KEY}",
        head,  # a key cut in two: neither half alone is a whole key
        tail,
        "plain words",
        f"joint \n\u241e\n inside {GITHUB}",
        PEM_KEY,
    ]
    masker = store_of(workspace).masker()
    alone = [workspace.mask_session().mask(t) for t in texts]
    batch = masker.texts(texts)
    assert len(batch) == len(texts)
    for got, expected in zip(batch, alone, strict=True):
        assert got.split("#")[0] == expected.split("#")[0]  # numbering is per session
    assert KEY not in batch[0] and GITHUB not in batch[4] and "BEGIN" not in batch[5].split("]")[-1]


def test_a_served_capture_scans_each_text_once_and_keeps_no_secret(
    make_workspace: Callable[..., Path],
) -> None:
    """Served (as MCP and the CLI serve it), a capture masks its texts with the reply's
    session: each text is looked at once, for the disk and the reply alike, and no
    secret reaches either."""
    from cuedeck.plugins.host import make_plugin_host
    from cuedeck.serving.calls import serve
    from tests.core.test_masking_batches import Counting, CountingPlugin

    counting = Counting()
    plugins = make_plugin_host()
    plugins.register(CountingPlugin(counting), name="counting")
    workspace = open_workspace(make_workspace(), plugins=plugins)
    texts = [f"the key is {KEY}", f"the token is {GITHUB}", "zz-12345678 was here", "plain"]
    segments = [{"text": text, "tags": [SLACK], "topic_id": AWS} for text in texts]
    tool = workspace.plugins.tools()["context_capture"]
    reply = serve(tool, workspace, {"project_id": "p", "segments": segments})
    assert reply["captured"] == 4
    for text in (*texts, SLACK, AWS):
        assert counting.seen.count(text) == 1, text
    raw = on_disk(workspace.root)
    for secret in (KEY, GITHUB, SLACK, AWS, "zz-12345678"):
        assert secret.encode() not in raw and secret not in json.dumps(reply), secret


def test_no_file_tool_writes_the_store_whatever_path_reaches_it(
    workspace: Workspace, capture: Capture
) -> None:
    from cuedeck.errors import Protected
    from cuedeck.writes import sha256_bytes

    capture("kept as it is")
    root = workspace.root
    (root / "docs").mkdir()
    (root / "docs/deck").symlink_to("../.cuedeck", target_is_directory=True)
    store = root / STORE_PATH
    assert Path(f"{store}-wal").is_file() and Path(f"{store}-shm").is_file()  # WAL mode, open
    before = {p: p.read_bytes() for p in store.parent.iterdir() if p.is_file()}
    for path in (STORE_PATH, f"{STORE_PATH}-wal", f"{STORE_PATH}-shm",
                 "docs/deck/memory/memory.sqlite3", f"{STORE_PATH}-journal"):  # fmt: skip
        target = root / path
        digest = sha256_bytes(target.read_bytes()) if target.is_file() else "0" * 64
        for tool, arguments in (
            ("create_file", {"content": "not a store"}),
            ("edit_file", {"old_string": "SQLite", "new_string": "x", "content_hash": digest}),
            ("delete_file", {"content_hash": digest}),
        ):
            with pytest.raises(Protected) as refused:
                call(workspace, tool, file_path=path, **arguments)
            assert (refused.value.code, refused.value.data["reason"]) == (1013, "control"), tool
    assert {p: p.read_bytes() for p in store.parent.iterdir() if p.is_file()} == before
    assert [s["text"] for s in call(workspace, "context_get_working_set", project_id="p")[
        "segments"]] == ["kept as it is"]  # fmt: skip


def test_an_export_replaces_a_link_in_its_folder_and_never_writes_through_it(
    workspace: Workspace, capture: Capture
) -> None:
    from cuedeck_memory.archive import export_project

    [kept] = capture("exported")
    folder = workspace.root / ".cuedeck/memory/export/p"
    folder.mkdir(parents=True)
    outside = workspace.root.parent / "victim.md"
    outside.write_text("untouched\n")
    (folder / f"{kept}.md").symlink_to(outside)  # where the export writes
    (folder / "gone.md").symlink_to(outside)  # a stale name the export removes
    assert export_project(store_of(workspace), "p") == folder
    assert outside.read_text() == "untouched\n"
    assert sorted(os.listdir(folder)) == [f"{kept}.md"]
    written = folder / f"{kept}.md"
    assert not written.is_symlink()
    assert parse_file(written.read_text(), segment_id=kept, project_id="p").text == "exported"


def test_a_store_of_schema_2_gets_the_new_index_once_and_reads_its_texts(
    workspace: Workspace, capture: Capture
) -> None:
    """Schema 2 kept word positions in its index and compressed long texts: a store it
    wrote is reindexed on first open, and every text reads, ranks and deletes as before."""
    import zlib

    long_text = "the deploy script pushes release tags to the mirror " * 8
    [first, second] = capture(long_text, "a short note about kittens napping")
    store_of(workspace).close()
    db = sqlite3.connect(workspace.root / STORE_PATH, isolation_level=None)
    # Schema 2 counted GC runs in every row (here: two runs survived).
    db.execute("ALTER TABLE segments DROP COLUMN runs_seen")
    db.execute("DROP TABLE gc_runs")
    db.execute("UPDATE segments SET gc_survival_count = 2")
    db.execute("DROP TABLE segments_fts")
    db.execute(
        "CREATE VIRTUAL TABLE segments_fts USING fts5 (text, content='', "
        "tokenize='porter unicode61')"
    )
    for rowid, body in db.execute("SELECT rowid, body FROM segments").fetchall():
        db.execute("INSERT INTO segments_fts (rowid, text) VALUES (?, ?)", (rowid, body))
        if body == long_text:
            packed = zlib.compress(body.encode(), 1)
            db.execute("UPDATE segments SET body = ? WHERE rowid = ?", (packed, rowid))
    db.execute("UPDATE meta SET value = '2' WHERE key = 'schema'")
    db.close()

    fresh = open_workspace(workspace.root)
    assert store_of(fresh).segment("p", first).text == long_text
    assert store_of(fresh).segment("p", second).gc_survival_count == 2
    stashed = call(fresh, "context_stash", project_id="p", query="deploying")  # stemmed
    assert stashed["stashed_segments"] == [first]  # and a GC run: the working survive it
    assert store_of(open_workspace(workspace.root)).segment("p", second).gc_survival_count == 3
    found = call(fresh, "context_search_stashed", project_id="p", query="mirror")
    assert [(s["segment_id"], s["text"]) for s in found["segments"]] == [(first, long_text)]
    assert call(fresh, "context_stash", project_id="p", query="kittens")["stashed_segments"] == [
        second
    ]
    token = call(
        fresh,
        "context_gc_prune",
        project_id="p",
        segment_ids=[first],
        action="delete",
        confirm=True,
    )["confirmation_token"]
    call(
        fresh,
        "context_gc_prune",
        project_id="p",
        segment_ids=[first],
        action="delete",
        confirm=True,
        confirmation_token=token,
    )
    assert call(fresh, "context_search_stashed", project_id="p", query="mirror")["segments"] == []
    store_of(fresh).close()
    db = sqlite3.connect(workspace.root / STORE_PATH)
    assert db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == ("3",)
    db.execute("INSERT INTO segments_fts (segments_fts) VALUES ('integrity-check')")
