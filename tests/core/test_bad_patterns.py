"""A bad `.gitignore` line is data: skipped with a `cue doctor` warning, as git skips it
(issue 35, finding 6). A client can write one; it must not break every command."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cuedeck import open_workspace
from cuedeck.doctor import diagnose
from cuedeck.index.globs import Globs, pattern_problem
from cuedeck.serving.read_doc import read_doc
from tests.conftest import MakeWorkspace

CUE = str(Path(sys.executable).with_name("cue"))
#: Lines git accepts (it skips what it cannot use) that pathspec refused with an error,
#: and one that matches a long name in minutes.
BAD_LINES = ["[z-a]", "!", "\\", "*a*a*a*a*a*a*b"]
GITIGNORE = "build/\n" + "\n".join(BAD_LINES) + "\n*.log\n"


@pytest.fixture
def root(make_workspace: MakeWorkspace) -> Path:
    return make_workspace(
        {
            ".gitignore": GITIGNORE,
            "docs/guide.md": "# Guide\n\nHow to deploy.\n",
            "build/out.md": "# Built\n",
            "debug.log": "noise\n",
            "sub/.gitignore": "!\n",
            ".cuedeck/cards/dep001.md": "---\ntitle: Deploy\nstatus: active\n---\n# Deploy\n\n"
            "See @doc/guide.\n",
            "sub/notes.md": "# Notes\n\nKept.\n",
            ("a" * 200) + ".md": "# Long\n",
        }
    )


def test_bad_lines_are_skipped_and_the_others_still_apply(root: Path) -> None:
    workspace = open_workspace(root)
    started = time.monotonic()
    workspace.refresh()
    assert time.monotonic() - started < 10  # the slow line never ran
    paths = set(workspace.index.paths)
    assert {"docs/guide.md", "sub/notes.md"} <= paths
    assert not {"build/out.md", "debug.log"} & paths  # the good lines around them hold
    assert read_doc(workspace, "docs/guide.md")["content"].startswith("# Guide")


def test_doctor_names_each_skipped_line(root: Path) -> None:
    problems = [p for p in diagnose(open_workspace(root)) if p.code == 1017]
    where = sorted((p.path, p.line) for p in problems)
    assert where == [(".gitignore", 2), (".gitignore", 3), (".gitignore", 4), (".gitignore", 5),
                     ("sub/.gitignore", 1)]  # fmt: skip
    assert all(p.severity == "warning" for p in problems)
    assert "more than 3 * wildcards" in next(p.message for p in problems if p.line == 5)


@pytest.mark.slow
def test_the_commands_work_and_doctor_warns(root: Path) -> None:
    for args in (["index", "--json"], ["scene", "--dry-run", "--no-clipboard"]):
        done = subprocess.run(
            [CUE, "-C", str(root), *args], capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr
    doctor = subprocess.run(
        [CUE, "-C", str(root), "doctor", "--json"], capture_output=True, text=True, timeout=120
    )
    found = json.loads(doctor.stdout)["problems"]
    assert {(p["path"], p["line"]) for p in found if p["code"] == 1017} >= {(".gitignore", 2)}


def test_what_a_line_may_be() -> None:
    assert pattern_problem("*.py") is None and pattern_problem("# [z-a]") is None
    assert pattern_problem("**/build/**/*.o") is None  # ** is not a * wildcard
    assert pattern_problem("*a*b*c") is None
    assert pattern_problem("*a*b*c*d") is not None
    assert "not a valid pattern" in (pattern_problem("[z-a]") or "")
    globs = Globs(["*.py", "!", "build/"])
    assert globs.match("x.py") and globs.match("build/") and [n for n, _, _ in globs.invalid] == [2]
