"""Every child Python process starts through cuedeck.system.spawn (see its docstring)."""

from __future__ import annotations

import re
import sys

from cuedeck.system import spawn
from tests.conftest import REPO

#: A command line that starts this interpreter with options: ``[sys.executable, "-m", ...]``
#: (keys of caches list ``sys.executable`` too, followed by no option).
STARTS_PYTHON = re.compile(r"\[\s*sys\.executable\s*,\s*[\"']-")


def test_no_package_starts_python_but_through_spawn() -> None:
    found = []
    for path in sorted((REPO / "packages").glob("*/src/**/*.py")):
        if path.name == "spawn.py" and path.parent.name == "system":
            continue
        text = path.read_text(encoding="utf-8")
        found += [f"{path.relative_to(REPO)}" for _ in STARTS_PYTHON.finditer(text)]
    assert found == []


def test_a_child_has_neither_its_folder_nor_the_callers_on_its_path() -> None:
    probe = "import json, os, sys; print(json.dumps([os.getcwd(), sys.path]))"
    child = spawn.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    import json

    cwd, path = json.loads(child.stdout)
    assert cwd == spawn.owned_directory()
    assert cwd not in path and "" not in path
    assert spawn.python_command("pip", "list")[:3] == [sys.executable, "-P", "-m"]


#: Starting any program: only the two modules of cuedeck.system do, and `cue open` (the
#: person's own editor, on a file they named).
STARTS_A_PROGRAM = re.compile(
    r"subprocess\.(?:Popen|run|call|check_output|check_call)\(|os\.(?:spawn|system|popen)"
)
MAY_START = {
    "packages/cuedeck-core/src/cuedeck/system/spawn.py",
    "packages/cuedeck-core/src/cuedeck/system/git.py",
    "packages/cuedeck-tasks/src/cuedeck_tasks/finder.py",
}


def test_every_program_starts_through_the_system_modules() -> None:
    """Git runs through cuedeck.system.git (the repository pinned), Python through spawn."""
    found = {
        str(path.relative_to(REPO))
        for path in sorted((REPO / "packages").glob("*/src/**/*.py"))
        if STARTS_A_PROGRAM.search(path.read_text(encoding="utf-8"))
    }
    assert found <= MAY_START
