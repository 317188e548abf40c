"""The code graph's build lock and its detached builder, in real processes.

``cue index`` leaves a big build to a background process and answers at once; a question
asked meanwhile waits for it and answers as a foreground build would; a second builder
exits; a sync killed between its names and its edges is completed by the next; two
processes syncing at once read each file once between them.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from cuedeck import open_workspace
from cuedeck.serving.background import background_processes
from cuedeck_code.intel import detached
from cuedeck_code.intel.store import GraphStore
from tests.conftest import process_ended

if TYPE_CHECKING:
    from pathlib import Path

    from tests.conftest import MakeWorkspace

FILES = {
    "pkg/__init__.py": "",
    "pkg/core.py": "def helper(x):\n    return x + 1\n\n\nclass Client:\n"
    "    def send(self):\n        return helper(2)\n",
    "pkg/a.py": "from pkg.core import helper\n\n\ndef run():\n    return helper(1)\n",
    "pkg/b.py": "from pkg import core\n\n\ndef go():\n    return core.Client().send()\n",
    "pkg/c.py": "from pkg.core import helper as h\n\n\ndef use():\n    return h(3)\n",
}
#: Every sync in these tests has more files to read than this: the builder takes them.
SMALL = {"CUEDECK_CODE_GRAPH_BACKGROUND_FILES": "1"}


def cue(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cuedeck_cli", "-C", str(root), *args],
        capture_output=True, text=True, env={**os.environ, **env}, timeout=300, check=False,
    )  # fmt: skip


def answers(root: Path) -> list[str]:
    """What ``cue graph`` says of the workspace's graph (callers and references)."""
    found = []
    for args in (("callers", "helper"), ("refs", "Client.send"), ("callers", "send")):
        done = cue(root, "graph", *args)
        assert done.returncode == 0, done.stderr
        found.append(done.stdout)
    return found


def foreground(make_workspace: MakeWorkspace) -> list[str]:
    """The answers of the same files' graph built in ``cue index``'s foreground."""
    root = make_workspace(FILES)
    done = cue(root, "index", "--graph-wait", "--json", **SMALL)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["code_graph"]["background"] is None
    return answers(root)


def built_in_background(root: Path) -> None:
    """Index ``root``, its graph built by the detached builder ``cue index`` starts."""
    done = cue(root, "index", "--json", **SMALL)
    assert done.returncode == 0, done.stderr
    assert process_ended(json.loads(done.stdout)["code_graph"]["background"]["pid"])


def builder(root: Path) -> subprocess.Popen[str]:
    """The detached builder's process, in a session of its own, its output piped here."""
    return subprocess.Popen(
        [sys.executable, "-m", "cuedeck_code.intel.detached", str(root)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip


@pytest.mark.slow  # several `cue` processes, two graphs built
def test_index_leaves_a_big_build_to_the_builder(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(FILES)
    done = cue(root, "index", "--json", **SMALL)
    assert done.returncode == 0, done.stderr
    graph = json.loads(done.stdout)["code_graph"]
    pid = graph["background"]["pid"]
    assert (graph["read"], graph["edges"], graph["background"]["pending"]) == (0, 0, 5)
    assert process_ended(pid)
    state = detached.state(root)
    assert (state["pid"], state["state"], state["read"]) == (pid, "finished", 5)
    assert len(GraphStore(root).files()) == 5
    assert "built: 5 files read" in (root / detached.LOG).read_text()
    assert answers(root) == foreground(make_workspace)
    again = cue(root, "index", **SMALL)  # nothing left to read: nothing started
    assert again.returncode == 0, again.stderr
    assert "code graph: 5 files" in again.stdout and "background" not in again.stdout


def test_a_small_build_stays_in_the_foreground(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(FILES)
    done = cue(root, "index", "--json")  # 5 files, under the default threshold
    graph = json.loads(done.stdout)["code_graph"]
    assert (graph["background"], graph["read"]) == (None, 5)
    assert graph["edges"] > 0 and detached.state(root) == {}


@pytest.mark.slow  # several `cue` processes, two graphs built (~9 s)
def test_a_question_waits_for_the_builder(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(FILES)
    built_in_background(root)
    (root / "pkg" / "d.py").write_text("from pkg.a import run\n\n\ndef more():\n    return run()\n")
    files_now = {**FILES, "pkg/d.py": (root / "pkg" / "d.py").read_text()}
    assert cue(root, "index", "--json").returncode == 0  # one file: read in the foreground
    GraphStore(root).path.unlink()  # the graph gone: the builder builds it all again
    first = builder(root)
    assert first.stdout is not None
    assert first.stdout.readline().startswith("building the code graph")  # it holds the lock
    os.kill(first.pid, signal.SIGSTOP)
    try:
        listed = [p for p in background_processes(open_workspace(root)) if p.kind == "code graph"]
        assert [p.pid for p in listed] == [first.pid]
        second = builder(root)  # one builder per workspace: the second exits at once
        out, _ = second.communicate(timeout=120)
        assert second.returncode == 0 and "another process builds" in out
        again = cue(root, "index", "--json", **SMALL)  # names the builder that runs
        assert json.loads(again.stdout)["code_graph"]["background"]["pid"] == first.pid
        question = subprocess.Popen(
            [sys.executable, "-m", "cuedeck_cli", "-C", str(root), "graph", "callers", "run"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert question.stderr is not None
        for line in question.stderr:  # its progress: waiting for the builder
            if line.startswith(detached.WAITING):
                break
        else:
            raise AssertionError("the question did not wait for the builder")
    finally:
        os.kill(first.pid, signal.SIGCONT)
    said, _ = question.communicate(timeout=300)
    assert question.returncode == 0
    first.communicate(timeout=300)
    assert first.returncode == 0
    other = make_workspace(files_now)
    assert cue(other, "index", "--graph-wait").returncode == 0
    assert said == cue(other, "graph", "callers", "run").stdout
    assert "more()" in said
    assert not [p for p in background_processes(open_workspace(root)) if p.kind == "code graph"]


KILLED_AT_EDGES = """
import os, signal, sys
from cuedeck import open_workspace
from cuedeck.progress import reporting_to

def killer(done, total, message):
    if message == "Resolving the code graph":  # names written, edges not yet
        os.kill(os.getpid(), signal.SIGKILL)

intel = open_workspace(sys.argv[1]).service("code_intel")
with reporting_to(killer):
    intel.sync()
"""


@pytest.mark.slow  # several `cue` processes, two graphs built
def test_a_sync_killed_before_its_edges_is_completed(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(FILES)
    killed = subprocess.run([sys.executable, "-c", KILLED_AT_EDGES, str(root)], check=False)
    assert killed.returncode == -signal.SIGKILL
    store = GraphStore(root)
    assert len(store.files()) == 5 and store.unfinished()
    assert store.query("SELECT COUNT(*) FROM edges")[0][0] == 0
    store.close()
    assert answers(root) == foreground(make_workspace)
    assert not GraphStore(root).unfinished()


TWO_SYNCS = """
import json, sys
from cuedeck import open_workspace

intel = open_workspace(sys.argv[1]).service("code_intel")
intel.workspace.fresh_index()
print("ready", flush=True)
sys.stdin.readline()  # both start together
print(json.dumps(intel.sync().read), flush=True)
"""


@pytest.mark.slow  # several `cue` processes, two graphs built
def test_two_processes_syncing_at_once_read_each_file_once(
    make_workspace: MakeWorkspace,
) -> None:
    root = make_workspace(FILES)
    built_in_background(root)
    GraphStore(root).path.unlink()
    command = [sys.executable, "-c", TWO_SYNCS, str(root)]
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE}
    syncs = [subprocess.Popen(command, text=True, **pipes) for _ in range(2)]
    for sync in syncs:
        assert sync.stdout is not None and sync.stdout.readline() == "ready\n"
    for sync in syncs:
        assert sync.stdin is not None
        sync.stdin.write("go\n")
        sync.stdin.flush()
    read = sorted(json.loads(sync.communicate(timeout=300)[0]) for sync in syncs)
    assert read == [0, 5]  # one built, the other waited and found nothing left
    assert answers(root) == foreground(make_workspace)


def doctor_lines(root: Path) -> list[str]:
    """``cue doctor``'s messages about the graph builder (code 1102)."""
    done = cue(root, "doctor", "--json")
    problems = json.loads(done.stdout)["problems"]
    return [p["message"] for p in problems if p["code"] == detached.BUILDER_CODE]


@pytest.mark.slow  # several `cue` processes
def test_doctor_tells_of_the_builder_until_the_graph_is_whole(
    make_workspace: MakeWorkspace,
) -> None:
    root = make_workspace(FILES)
    assert cue(root, "index").returncode == 0
    assert doctor_lines(root) == []
    GraphStore(root).path.unlink()  # the graph gone: the builder builds it all again
    running = builder(root)
    assert running.stdout is not None
    assert running.stdout.readline().startswith("building the code graph")
    os.kill(running.pid, signal.SIGSTOP)
    try:
        [line] = doctor_lines(root)
        assert line.startswith("building the code graph in the background")
        assert f"(pid {running.pid})" in line
    finally:
        os.kill(running.pid, signal.SIGKILL)
    running.communicate(timeout=60)
    [line] = doctor_lines(root)  # killed before it finished: the graph is behind
    assert "builder stopped" in line and "5 files are not in the graph yet" in line
    assert cue(root, "graph", "callers", "helper").returncode == 0  # builds the rest
    assert doctor_lines(root) == []
