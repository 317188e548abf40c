"""`cue index` and `cue doctor` say what was not indexed, and why, per kind of file."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import MakeWorkspace

CUE = [sys.executable, "-m", "cuedeck_cli"]

FILES: dict[str, str | bytes] = {
    ".gitignore": "*.log\nscratch/\n",
    "docs/index.rst": "Shop\n====\n\nWelcome.\n",
    "docs/guide.adoc": "= Guide\n\nText.\n",
    "CHANGES.txt": "2.0\n\nAdyen.\n",
    "data/a.json": "{}\n",
    "data/b.json": "[]\n",
    "data/c.csv": "a,b\n",
    "run.log": "x\n",
    "scratch/notes.md": "# scratch\n",
    "image.md": b"\x00\x01binary",
    ".cuedeck/cards/abc123.md": "---\nid: abc123\ntitle: T\nstatus: active\n---\n"
    "See @run.log#L1 and @data/a.json#L1.\n",
}


def cue(root: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CUE, "-C", root, *args], capture_output=True, text=True, timeout=120, check=False
    )


def test_index_lists_what_was_not_indexed_by_why(make_workspace: MakeWorkspace) -> None:
    root = str(make_workspace(FILES))
    done = cue(root, "index")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[1:] == [
        "languages: asciidoc 1, markdown 1, plaintext 1, rst 1",
        "not indexed:",
        "  4 files: no parser (2 .json, 1 (no suffix), 1 .csv)",
        "  1 file: binary",
        "  1 file: ignored by .gitignore",
        "  1 folder: ignored by .gitignore",
    ]
    report = json.loads(cue(root, "index", "--json").stdout)
    assert report["not_indexed"] == {"no parser": 4, "binary": 1, "ignored": 1}
    assert report["no_parser"] == {".json": 2, "(no suffix)": 1, ".csv": 1}
    assert report["folders_not_entered"] == {"ignored": 1}


def test_doctor_says_a_reference_names_a_file_not_indexed(make_workspace: MakeWorkspace) -> None:
    root = str(make_workspace(FILES))
    done = cue(root, "doctor")
    assert done.returncode == 1, done.stdout
    assert (
        "error[1001] .cuedeck/cards/abc123.md:6: reference '@run.log#L1' points at run.log, "
        "which is not indexed: a .gitignore ignores it\n"
        "  help: remove the .gitignore rule that ignores it, or set [index] gitignore = false"
    ) in done.stdout
    assert "warning[1011] image.md: not indexed: binary content" in done.stdout
    # data/a.json, cited by its lines, is indexed as plain text: no error, one kind less.
    assert "data/a.json" not in done.stdout
    assert "  3 files: no parser (1 (no suffix), 1 .csv, 1 .json)" in done.stdout
    assert "languages: asciidoc 1, markdown 1, plaintext 1, rst 1, text 1" in done.stdout
    report = json.loads(cue(root, "doctor", "--json").stdout)
    assert report["index"]["not_indexed"] == {"no parser": 3, "binary": 1, "ignored": 1}
