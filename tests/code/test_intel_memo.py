"""The resolver's memo (a chain's first name per file, a member lookup for every file)
gives the graph that looking everything up afresh gives: on real code (cuedeck-code's
own source) and on re-export chains around the lookup's step limit."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.code.test_intel_refresh import EDGES_BY_NAME
from tests.conftest import MakeWorkspace

pytest.importorskip("cuedeck_code")

from cuedeck_code.intel.resolve import MAX_STEPS

#: Re-exports deep enough that the step limit cuts the deepest short (16 at a limit of 24).
DEPTH = MAX_STEPS * 2 // 3


def _chains() -> dict[str, str]:
    """``m0.Target`` re-exported by ``m1`` ... ``m{DEPTH - 1}``, each ``mK`` importing the one
    before; ``use.py`` reaches ``Target.run`` through each (and subclasses it), in
    scopes of different depths, so one lookup is made with many step counts before it."""
    files = {"m0.py": "class Target:\n    def run(self):\n        return 1\n"}
    for k in range(1, DEPTH):
        files[f"m{k}.py"] = f"from m{k - 1} import Target\n"
    lines = [f"import m{k}" for k in range(DEPTH)]
    for k in range(DEPTH):
        lines += [
            f"def top_{k}():",
            f"    m{k}.Target().run()",
            f"    made = m{k}.Target()",
            "    made.run()",
            f"class Holder{k}:",
            f"    kept = m{k}.Target()",
            "    def go(self):",
            "        self.kept.run()",
            f"        m{k}.Target.run(self.kept)",
            f"class Sub{k}(m{k}.Target):",
            "    def again(self):",
            "        return self.run()",
        ]
    files["use.py"] = "\n".join(lines) + "\n"
    return files


def _cold_edges(root: Path) -> set[tuple[Any, ...]]:
    import cuedeck

    workspace = cuedeck.open_workspace(root)
    workspace.refresh()
    intel = workspace.service("code_intel")
    intel.store.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{intel.store.path}{suffix}").unlink(missing_ok=True)
    intel.forget()
    store = intel.ready()
    rows = store.query(EDGES_BY_NAME)
    store.close()
    return set(rows)


def test_memoised_lookups_give_the_graph_fresh_lookups_give(
    make_workspace: MakeWorkspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    import cuedeck_code
    from cuedeck_code.intel.resolve import FileResolver

    root = make_workspace(_chains())
    source = Path(cuedeck_code.__file__).parent
    shutil.copytree(source, root / "cuedeck_code", ignore=shutil.ignore_patterns("*.pyc"))

    memoised = _cold_edges(root)
    monkeypatch.setattr(FileResolver, "memoise", False)
    fresh = _cold_edges(root)

    assert memoised == fresh
    reached = {row[3] for row in fresh if row[0] == "use.py" and row[2] == "m0.py"}
    assert reached == {"Target", "Target.run"}
    # The step limit is met on the way: the deepest re-exports name nothing.
    through = {
        int(row[1].rpartition("_")[2])
        for row in fresh
        if row[0] == "use.py" and row[1].startswith("top_") and row[3] == "Target.run"
    }
    assert 0 in through and DEPTH - 1 not in through
    inherited = {row[1] for row in fresh if row[0] == "use.py" and row[3] == "Target.run"}
    assert "Sub0.again" in inherited and f"Sub{DEPTH - 1}.again" not in inherited
    # Real code resolves across its files (an edge into another module's class).
    assert any(
        row[0].startswith("cuedeck_code/intel/") and row[2] == "cuedeck_code/intel/resolve.py"
        for row in fresh
    )
