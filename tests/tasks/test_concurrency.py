"""Eight real processes updating one card at once: no lost and no corrupted update."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cuedeck.workspace import Workspace
from cuedeck_tasks.store import CardStore

WORKERS = 8

WORKER = """
import json, sys
from pathlib import Path
from cuedeck.errors import CueError
from cuedeck_tasks.store import CardChanges, CardStore

root, worker, mode = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
store = CardStore(root)
base = store.get("b2b2b2")  # every worker reads the same version before the start
print("ready", flush=True)
if sys.stdin.readline().strip() != "go":  # the start signal; EOF: the test gave up
    sys.exit("no start signal")
try:
    if mode == "tags":
        changes = CardChanges(add_tags=(f"w{worker}",), note=f"note from {worker}")
        store.update("b2b2b2", changes)
    elif mode == "assignee":
        store.update("b2b2b2", CardChanges(assignee=f"w{worker}"), base=base)
    elif mode == "notes":
        store.update("b2b2b2", CardChanges(note=f"note from {worker}"), base=base)
    print(json.dumps({"ok": True}))
except CueError as exc:
    print(json.dumps({"ok": False, "code": exc.code, "data": exc.data}))
"""


def race(root: Path, mode: str, tmp_path: Path) -> list[dict[str, Any]]:
    """Start the workers, release them together, and collect what each reports."""
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    processes = [
        subprocess.Popen(
            [sys.executable, str(script), str(root), str(i), mode],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(WORKERS)
    ]
    for process in processes:  # each says "ready" once it has read the card
        assert process.stdout is not None
        assert process.stdout.readline() == "ready\n", "a worker did not start"
    for process in processes:
        assert process.stdin is not None
        process.stdin.write("go\n")
        process.stdin.flush()
    results = []
    for process in processes:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        results.append(json.loads(out))
    return results


@pytest.mark.slow
def test_eight_writers_of_one_card_lose_nothing(chain: Workspace, tmp_path: Path) -> None:
    before = CardStore(chain.root).get("b2b2b2")
    results = race(chain.root, "tags", tmp_path)
    assert all(result["ok"] for result in results)
    after = CardStore(chain.root).get("b2b2b2")
    assert not after.problems
    assert sorted(after.tags) == sorted(f"w{i}" for i in range(WORKERS))
    assert (after.title, after.status, after.depends_on) == (
        before.title,
        before.status,
        before.depends_on,
    )
    text = (chain.root / after.path).read_text()
    assert text.count("\n## Notes\n") == 1
    for i in range(WORKERS):
        assert text.count(f": note from {i}\n") == 1


@pytest.mark.slow
def test_stale_writers_of_the_same_field_get_a_conflict(chain: Workspace, tmp_path: Path) -> None:
    results = race(chain.root, "assignee", tmp_path)
    winners = [r for r in results if r["ok"]]
    losers = [r for r in results if not r["ok"]]
    assert len(winners) == 1
    assert len(losers) == WORKERS - 1
    final = CardStore(chain.root).get("b2b2b2")
    assert final.assignee is not None and final.assignee.startswith("w")
    for loser in losers:
        assert loser["code"] == 1005
        assert loser["data"]["fields"] == ["assignee"]
        assert len(loser["data"]["current_hash"]) == 64


@pytest.mark.slow
def test_stale_writers_of_other_fields_are_merged(chain: Workspace, tmp_path: Path) -> None:
    results = race(chain.root, "notes", tmp_path)
    assert all(result["ok"] for result in results)
    text = (chain.root / ".cuedeck/cards/b2b2b2.md").read_text()
    assert sorted(
        line.split(": ", 1)[1] for line in text.splitlines() if line.startswith("- ")
    ) == [f"note from {i}" for i in range(WORKERS)]
