"""A script that searches and exits never aborts (the background embedder is stopped)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = (
    "import cuedeck, time\n"
    "ws = cuedeck.open_workspace({root!r})\n"
    "ws.search('refresh token', limit=3)\n"
    "time.sleep(0.5)\n"  # the README's example: the embedder thread is at work now
)


@pytest.mark.slow
def test_the_readme_example_exits_0_every_time(tmp_path: Path) -> None:
    root = tmp_path / "demo"
    shutil.copytree(REPO / "examples" / "demo", root, ignore=shutil.ignore_patterns(".cache"))
    for run in range(20):
        env = {**os.environ, "CUEDECK_CACHE_DIR": str(tmp_path / f"cache-{run}")}  # cold
        done = subprocess.run(
            [sys.executable, "-c", SCRIPT.format(root=str(root))],
            capture_output=True, text=True, env=env, check=False,
        )  # fmt: skip
        assert (done.returncode, done.stderr) == (0, ""), run
