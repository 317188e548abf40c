"""SQLite files opened by several processes at once, and by one opener only
(cuedeck.system.databases)."""

from __future__ import annotations

import ast
import sys
import textwrap

import pytest

from tests.conftest import REPO, needs_extras
from tests.conftest import run_script as run

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the race forks processes")

#: Rounds of three processes opening one new file at the same moment; each process
#: prints what its open ended in. Before write_ahead, about one open in ten of a new
#: file failed with "database is locked" (SQLite does not wait for the lock the switch
#: to WAL needs), so 20 rounds missed it with a chance of about one in a million.
RACE = textwrap.dedent("""
    import json, multiprocessing, os, tempfile

    from pathlib import Path

    OPEN = {open!r}
    # Imported before forking: each process only opens.
    if OPEN == "memory":
        from cuedeck_memory.database import MemoryDatabase
    else:
        from cuedeck.system.databases import open_db

    def opener(path, barrier, results):
        barrier.wait()
        try:
            if OPEN == "memory":
                store = MemoryDatabase(Path(path))
                store.db
                store.close()
            else:
                connection = open_db(Path(path))
                mode = connection.execute("PRAGMA journal_mode").fetchone()[0]
                connection.close()
                assert mode == "wal", mode
            results.put("ok")
        except Exception as exc:
            results.put(f"{{type(exc).__name__}}: {{exc}}")

    context = multiprocessing.get_context("fork")
    outcomes = {{}}
    for _ in range(20):
        path = os.path.join(tempfile.mkdtemp(), "store.sqlite3")
        barrier, results = context.Barrier(3), context.Queue()
        processes = [
            context.Process(target=opener, args=(path, barrier, results)) for _ in range(3)
        ]
        for process in processes:
            process.start()
        for _ in processes:
            outcome = results.get(timeout=120)
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
        for process in processes:
            process.join()
    print(json.dumps(outcomes))
""")


def test_processes_opening_a_new_file_together_all_get_wal_mode() -> None:
    assert run(RACE.format(open="plain")) == {"ok": 60}


@needs_extras
def test_processes_opening_a_new_memory_store_together_all_open_it() -> None:
    pytest.importorskip("cuedeck_memory")
    assert run(RACE.format(open="memory")) == {"ok": 60}


def test_every_package_opens_sqlite_through_the_one_opener() -> None:
    """No module but cuedeck.system.databases calls ``sqlite3.connect``: every file gets
    the same wait for a busy writer, WAL switched on safely, and its folder made."""
    calls = []
    for path in sorted((REPO / "packages").glob("*/src/**/*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        calls += [
            f"{path.relative_to(REPO)}:{node.lineno}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and node.attr == "connect"
            and isinstance(node.value, ast.Name) and node.value.id == "sqlite3"
        ]  # fmt: skip
    opener = "packages/cuedeck-core/src/cuedeck/system/databases.py"
    assert calls and all(call.startswith(opener) for call in calls), calls
