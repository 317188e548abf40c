"""The one file watch (cuedeck.watch.files): on real files, read by take(), callbacks,
a thread's iterator and asyncio, with inotify and with stamps."""

from __future__ import annotations

import asyncio
import queue
import threading
from pathlib import Path

import pytest

from cuedeck.watch.files import Changes, FileWatch, inotify_supported

METHODS = [
    pytest.param(False, marks=pytest.mark.skipif(not inotify_supported(), reason="Linux")),
    True,
]


def _tree(tmp_path: Path) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n")
    (tmp_path / ".cuedeck" / ".cache").mkdir(parents=True)
    (tmp_path / ".git").mkdir()
    return tmp_path


class Inbox:
    """The batches a watch delivers from now on (subscribed before the files change)."""

    def __init__(self, watch: FileWatch) -> None:
        self.batches: queue.Queue[Changes] = queue.Queue()
        self.unsubscribe = watch.subscribe(self.batches.put)

    def until(self, wanted: set[str], timeout: float = 10.0) -> Changes:
        """The batches merged until they name every path ``wanted``."""
        seen = Changes()
        while not wanted <= seen.paths:
            seen = seen | self.batches.get(timeout=timeout)
        return seen


@pytest.mark.parametrize("polling", METHODS)
def test_edits_creations_deletions_and_renames_are_reported(tmp_path: Path, polling: bool) -> None:
    root = _tree(tmp_path)
    with FileWatch(root, polling=polling, poll=0.05) as watch:
        assert watch.method == ("stamps" if polling else "inotify")
        inbox: queue.Queue[Changes] = queue.Queue()
        watch.subscribe(inbox.put)
        (root / "docs" / "a.md").write_text("# A, longer\n")
        (root / "docs" / "b.md").write_text("# B\n")
        (root / "docs" / "b.md").rename(root / "docs" / "c.md")
        (root / "note.txt").write_text("x")
        (root / "note.txt").unlink()
        (root / "kept.md").write_text("kept\n")
        seen = Changes()
        while "kept.md" not in seen.paths:
            seen = seen | inbox.get(timeout=10)
    assert {"docs/a.md", "docs/c.md", "kept.md"} <= seen.paths
    assert not polling or "note.txt" not in seen.paths  # stamps never saw it live


@pytest.mark.parametrize("polling", METHODS)
def test_the_cache_and_version_control_are_not_watched(tmp_path: Path, polling: bool) -> None:
    root = _tree(tmp_path)
    with FileWatch(root, polling=polling, poll=0.05) as watch:
        inbox = Inbox(watch)
        (root / ".cuedeck" / ".cache" / "index.db").write_text("rows")
        (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
        (root / "after.md").write_text("# After\n")  # written last: its report ends the wait
        seen = inbox.until({"after.md"})
    assert seen.paths == {"after.md"}


def test_accept_narrows_what_is_reported(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    with FileWatch(root, accept=lambda rel: rel.endswith(".md")) as watch:
        inbox = Inbox(watch)
        (root / "docs" / "skip.txt").write_text("x")
        (root / "docs" / "take.md").write_text("# Take\n")
        seen = inbox.until({"docs/take.md"})
    assert seen.paths == {"docs/take.md"}


@pytest.mark.skipif(not inotify_supported(), reason="inotify is Linux's")
def test_take_sees_a_write_that_returned_and_folders_make_it_unknown(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    with FileWatch(root) as watch:
        assert not watch.take()
        (root / "docs" / "a.md").write_text("# A again\n")
        assert watch.take() == Changes(frozenset({"docs/a.md"}))  # no wait: queued already
        (root / "guides").mkdir()
        found = watch.take()
        assert found.unknown and "guides" in found.paths
        (root / "guides" / "setup.md").write_text("# Setup\n")  # the new folder is watched
        assert watch.take().paths == {"guides/setup.md"}


@pytest.mark.skipif(not inotify_supported(), reason="inotify is Linux's")
def test_changes_within_the_debounce_make_one_batch(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    with FileWatch(root, debounce=0.3) as watch:
        inbox: queue.Queue[Changes] = queue.Queue()
        watch.subscribe(inbox.put)
        for number in range(5):
            (root / "docs" / f"n{number}.md").write_text(f"# {number}\n")
        batch = inbox.get(timeout=10)
    assert batch.paths == {f"docs/n{number}.md" for number in range(5)}


def test_a_failing_subscriber_does_not_stop_the_others(tmp_path: Path) -> None:
    root = _tree(tmp_path)

    def broken(changes: Changes) -> None:
        raise RuntimeError("a subscriber's bug")

    with FileWatch(root) as watch:
        watch.subscribe(broken)
        inbox = Inbox(watch)
        (root / "one.md").write_text("1")
        inbox.until({"one.md"})  # the broken one was called first, and dropped
        (root / "two.md").write_text("2")
        assert "two.md" in inbox.until({"two.md"}).paths


def test_a_thread_iterates_and_ends_when_the_watch_closes(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    watch = FileWatch(root)
    got: queue.Queue[Changes] = queue.Queue()
    ended = threading.Event()

    def read() -> None:
        for changes in watch.batches():
            got.put(changes)
        ended.set()

    reader = threading.Thread(target=read)
    reader.start()
    while watch.thread is None:  # subscribed: the watch's thread starts with the first
        threading.Event().wait(0.01)
    (root / "x.md").write_text("x")
    assert "x.md" in got.get(timeout=10).paths
    watch.close()
    assert ended.wait(10)
    reader.join(10)
    assert watch.thread is not None and not watch.thread.is_alive()


def test_asyncio_reads_the_batches_and_ticks(tmp_path: Path) -> None:
    root = _tree(tmp_path)

    async def main() -> list[Changes]:
        seen: list[Changes] = []
        with FileWatch(root) as watch:
            async for changes in watch.changes(tick=0.05):
                seen.append(changes)
                if len(seen) == 1:
                    await asyncio.to_thread((root / "y.md").write_text, "y")
                if "y.md" in changes.paths:
                    return seen
        return seen

    seen = asyncio.run(asyncio.wait_for(main(), 20))
    assert "y.md" in seen[-1].paths
