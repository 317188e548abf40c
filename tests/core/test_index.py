"""The SQLite index: incremental refresh, invalidation, rebuilds and concurrent writers."""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from cuedeck import open_workspace
from cuedeck.errors import LockError
from cuedeck.index.parsed import SCHEMA_VERSION, RefreshStats
from cuedeck.layout import INDEX_DB
from cuedeck.writes import locked
from tests.conftest import MakeWorkspace

FILES = {
    ".cuedeck/cards/abc123.md": "---\nid: abc123\ntitle: Card\n---\n# Card\nSee @doc/api#Login\n",
    ".cuedeck/docs/api.md": "# API\n## Login\nPOST /login\n",
    "README.md": "# Project\n",
    "docs/guide.md": "# Guide\n## Install\n",
}


def bump_mtime(path: Path) -> None:
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))


def test_cold_then_warm_restart_reuses_everything(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(FILES)
    cold = open_workspace(root).refresh()
    assert (cold.seen, cold.parsed, cold.reused, cold.removed) == (4, 4, 0, 0)
    assert (root / INDEX_DB).is_file()
    warm_workspace = open_workspace(root)
    warm = warm_workspace.refresh()
    assert (warm.seen, warm.parsed, warm.reused) == (4, 0, 4)
    assert warm_workspace.document(".cuedeck/docs/api.md").headings[1].text == "Login"
    assert sorted(warm_workspace.documents) == sorted(FILES)


def test_touched_file_with_same_content_is_not_parsed(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(FILES)
    workspace = open_workspace(root)
    workspace.refresh()
    bump_mtime(root / "README.md")
    stats = workspace.refresh()
    assert (stats.parsed, stats.reused) == (0, 4)
    again = open_workspace(root).refresh()  # the new mtime was stored
    assert again.parsed == 0


def test_changed_added_and_deleted_files(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(FILES)
    workspace = open_workspace(root)
    workspace.refresh()
    (root / "docs/guide.md").write_text("# Guide\n## Install\n## Upgrade\n", encoding="utf-8")
    bump_mtime(root / "docs/guide.md")
    (root / "docs/new.md").write_text("# New\n", encoding="utf-8")
    (root / "README.md").unlink()
    stats = workspace.refresh()
    assert (stats.seen, stats.parsed, stats.removed) == (4, 2, 1)
    assert [h.text for h in workspace.document("docs/guide.md").headings][-1] == "Upgrade"
    assert "README.md" not in workspace.documents
    restarted = open_workspace(root)
    assert restarted.refresh().parsed == 0
    assert sorted(restarted.documents) == sorted(
        [".cuedeck/cards/abc123.md", ".cuedeck/docs/api.md", "docs/guide.md", "docs/new.md"]
    )


def test_corrupt_cache_is_rebuilt_with_a_warning(
    make_workspace: MakeWorkspace, caplog: pytest.LogCaptureFixture
) -> None:
    root = make_workspace(FILES)
    with open_workspace(root) as workspace:
        workspace.refresh()
    database = root / INDEX_DB
    for suffix in ("-wal", "-shm"):
        Path(str(database) + suffix).unlink(missing_ok=True)
    database.write_bytes(b"this is not a database" * 100)
    with caplog.at_level(logging.WARNING, logger="cuedeck"):
        stats = open_workspace(root).refresh()
    assert stats.rebuilt
    assert stats.parsed == 4
    assert any("rebuilding" in record.getMessage() for record in caplog.records)
    assert open_workspace(root).refresh().parsed == 0


def _refreshed_after(
    make_workspace: MakeWorkspace,
    caplog: pytest.LogCaptureFixture,
    change: Callable[[sqlite3.Connection], object],
) -> RefreshStats:
    """A refresh of an indexed workspace after ``change`` to its cache's database."""
    root = make_workspace(FILES)
    with open_workspace(root) as workspace:
        workspace.refresh()
    with sqlite3.connect(root / INDEX_DB) as connection:
        change(connection)
    with caplog.at_level(logging.WARNING, logger="cuedeck"):
        return open_workspace(root).refresh()


def test_old_schema_version_is_rebuilt(
    make_workspace: MakeWorkspace, caplog: pytest.LogCaptureFixture
) -> None:
    stats = _refreshed_after(
        make_workspace,
        caplog,
        lambda db: db.execute("UPDATE meta SET value = '0' WHERE key = 'schema'"),
    )
    assert stats.rebuilt and stats.parsed == 4
    assert [record.getMessage() for record in caplog.records] == [
        f"the index cache was built by another version of CueDeck (format 0, now "
        f"{SCHEMA_VERSION}); rebuilding it"
    ]  # in words, not a dump of the cache's meta table


def test_a_cache_built_with_other_parsers_says_which_by_name(
    make_workspace: MakeWorkspace, caplog: pytest.LogCaptureFixture
) -> None:
    def another_parser(connection: sqlite3.Connection) -> None:
        (now,) = connection.execute("SELECT value FROM meta WHERE key = 'parsers'").fetchone()
        connection.execute(
            "UPDATE meta SET value = ? WHERE key = 'parsers'",
            (now + ";org=*.org@orgmode_plugin",),
        )

    stats = _refreshed_after(make_workspace, caplog, another_parser)
    assert stats.rebuilt
    assert [record.getMessage() for record in caplog.records] == [
        "the index cache was built with another setting (parsers: org (orgmode_plugin) removed); "
        "rebuilding it"
    ]


def test_rebuild_flag_parses_everything(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(FILES)
    workspace = open_workspace(root)
    workspace.refresh()
    stats = workspace.refresh(rebuild=True)
    assert stats.rebuilt and stats.parsed == 4


def test_gitignore_include_and_exclude(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(
        {
            ".gitignore": "build/\nsecret-*.md\n",
            ".cuedeck/docs/secret-plan.md": "# Cards and docs are always indexed\n",
            "build/out.md": "# ignored by .gitignore\n",
            "secret-notes.md": "# ignored by pattern\n",
            "sub/.gitignore": "local.md\n",
            "sub/local.md": "# ignored by nested .gitignore\n",
            "sub/kept.md": "# kept\n",
            "node_modules/pkg/README.md": "# excluded by default\n",
            "vendor/lib.md": "# excluded by config\n",
            "notes.org": "no parser reads it",
        },
        config='[index]\nexclude = ["node_modules/", "vendor/"]\n',
    )
    assert sorted(open_workspace(root).documents) == [
        ".cuedeck/docs/secret-plan.md",
        "sub/kept.md",
    ]
    only_docs = make_workspace(
        {"docs/a.md": "# A\n", "other/b.md": "# B\n"},
        config='[index]\ninclude = ["docs/**/*.md"]\n',
    )
    assert sorted(open_workspace(only_docs).documents) == ["docs/a.md"]


def test_gitignore_can_be_switched_off(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(
        {".gitignore": "generated/\n", "generated/out.md": "# B\n"},
        config="[index]\ngitignore = false\n",
    )
    assert list(open_workspace(root).documents) == ["generated/out.md"]


def test_own_output_and_cache_are_never_indexed(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({".cuedeck/SCENE.md": "# Scene\n", ".cuedeck/.cache/x.md": "# x\n"})
    assert list(open_workspace(root).documents) == []


_REFRESHER = textwrap.dedent(
    """
    import sys
    from cuedeck import open_workspace
    for _ in range(int(sys.argv[2])):
        open_workspace(sys.argv[1]).refresh()
        print("refreshed", flush=True)
    """
)


@pytest.mark.slow
def test_two_processes_refreshing_at_once_do_not_corrupt_the_cache(
    make_workspace: MakeWorkspace,
) -> None:
    files = {f"docs/page{n:03d}.md": f"# Page {n}\n\n## Part\n\n@doc/x{n}\n" for n in range(150)}
    root = make_workspace(files)
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", _REFRESHER, str(root), "15"], stdout=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    # Change files each time both workers report a refresh, while they start the next one
    # (a worker that is done reports "" from then on).
    for round_ in range(20):
        for worker in workers:
            assert worker.stdout is not None
            worker.stdout.readline()
        for n in range(0, 150, 7):
            page = root / f"docs/page{n:03d}.md"
            page.write_text(f"# Page {n} v{round_}\n\n## Part\n", encoding="utf-8")
    for worker in workers:
        worker.communicate(timeout=120)
    assert [worker.returncode for worker in workers] == [0, 0]
    database = root / INDEX_DB
    with sqlite3.connect(database) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    workspace = open_workspace(root)
    workspace.refresh()
    for path, document in workspace.documents.items():  # the cache matches the files
        data = (root / path).read_bytes()
        assert document.sha256 == hashlib.sha256(data).hexdigest()
        assert document.headings[0].text == data.decode().splitlines()[0].removeprefix("# ")


def test_lock_timeout_names_the_holder(tmp_path: Path) -> None:
    lock = tmp_path / "index.lock"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys\nfrom pathlib import Path\nfrom cuedeck.writes import locked\n"
            # Holds the lock until the test closes its stdin (or kills it).
            "with locked(Path(sys.argv[1])):\n    print('held', flush=True)\n"
            "    sys.stdin.read()\n",
            str(lock),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(LockError) as caught, locked(lock, timeout=0.2):
            pass
        assert caught.value.code == 1007
        assert caught.value.data["holder_pid"] == holder.pid
    finally:
        holder.kill()
        holder.communicate()
