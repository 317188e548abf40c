"""Bulk work on every core (cuedeck.system.parallel), run in fresh processes.

Workers are forked only in a process without other threads, which pytest's process may
not be (other tests leave threads behind), so each case runs a script in a child
interpreter and reads what it printed.
"""

from __future__ import annotations

import sqlite3
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_script as run

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="workers are forked on Linux")


JOB = textwrap.dedent("""
    import json, os, threading
    from cuedeck.system import parallel
    from cuedeck.progress import reporting_to

    PARENT = os.getpid()
    heard, told = [], []

    def job(chunk, tick):
        for done, _ in enumerate(chunk, start=1):
            tick(done)
        return [(item * item, os.getpid()) for item in chunk]

    def run():
        with reporting_to(lambda done, total, message: told.append((done, total, message))):
            parts = parallel.map_chunks(
                job, list(range(100)), message="Squaring", min_items=10,
                progress=lambda done, total: heard.append((done, total)),
            )
        squares = [square for part in parts for square, _ in part]
        pids = sorted({pid for part in parts for _, pid in part})
        return {
            "squares": squares, "chunks": len(parts), "in_parent": pids == [PARENT],
            "workers": len([pid for pid in pids if pid != PARENT]),
            "heard": heard[-1], "told": told[-1], "ticks": len(heard),
        }
""")


def test_chunks_run_in_forked_workers_and_come_back_in_order() -> None:
    result = run(JOB + "\nprint(json.dumps(run()))\n", CUEDECK_WORKERS="2")
    assert result["squares"] == [n * n for n in range(100)]
    assert result["chunks"] == 8  # 2 workers, 4 chunks each
    # Forked, at most two workers (on a busy machine one may take every chunk).
    assert not result["in_parent"] and result["workers"] in (1, 2)
    # Progress is told here, chunk by chunk, ending at the total.
    assert result["heard"] == [100, 100] and result["ticks"] == 8
    assert result["told"] == [100, 100, "Squaring"]


def test_work_stays_here_when_another_thread_runs() -> None:
    script = JOB + textwrap.dedent("""
        stop = threading.Event()
        other = threading.Thread(target=stop.wait)
        other.start()
        try:
            print(json.dumps(run()))
        finally:
            stop.set()
            other.join()
        """)
    result = run(script, CUEDECK_WORKERS="2")
    assert result["squares"] == [n * n for n in range(100)]
    assert result["chunks"] == 1 and result["in_parent"]
    assert result["ticks"] == 100  # the job's own ticks, item by item


def test_one_worker_or_a_short_list_stays_here() -> None:
    assert run(JOB + "\nprint(json.dumps(run()))\n", CUEDECK_WORKERS="1")["in_parent"]
    short = JOB.replace("list(range(100))", "list(range(5))")
    result = run(short + "\nprint(json.dumps(run()))\n", CUEDECK_WORKERS="2")
    assert result["in_parent"] and result["squares"] == [0, 1, 4, 9, 16]


def test_a_few_large_files_are_worth_forking_for() -> None:
    few = JOB.replace("list(range(100))", "list(range(20))").replace("min_items=10", "size=SIZE")
    big = run(
        few.replace("SIZE", "1_000_000") + "\nprint(json.dumps(run()))\n", CUEDECK_WORKERS="2"
    )
    assert not big["in_parent"] and big["squares"] == [n * n for n in range(20)]
    small = run(
        few.replace("SIZE", "999_999") + "\nprint(json.dumps(run()))\n", CUEDECK_WORKERS="2"
    )
    assert small["in_parent"]


def test_a_worker_that_dies_leaves_the_work_to_this_process() -> None:
    script = JOB.replace(
        "def job(chunk, tick):\n",
        "def job(chunk, tick):\n    if os.getpid() != PARENT:\n        os._exit(3)\n",
    )
    result = run(script + "\nprint(json.dumps(run()))\n", CUEDECK_WORKERS="2")
    assert result["squares"] == [n * n for n in range(100)]
    assert result["in_parent"]


def test_an_error_of_the_job_reaches_the_caller() -> None:
    script = JOB.replace(
        "def job(chunk, tick):\n",
        "def job(chunk, tick):\n    raise ValueError('bad chunk')\n",
    )
    script += textwrap.dedent("""
        try:
            run()
        except ValueError as exc:
            print(json.dumps(str(exc)))
        """)
    assert run(script, CUEDECK_WORKERS="2") == "bad chunk"


def _files(root: Path, count: int) -> None:
    for n in range(count):
        folder = root / f"part{n % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        links = f"See [the next](../part{(n + 1) % 7}/page{n + 1}.md)." if n % 3 else ""
        (folder / f"page{n}.md").write_text(
            f"---\ntags: [t{n % 5}]\n---\n# Page {n}\n\nIntro of page {n}. {links}\n\n"
            f"## Usage {n}\n\n```sh\ncommand --flag {n}\n```\n\nMore words about item {n}.\n"
        )
    (root / "part0" / "image.md").write_bytes(b"\x89PNG\x00\x00binary")


INDEX = textwrap.dedent("""
    import json
    from pathlib import Path
    from cuedeck.system import parallel
    from cuedeck.workspace import Workspace

    parallel.MIN_ITEMS = 10
    forked = []
    original = parallel._forked
    parallel._forked = lambda *args: forked.append(True) or original(*args)
    workspace = Workspace(Path(ROOT))
    stats = workspace.refresh()
    left_out = sorted((p.path, p.code) for p in workspace.index.left_out)
    documents = {p: workspace.index.get(p).tokens for p in workspace.index.paths}
    print(json.dumps({
        "forked": bool(forked), "parsed": stats.parsed, "left_out": left_out,
        "tokens": documents,
    }))
""")


def _rows(root: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(root / ".cuedeck" / ".cache" / "index.sqlite3") as connection:
        query = "SELECT path, size, sha256, data FROM documents ORDER BY path"
        return connection.execute(query).fetchall()


@pytest.mark.slow
def test_an_index_built_by_workers_equals_one_built_here(tmp_path: Path) -> None:
    roots = []
    for name in ("forked", "here"):
        root = tmp_path / name
        _files(root, 120)
        (root / ".cuedeck").mkdir()
        roots.append(root)
    forked = run(INDEX.replace("ROOT", repr(str(roots[0]))), CUEDECK_WORKERS="2")
    here = run(INDEX.replace("ROOT", repr(str(roots[1]))), CUEDECK_WORKERS="1")
    assert forked.pop("forked") and not here.pop("forked")
    assert forked == here
    assert forked["parsed"] == 120 and len(forked["tokens"]) == 120
    assert [path for path, _ in forked["left_out"]] == ["part0/image.md"]
    assert _rows(roots[0]) == _rows(roots[1])
