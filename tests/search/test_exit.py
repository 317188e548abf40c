"""A script that searched exits at once, prints nothing of CueDeck's, and its sections
still get their vectors: the embedding thread stops after its chunk and hands what is
left to the workspace's detached embedder."""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cuedeck import open_workspace
from cuedeck_search import detached
from tests.conftest import MakeWorkspace
from tests.search.test_detached import many_sections

REPO = Path(__file__).resolve().parents[2]
SCRIPT = (
    "import cuedeck, time\n"
    "ws = cuedeck.open_workspace({root!r})\n"
    "ws.search('refresh token', limit=3)\n"
    "time.sleep(0.5)\n"  # the README's example: the embedder thread is at work now
)
#: The short script of issue 37: a hybrid search, a line printed, the end.
HYBRID = (
    "import cuedeck\n"
    "found = cuedeck.open_workspace({root!r}).search('token of doc', mode='hybrid')\n"
    "print(found[0].answered_by, found[0].semantic_coverage)\n"
)


def wait_for_exit(pid: int, timeout: float) -> bool:
    """Whether process ``pid`` (not our child) ended within ``timeout`` seconds."""
    try:
        ending = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([ending], [], [], timeout)[0])
    finally:
        os.close(ending)


def handed_off(root: Path, timeout: float = 30.0) -> detached.EmbedderStatus:
    """The detached embedder's status once the process a script started at its exit has
    said it runs (polled with a deadline: the script is gone, nothing else tells)."""
    deadline = time.monotonic() + timeout
    while (found := detached.status(root)).pid is None:  # locked, not yet written: wait
        assert time.monotonic() < deadline, "no embedder was handed the rest"
        time.sleep(0.05)
    return found


def coverage(root: Path) -> float:
    return float(open_workspace(root).service("search").available_vectors()[2])


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
        handed = detached.status(root)
        if handed.running and handed.pid is not None:  # the hand-off of this run
            assert wait_for_exit(handed.pid, 120), run


@pytest.mark.slow
def test_a_short_hybrid_script_hands_its_embedding_off_and_prints_nothing(
    make_workspace: MakeWorkspace,
) -> None:
    root = many_sections(make_workspace, files=30)  # 330 sections: more than one chunk
    assert detached.status(root).state == "never"
    done = subprocess.run(
        [sys.executable, "-c", HYBRID.format(root=str(root))],
        capture_output=True, text=True, env=dict(os.environ), check=False, timeout=300,
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == "keyword 0.0\n"  # answered by keyword: nothing was embedded yet
    handed = handed_off(root)  # the detached embedder took the rest
    assert handed.state in ("running", "finished") and handed.pid is not None
    assert wait_for_exit(handed.pid, 300)
    assert detached.status(root).state == "finished"
    assert coverage(root) == 1.0
    again = subprocess.run(
        [sys.executable, "-c", HYBRID.format(root=str(root))],
        capture_output=True, text=True, env=dict(os.environ), check=False, timeout=300,
    )  # fmt: skip
    assert (again.returncode, again.stderr, again.stdout) == (0, "", "hybrid 1.0\n")


@pytest.mark.slow
def test_a_script_that_waits_for_the_thread_needs_no_hand_off(
    make_workspace: MakeWorkspace,
) -> None:
    root = many_sections(make_workspace, files=2)
    script = (
        "import cuedeck\n"
        f"ws = cuedeck.open_workspace({str(root)!r})\n"
        "ws.search('token of doc', mode='hybrid')\n"
        "assert ws.service('search').background_embedder().wait(120)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True, text=True, env=dict(os.environ), check=False, timeout=300,
    )  # fmt: skip
    assert (done.returncode, done.stderr, done.stdout) == (0, "", "")
    assert detached.status(root).state == "never"  # finished here: nothing handed off
    assert coverage(root) == 1.0
