"""The detached embedder: one background process per workspace, resumable, reported."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import filelock
import pytest

from cuedeck import open_workspace
from cuedeck.doctor import diagnose
from cuedeck_search import detached
from tests.conftest import MakeWorkspace, plant_shadows, wait_ended

pytestmark = pytest.mark.slow  # embeds with the real model

TOPICS = ["ledger", "invoice", "webhook", "token", "cursor", "replica", "backup", "refund"]


def many_sections(make_workspace: MakeWorkspace, files: int = 30) -> Path:
    """``files`` docs of ten distinct sections each."""
    docs = {}
    for number in range(files):
        parts = [f"# Doc {number}\n"]
        for part in range(10):
            topic = TOPICS[(number + part) % len(TOPICS)]
            parts.append(
                f"## {topic.title()} {number}-{part}\n\nHow the {topic} of doc {number} part "
                f"{part} behaves when the {TOPICS[part % len(TOPICS)]} changes.\n"
            )
        docs[f"docs/d{number}.md"] = "\n".join(parts)
    return make_workspace(docs)


def embedder(root: Path) -> subprocess.Popen[str]:
    """The detached embedder's process, its output piped to the test."""
    return subprocess.Popen(
        [sys.executable, "-m", "cuedeck_search.detached", str(root)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip


def missing(root: Path) -> int:
    return len(open_workspace(root).service("search").missing_hashes())


def test_start_embeds_everything_and_reports_it(make_workspace: MakeWorkspace) -> None:
    root = many_sections(make_workspace, files=4)
    assert detached.status(root).state == "never"
    assert diagnose(open_workspace(root)) == []
    pid = detached.start(root)
    assert pid is not None
    wait_ended(pid)
    found = detached.status(root)
    assert (found.state, found.running, found.pid) == ("finished", False, pid)
    assert found.done == found.total > 0
    assert missing(root) == 0
    assert "embedded" in (root / detached.LOG).read_text()


def test_the_embedder_runs_nothing_planted_where_it_is_started(
    make_workspace: MakeWorkspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = many_sections(make_workspace, files=1)
    marker = tmp_path / "planted-code-ran"
    plant_shadows(root, marker)
    monkeypatch.chdir(root)  # where `cue search` ran
    pid = detached.start(root)
    assert pid is not None
    wait_ended(pid)
    assert detached.status(root).state == "finished", (root / detached.LOG).read_text()
    assert not marker.exists(), marker.read_text()


def test_one_embedder_per_workspace(make_workspace: MakeWorkspace) -> None:
    root = many_sections(make_workspace, files=2)
    lock = filelock.FileLock(str(root / detached.LOCK))
    (root / detached.LOCK).parent.mkdir(parents=True, exist_ok=True)
    with lock:  # as if another embedder held it
        assert detached.running(root)
        assert detached.start(root) is None
        second = embedder(root)
        out, _ = second.communicate()
        assert second.returncode == 0
        assert "another embedder runs" in out
        assert detached.status(root).state == "running"
    assert missing(root) > 0  # nobody embedded anything
    assert not detached.running(root)


def test_a_killed_embedder_is_resumed(make_workspace: MakeWorkspace) -> None:
    root = many_sections(make_workspace)
    total = missing(root)
    first = embedder(root)
    assert first.stdout is not None
    for line in first.stdout:  # wait for its first committed chunk
        if line.startswith("Embedding sections: "):
            break
    first.send_signal(signal.SIGKILL)
    first.wait()
    first.stdout.close()
    left = missing(root)
    assert 0 < left < total
    stopped = detached.status(root)
    assert stopped.state == "stopped" and not stopped.running
    (problem,) = diagnose(open_workspace(root))
    assert problem.code == detached.EMBEDDER_CODE
    assert "stopped" in problem.message
    from cuedeck_cli.board.api import BoardApi

    shown = BoardApi(open_workspace(root)).cards()
    assert (shown["warnings"], shown["background"]) == ([problem.message], [])
    second = embedder(root)
    out, _ = second.communicate()
    assert second.returncode == 0
    assert f"embedded {left} sections" in out  # only what the first run had not done
    assert missing(root) == 0
    state = json.loads((root / detached.STATE).read_text())
    assert (state["state"], state["done"], state["total"]) == ("finished", left, left)


def wait_for_exit(pid: int) -> None:
    """Block until process ``pid`` (not necessarily our child) has exited."""
    import select

    try:
        descriptor = os.pidfd_open(pid)
    except ProcessLookupError:
        return  # gone already
    try:
        select.select([descriptor], [], [], 120)
    finally:
        os.close(descriptor)


def test_a_slow_embedding_starts_the_detached_embedder(make_workspace: MakeWorkspace) -> None:
    import re

    root = many_sections(make_workspace, files=3)
    engine = open_workspace(root).service("search")
    engine.cache.record_rate(1.0)  # one section a second: far over the foreground limit
    cue = str(Path(sys.executable).with_name("cue"))
    done = subprocess.run(
        [cue, "-C", str(root), "search", "--json", "token of doc"],
        capture_output=True, text=True, check=True, env=dict(os.environ),
    )  # fmt: skip
    reply = json.loads(done.stdout)
    assert (reply["answered_by"], reply["semantic_coverage"]) == ("keyword", 0.0)
    assert "ranked by keyword alone" in done.stderr
    started = re.search(r"background process started now \(pid (\d+)\)", done.stderr)
    assert started is not None, done.stderr
    assert "`cue doctor` shows its progress" in done.stderr
    wait_for_exit(int(started.group(1)))
    assert detached.status(root).state == "finished"
    assert missing(root) == 0
