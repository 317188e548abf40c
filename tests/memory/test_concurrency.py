"""Two processes capturing into one project at once: nothing is lost."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cuedeck.workspace import open_workspace
from tests.memory.conftest import call

pytestmark = pytest.mark.slow

WRITER = """
import sys
from cuedeck.plugins import get_tools
from cuedeck.workspace import open_workspace

root, name, go = sys.argv[1], sys.argv[2], sys.argv[3]
workspace = open_workspace(root)
tool = get_tools(workspace.plugins)["context_capture"]
print("ready", flush=True)
sys.stdin.readline()  # start together
for batch in range(20):
    segments = [{"text": f"{name} batch {batch} item {n}"} for n in range(5)]
    tool.call(workspace, {"project_id": "shared", "segments": segments})
    tool.call(workspace, {"project_id": "shared", "segments": [{"text": f"{name} single {batch}"}]})
print("done", flush=True)
"""


def test_two_processes_capturing_at_once_lose_nothing(make_workspace: Any) -> None:
    root: Path = make_workspace()
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(root), name, "go"],
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
    files = list((root / ".cuedeck/memory/shared/segments").glob("*.md"))
    assert len(files) == 240
    workspace = open_workspace(root)
    working = call(workspace, "context_get_working_set", project_id="shared", max_tokens=1_000_000)
    texts = {s["text"] for s in working["segments"]}
    assert working["segment_count"] == 240 and len(texts) == 240
    assert "beta batch 19 item 4" in texts and "alpha single 0" in texts
