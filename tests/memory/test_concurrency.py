"""The store under real processes: two capturing at once, one killed mid-ingest, and a
restart answering while another process is in the middle of a write."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cuedeck.workspace import open_workspace
from cuedeck_memory.store import STORE_PATH
from tests.memory.conftest import call, store_of

pytestmark = pytest.mark.slow

WRITER = """
import sys
from cuedeck.workspace import open_workspace

root, name = sys.argv[1], sys.argv[2]
workspace = open_workspace(root)
tool = workspace.plugins.tools()["context_capture"]
print("ready", flush=True)
sys.stdin.readline()  # start together
for batch in range(20):
    segments = [{"text": f"{name} batch {batch} item {n}"} for n in range(5)]
    tool.call(workspace, {"project_id": "shared", "segments": segments})
    tool.call(workspace, {"project_id": "shared", "segments": [{"text": f"{name} single {batch}"}]})
print("done", flush=True)
"""

#: Captures batches for ever, printing each batch's ids once the call has returned
#: (acknowledged), until it is killed.
INGEST = """
import sys
from cuedeck.workspace import open_workspace

workspace = open_workspace(sys.argv[1])
tool = workspace.plugins.tools()["context_capture"]
batch = 0
while True:
    segments = [{"text": f"batch {batch} item {n} " + "word " * 40} for n in range(200)]
    reply = tool.call(workspace, {"project_id": "crash", "segments": segments})
    print(" ".join(reply["segment_ids"]), flush=True)
    batch += 1
"""

#: Holds the store's write lock in the middle of a write until told to commit.
HOLDER = """
import sys
from cuedeck_memory.segments import Segment
from cuedeck.workspace import open_workspace

store = open_workspace(sys.argv[1]).service("context")
late = [
    Segment(id=f"late{n}", type="note", text=f"late {n}", project_id="p", created_at=1.0,
            last_touched_at=1.0, tokens=2)
    for n in range(3)
]
database = store.database
store.table  # opened
with database.writing() as version:
    database.insert(late, ["00" * 32] * 3, version)
    print("holding", flush=True)
    sys.stdin.readline()
print("committed", flush=True)
"""


def test_two_processes_capturing_at_once_lose_nothing(make_workspace: Any) -> None:
    root: Path = make_workspace()
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(root), name],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for name in ("alpha", "beta")
    ]
    for writer in writers:
        assert writer.stdout is not None and writer.stdout.readline() == "ready\n"
    for writer in writers:
        assert writer.stdin is not None
        writer.stdin.write("go\n")
        writer.stdin.flush()
    for writer in writers:
        out, _ = writer.communicate(timeout=120)
        assert writer.returncode == 0 and out == "done\n"
    workspace = open_workspace(root)
    working = call(workspace, "context_get_working_set", project_id="shared", max_tokens=100_000)
    texts = {s["text"] for s in working["segments"]}
    assert working["segment_count"] == 240 and len(texts) == 240
    assert "beta batch 19 item 4" in texts and "alpha single 0" in texts


def test_a_process_killed_mid_ingest_loses_nothing_it_acknowledged(make_workspace: Any) -> None:
    root: Path = make_workspace()
    writer = subprocess.Popen(
        [sys.executable, "-c", INGEST, str(root)], stdout=subprocess.PIPE, text=True
    )
    assert writer.stdout is not None
    acknowledged: list[str] = []
    for _ in range(6):  # six batches acknowledged; the seventh is under way
        acknowledged += writer.stdout.readline().split()
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait(timeout=60)
    writer.stdout.close()
    assert writer.returncode == -signal.SIGKILL
    db = sqlite3.connect(root / STORE_PATH)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    db.close()
    store = store_of(open_workspace(root))
    kept = store.get("crash", acknowledged)
    assert len(acknowledged) == 1200 and set(kept) == set(acknowledged)
    stored = len(store.table.rows("crash"))
    assert stored % 200 == 0 and stored >= 1200  # whole batches only
    # The text index agrees with the rows: every acknowledged text is found.
    found = call(store.workspace, "context_get_working_set", project_id="crash", max_tokens=100_000)
    assert found["segment_count"] == stored
    [hits] = store.database.term_rows("batch")
    assert len(hits) == stored


def test_a_restart_answers_while_another_process_is_mid_write(
    make_workspace: Any, capture: Any
) -> None:
    root: Path = make_workspace()
    first = open_workspace(root)
    call(first, "context_capture", project_id="p", segments=[{"text": "before the restart"}])
    store_of(first).close()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdin is not None
    try:
        assert holder.stdout.readline() == "holding\n"
        # A new process answers from what is committed, without waiting for the writer.
        restarted = open_workspace(root)
        usage = call(restarted, "context_analyze_usage", project_id="p")
        assert usage["usage_metrics"]["total_segments"] == 1
        holder.stdin.write("commit\n")
        holder.stdin.flush()
        assert holder.stdout.readline() == "committed\n"
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
        holder.stdout.close()
    # Its next answer sees the other process's rows.
    after = call(restarted, "context_analyze_usage", project_id="p")
    assert after["usage_metrics"]["total_segments"] == 4
