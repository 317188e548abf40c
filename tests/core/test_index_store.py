"""The index's journal: which documents changed since a version, for other processes."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cuedeck import open_workspace
from cuedeck.index import store as index_store
from cuedeck.workspace import Workspace
from tests.conftest import MakeWorkspace

FILES = {
    "README.md": "# Project\n",
    "docs/same.md": "# Same\n",
    "docs/guide.md": "# Guide\n## Install\n",
    "docs/api.md": "# API\n## Login\nPOST /login\n",
}


def bump_mtime(path: Path) -> None:
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))


def sha(root: Path, path: str) -> str:
    return hashlib.sha256((root / path).read_bytes()).hexdigest()


def refreshed(root: Path) -> Workspace:
    """A new process's workspace, refreshed (by a walk: no watcher here)."""
    workspace = open_workspace(root)
    workspace.refresh()
    return workspace


def test_the_journal_names_what_changed_since_a_version(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(FILES)
    before = refreshed(root).index.stored_version()
    (root / "README.md").write_text("# Project\n\nNow with words.\n", encoding="utf-8")
    (root / "docs/new.md").write_text("# New\n", encoding="utf-8")
    (root / "docs/guide.md").unlink()
    (root / "docs/api.md").rename(root / "docs/login.md")
    bump_mtime(root / "docs/same.md")  # touched, same content: not a change
    index = refreshed(root).index
    now, changed = index.stored_changes(before)
    assert now[0] == before[0] and now[1] > before[1]
    assert changed == {
        "README.md": sha(root, "README.md"),
        "docs/new.md": sha(root, "docs/new.md"),
        "docs/login.md": sha(root, "docs/login.md"),
        "docs/guide.md": None,
        "docs/api.md": None,
    }
    assert index.stored_changes(now) == (now, {})


def test_what_the_journal_cannot_tell_is_unknown(
    make_workspace: MakeWorkspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_workspace(FILES)
    index = refreshed(root).index
    version = index.stored_version()
    assert index.stored_changes(("another database", version[1]))[1] is None
    assert index.stored_changes((version[0], version[1] + 1))[1] is None  # not written yet
    monkeypatch.setattr(index_store, "JOURNAL_KEEP", 2)
    for n in range(3):
        (root / f"docs/page{n}.md").write_text(f"# Page {n}\n", encoding="utf-8")
        refreshed(root)
    now, changed = open_workspace(root).index.stored_changes(version)
    assert now[1] == version[1] + 3 and changed is None  # the first entry was dropped
    rebuilt = open_workspace(root)
    rebuilt.refresh(rebuild=True)
    assert rebuilt.index.stored_version()[0] != version[0]  # a new database, a new epoch
    assert rebuilt.index.stored_changes(now)[1] is None


def test_a_write_of_many_files_says_anything_may_have_changed(
    make_workspace: MakeWorkspace,
) -> None:
    root = make_workspace(FILES)
    version = refreshed(root).index.stored_version()
    for n in range(index_store.JOURNAL_PATHS + 1):
        (root / f"many/page{n}.md").parent.mkdir(exist_ok=True)
        (root / f"many/page{n}.md").write_text(f"# Page {n}\n", encoding="utf-8")
    index = refreshed(root).index
    now, changed = index.stored_changes(version)
    assert now[1] == version[1] + 1 and changed is None
    (root / "README.md").write_text("# Project, again\n", encoding="utf-8")
    assert refreshed(root).index.stored_changes(now)[1] == {"README.md": sha(root, "README.md")}


def test_stored_keys_are_every_document_with_their_version(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(FILES)
    index = refreshed(root).index
    version, keys = open_workspace(root).index.stored_keys()
    assert version == index.stored_version()
    assert sorted(keys) == index.keys() == sorted((p, sha(root, p)) for p in FILES)


def test_a_large_write_leaves_no_write_ahead_log_behind(make_workspace: MakeWorkspace) -> None:
    """`cue index` ends without closing its connection: a cold index of many files left
    a log as large as the database beside it until the cut after large writes."""
    pages = {f"pages/p{n}.md": f"# Page {n}\n\n{'Some words here. ' * 40}\n" for n in range(600)}
    root = make_workspace(pages)
    cue = str(Path(sys.executable).with_name("cue"))
    done = subprocess.run([cue, "-C", str(root), "index"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    database = root / ".cuedeck" / ".cache" / "index.sqlite3"
    log = Path(f"{database}-wal")
    assert database.stat().st_size > 200_000  # the 600 pages are in the database itself
    assert not log.exists() or log.stat().st_size == 0
    # A small write afterwards leaves the log small (it is not cut: that costs a sync).
    (root / "pages" / "p1.md").write_text("# Page 1\n\nChanged.\n", encoding="utf-8")
    done = subprocess.run([cue, "-C", str(root), "index"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert log.stat().st_size < 100_000
    assert len(pages) > index_store.JOURNAL_PATHS
