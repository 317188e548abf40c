"""Every pair of writers of one card, in real processes at once: no update is lost.

The card store (``update_task``), the board (its ``update_task`` call) and the file tools
(``edit_file``) all write through core's one write path, so they queue on one lock keyed
by the card's real path, even when one of them reaches the card through a symlink.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import MakeWorkspace

ROUNDS = 30
CARD = ".cuedeck/cards/r4c3r5.md"
MARKER = "<!-- end of edits -->"

WRITER = f"""
import json, sys
from cuedeck.errors import Conflict
from cuedeck.workspace import open_workspace

root, kind, label, path = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
workspace = open_workspace(root)
tools = workspace.plugins.tools()
board = None
if kind == "board":
    from cuedeck_cli.board.api import BoardApi
    board = BoardApi(workspace)
print("ready", flush=True)
if sys.stdin.readline().strip() != "go":
    sys.exit("no start signal")
conflicts = 0
for number in range({ROUNDS}):
    line = f"{{label}}-{{number}}"
    if kind == "card":
        tools["update_task"].call(workspace, {{"id": "r4c3r5", "updates": {{"notes": line}}}})
    elif kind == "board":
        board.update_card("r4c3r5", {{"notes": line}})
    else:
        while True:  # an agent's loop: read, edit with the hash read, reread on 1005
            read = tools["get_file_content"].call(workspace, {{"file_path": path}})
            try:
                tools["edit_file"].call(workspace, {{
                    "file_path": path, "old_string": "{MARKER}",
                    "new_string": line + "\\n{MARKER}", "content_hash": read["content_hash"],
                }})
                break
            except Conflict:
                conflicts += 1
print(json.dumps({{"conflicts": conflicts}}))
"""


def _race(root: Path, writers: list[tuple[str, str, str]], tmp_path: Path) -> None:
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    processes = [
        subprocess.Popen(
            [sys.executable, str(script), str(root), kind, label, path],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for kind, label, path in writers
    ]
    for process in processes:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line == "ready\n", process.stderr.read() if process.stderr else line
    for process in processes:
        assert process.stdin is not None
        process.stdin.write("go\n")
        process.stdin.flush()
    for process in processes:
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
        json.loads(out.strip().splitlines()[-1])


PAIRS = [
    ("card", "file"),
    ("board", "file"),
    ("card", "board"),
    ("file", "file"),
    ("card", "card"),
    ("file-via-link", "card"),
]


@pytest.mark.slow
@pytest.mark.parametrize("pair", PAIRS, ids=["-".join(pair) for pair in PAIRS])
def test_two_writers_of_one_card_lose_nothing(
    make_workspace: MakeWorkspace, tmp_path: Path, pair: tuple[str, str]
) -> None:
    root = make_workspace(
        {CARD: f"---\nid: r4c3r5\ntitle: Race\nstatus: todo\n---\n# Race\n\n{MARKER}\n"}
    )
    (root / "linked").symlink_to(".cuedeck/cards", target_is_directory=True)
    writers = []
    for number, kind in enumerate(pair):
        via_link = kind == "file-via-link"
        path = "linked/r4c3r5.md" if via_link else CARD
        writers.append(("file" if via_link else kind, f"w{number}{kind[:4]}", path))
    _race(root, writers, tmp_path)
    text = (root / CARD).read_text()
    assert (root / "linked").is_symlink() and not (root / CARD).is_symlink()
    for _kind, label, _path in writers:
        for number in range(ROUNDS):
            assert text.count(f"{label}-{number}\n") == 1, f"{label}-{number} lost:\n{text}"
    assert text.count(MARKER) == 1
    assert text.startswith("---\nid: r4c3r5\n")
