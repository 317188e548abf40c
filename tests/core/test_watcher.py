"""The workspace's watcher: a command learns what changed without a stat of every file."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cuedeck import open_workspace
from cuedeck.watch import watcher as freshness
from cuedeck.workspace import Workspace
from cuedeck.writes import sha256_bytes
from tests.conftest import MakeWorkspace

pytestmark = pytest.mark.skipif(not freshness.supported(), reason="inotify is Linux's")

FILES = {f"docs/page{n}.md": f"# Page {n}\n\nNothing special on page {n}.\n" for n in range(12)}


@pytest.fixture
def watched(make_workspace: MakeWorkspace) -> Iterator[Path]:
    """A workspace with its watcher running (started as `cue search` starts it)."""
    root = make_workspace(FILES)
    watcher = subprocess.Popen(
        [sys.executable, "-m", "cuedeck.watch.watcher", str(root)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    assert watcher.stdout is not None
    assert watcher.stdout.readline().startswith("watching ")  # listening from here on
    yield root
    watcher.terminate()
    watcher.wait()
    watcher.stdout.close()


def refreshed(root: Path) -> int:
    """Files a new process's refresh looked at (all of them when it walked)."""
    workspace = open_workspace(root)
    workspace.index.watch = True
    return workspace.refresh().seen


def test_a_new_process_reads_only_what_changed(watched: Path) -> None:
    everything = len(FILES)
    assert refreshed(watched) == everything  # no stamp yet: it walks, then records one
    assert refreshed(watched) == 0  # nothing changed: no walk, nothing read
    edited = watched / "docs/page1.md"
    with edited.open("r+", encoding="utf-8") as handle:  # in place: the folder stays as it was
        handle.seek(0, os.SEEK_END)
        handle.write("\nThe word quokka now appears.\n")
    (watched / "docs/new.md").write_text("# New\n\nA wombat page.\n", encoding="utf-8")
    (watched / "docs/page2.md").unlink()
    (watched / "docs/page3.md").rename(watched / "docs/renamed.md")
    workspace = open_workspace(watched)
    workspace.index.watch = True
    assert workspace.refresh().seen == 5  # edited, created, deleted, both names of the rename
    paths = set(workspace.index.paths)
    assert {"docs/new.md", "docs/renamed.md"} <= paths
    assert not {"docs/page2.md", "docs/page3.md"} & paths
    assert workspace.document("docs/page1.md").sha256 == sha256_bytes(edited.read_bytes())


def watching(root: Path) -> tuple[Workspace, list[str]]:
    """A new process's workspace asking the watcher, and the SQL its index will run."""
    workspace = open_workspace(root)
    workspace.index.watch = True
    seen: list[str] = []
    workspace.index.store.db().set_trace_callback(seen.append)
    return workspace, seen


def stat_reads(seen: list[str]) -> list[str]:
    """The statements that read stored files' stats."""
    return [s for s in seen if s.startswith("SELECT") and "mtime_ns" in s and "documents" in s]


def test_nothing_changed_reads_no_stored_row(watched: Path) -> None:
    assert refreshed(watched) == len(FILES)
    workspace, seen = watching(watched)
    assert workspace.refresh().seen == 0
    assert [s for s in seen if "FROM documents" in s] == []  # 40,000 files cost nothing
    assert workspace.document("docs/page1.md").headings[0].text == "Page 1"
    assert "docs/page2.md" in workspace.index and "docs/gone.md" not in workspace.index
    assert workspace.index.language("docs/page3.md") == "markdown"
    assert stat_reads(seen) and all("WHERE path IN" in s for s in stat_reads(seen))
    assert workspace.index.paths == sorted(FILES)  # a listing reads every row
    assert workspace.index.summary()["languages"] == {"markdown": len(FILES)}


def test_what_changed_reads_its_own_rows_only(watched: Path) -> None:
    assert refreshed(watched) == len(FILES)
    with (watched / "docs/page1.md").open("a", encoding="utf-8") as handle:
        handle.write("\nEdited.\n")
    (watched / "docs/page2.md").unlink()
    (watched / "docs/page3.md").touch()  # same content
    workspace, seen = watching(watched)
    stats = workspace.refresh()
    assert (stats.seen, stats.parsed, stats.reused, stats.removed) == (3, 1, 1, 1)
    assert stat_reads(seen) and all("WHERE path IN" in s for s in stat_reads(seen))
    assert workspace.index.sha("docs/page1.md") == sha256_bytes(
        (watched / "docs/page1.md").read_bytes()
    )
    assert "docs/page2.md" not in workspace.index.paths
    again = open_workspace(watched)  # the changes were stored: a walk finds nothing new
    assert again.refresh().parsed == 0 and again.index.paths == workspace.index.paths


def test_a_new_folder_makes_the_next_process_walk(watched: Path) -> None:
    assert refreshed(watched) == len(FILES)
    (watched / "notes").mkdir()
    (watched / "notes/a.md").write_text("# A\n", encoding="utf-8")
    assert refreshed(watched) == len(FILES) + 1  # the folder's content was never listed
    (watched / "notes/b.md").write_text("# B\n", encoding="utf-8")
    assert refreshed(watched) == 1  # the new folder is watched now


def test_a_rebuilt_index_is_walked_again(watched: Path) -> None:
    assert refreshed(watched) == len(FILES)
    workspace = open_workspace(watched)
    workspace.index.watch = True
    assert workspace.refresh(rebuild=True).seen == len(FILES)
    assert not (watched / freshness.STAMP).exists()
    assert refreshed(watched) == len(FILES)


@pytest.mark.slow
def test_cue_search_sees_edit_create_delete_and_rename(watched: Path) -> None:
    cue = str(Path(sys.executable).with_name("cue"))

    def search(word: str) -> list[str]:
        done = subprocess.run(
            [cue, "-C", str(watched), "search", "--mode", "keyword", "--json", word],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        return [r["path"] for r in json.loads(done.stdout)["results"]]

    assert search("page") and (watched / freshness.STAMP).exists()
    with (watched / "docs/page4.md").open("a", encoding="utf-8") as handle:
        handle.write("\nEdited in place: platypus.\n")
    assert search("platypus") == ["docs/page4.md"]
    (watched / "docs/fresh.md").write_text("# Fresh\n\nAn echidna.\n", encoding="utf-8")
    assert search("echidna") == ["docs/fresh.md"]
    (watched / "docs/fresh.md").rename(watched / "docs/moved.md")
    assert search("echidna") == ["docs/moved.md"]
    (watched / "docs/moved.md").unlink()
    assert search("echidna") == []


def test_a_long_lived_reader_catches_up_through_the_watcher(
    watched: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A script or notebook keeps one workspace: each catch_up costs a question to the
    watcher, and edits made since the last one are read, path by path."""
    from cuedeck.watch.reflects import reflects

    workspace = open_workspace(watched)
    workspace.catch_up()  # the first read walks, and notes where the watcher stands
    assert reflects(workspace)["watch"] == "watcher"
    with (watched / "docs/page5.md").open("a", encoding="utf-8") as handle:
        handle.write("\n## Numbat\n")
    (watched / "docs/page6.md").unlink()
    walks: list[object] = []
    monkeypatch.setattr(workspace.index, "refresh", lambda **options: walks.append(options))
    workspace.catch_up()
    assert walks == []  # what changed, not a walk
    assert "Numbat" in [h.text for h in workspace.document("docs/page5.md").headings]
    assert "docs/page6.md" not in workspace.index
    block = reflects(workspace)
    assert (block["watch"], block["pending"]) == ("watcher", [])


def test_without_a_watcher_the_reply_says_it_is_a_snapshot(make_workspace: MakeWorkspace) -> None:
    from cuedeck.watch.reflects import reflects

    root = make_workspace(FILES)
    workspace = open_workspace(root)
    workspace.catch_up()
    (root / "docs/page5.md").write_text("# Renamed page\n", encoding="utf-8")
    workspace.catch_up()  # no watcher runs: nothing to ask, and no walk either
    assert workspace.document("docs/page5.md").headings[0].text == "Page 5"
    block = reflects(workspace)
    assert (block["watch"], block["pending"]) == ("none", None)


def test_the_watcher_runs_nothing_planted_where_it_is_started(
    make_workspace: MakeWorkspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client may create any file in the workspace; the watcher started from there
    (as `cue search` run in it starts it) imports none of them."""
    import time

    from tests.conftest import plant_shadows

    root = make_workspace(FILES)
    marker = tmp_path / "planted-code-ran"
    plant_shadows(root, marker)
    monkeypatch.chdir(root)
    watcher = os.pidfd_open(freshness.start(root))  # not our child: followed by its pidfd
    try:
        deadline = time.monotonic() + 60
        while freshness.status(root) is None:  # polling a socket: no event says it listens
            assert not select.select([watcher], [], [], 0)[0], (root / freshness.LOG).read_text()
            assert time.monotonic() < deadline, "the watcher never answered"
            time.sleep(0.05)
    finally:
        signal.pidfd_send_signal(watcher, signal.SIGTERM)
        assert select.select([watcher], [], [], 30)[0], "the watcher did not end"
        os.close(watcher)
    assert not marker.exists(), marker.read_text()


def test_a_started_watcher_is_nobodys_child(make_workspace: MakeWorkspace) -> None:
    """A server starts watchers all day: each runs in a session of its own, not as a
    child of the process that started it (no zombie when it ends, none reported as left
    running at exit), and it leaves when told to."""
    root = make_workspace(FILES)
    pid = freshness.start(root, idle=60)
    watcher = os.pidfd_open(pid)
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        assert int(fields[1]) != os.getpid()  # its parent is not this process
        assert os.getsid(pid) == pid  # it leads a session of its own
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
    finally:
        signal.pidfd_send_signal(watcher, signal.SIGTERM)
        assert select.select([watcher], [], [], 30)[0], "the watcher did not end"
        os.close(watcher)
