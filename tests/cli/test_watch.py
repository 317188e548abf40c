"""`cue watch` as a real process: debounced rebuilds, broken input, its own output, Ctrl-C."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

from tests.conftest import MakeWorkspace, interruptible_children

pytestmark = pytest.mark.slow

CUE = [sys.executable, "-m", "cuedeck_cli"]
CARD = "---\nid: abc123\ntitle: Refunds\nstatus: active\n---\n# Refunds\n\nSee @doc/api.\n"
API = "# API\n\n## Refunds\n\nPOST /refunds.\n"


class Watcher:
    """A running `cue watch` whose output lines arrive on queues."""

    def __init__(self, root: Path) -> None:
        with interruptible_children():  # the Ctrl-C test needs it
            self.process = subprocess.Popen(
                [*CUE, "-C", str(root), "watch", "--no-clipboard"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                # A crash (a fatal signal at exit) prints every thread's stack to stderr.
                env={**os.environ, "PYTHONFAULTHANDLER": "1"},
            )
        self.out: queue.Queue[str] = queue.Queue()
        self.err: queue.Queue[str] = queue.Queue()
        assert self.process.stdout is not None and self.process.stderr is not None
        self.pumps = [
            threading.Thread(target=self._pump, args=(stream, lines), daemon=True)
            for stream, lines in ((self.process.stdout, self.out), (self.process.stderr, self.err))
        ]
        for pump in self.pumps:
            pump.start()

    @staticmethod
    def _pump(stream: IO[str], lines: queue.Queue[str]) -> None:
        for line in stream:
            lines.put(line.rstrip("\n"))

    def next_line(self, lines: queue.Queue[str], timeout: float = 30.0) -> str:
        return lines.get(timeout=timeout)

    def lines_within(self, lines: queue.Queue[str], seconds: float) -> list[str]:
        found = []
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                found.append(lines.get(timeout=left))
            except queue.Empty:
                break
        return found


@pytest.fixture
def watcher(make_workspace: MakeWorkspace) -> Iterator[tuple[Path, Watcher]]:
    root = make_workspace(
        {".cuedeck/cards/abc123.md": CARD, ".cuedeck/docs/api.md": API},
        config="[watch]\ndebounce_ms = 400\n[scene]\nclipboard = false\n",
    )
    running = Watcher(root)
    yield root, running
    if running.process.poll() is None:
        running.process.kill()
    running.process.wait(timeout=10)
    for pump in running.pumps:
        pump.join(timeout=10)  # the pipes are at their end once the process is gone
    for stream in (running.process.stdout, running.process.stderr):
        assert stream is not None
        stream.close()


def test_a_burst_of_changes_makes_exactly_one_rebuild(watcher: tuple[Path, Watcher]) -> None:
    root, running = watcher
    first = running.next_line(running.out)
    assert "(start)" in first and "card abc123" in first
    scene = root / ".cuedeck" / "SCENE.md"
    assert scene.is_file()
    api = root / ".cuedeck" / "docs" / "api.md"
    for n in range(4):  # well inside the 400 ms window
        api.write_text(API + f"\nEdit {n}.\n", encoding="utf-8")
        time.sleep(0.05)
    rebuild = running.next_line(running.out)
    assert "rebuilt .cuedeck/SCENE.md (.cuedeck/docs/api.md changed)" in rebuild
    assert "Edit 3." in scene.read_text(encoding="utf-8")  # the last change made it in
    # Writing SCENE.md and the index cache must not trigger anything more.
    assert running.lines_within(running.out, 2.0) == []


def test_broken_input_is_reported_and_watching_goes_on(watcher: tuple[Path, Watcher]) -> None:
    root, running = watcher
    running.next_line(running.out)
    api = root / ".cuedeck" / "docs" / "api.md"
    api.write_text(API + "\nBack to @card/abc123.\n", encoding="utf-8")
    errors: list[str] = []
    while not any("error[1002]" in line for line in errors):
        errors.append(running.next_line(running.err))
    assert any("failed (.cuedeck/docs/api.md changed); still watching" in e for e in errors)
    api.write_text(API + "\nFixed.\n", encoding="utf-8")
    assert "rebuilt" in running.next_line(running.out)
    assert running.process.poll() is None


def test_config_change_rebuilds_with_the_new_config(watcher: tuple[Path, Watcher]) -> None:
    root, running = watcher
    running.next_line(running.out)
    config = root / ".cuedeck" / "config.toml"
    config.write_text(config.read_text() + "token_limit = 5000\n", encoding="utf-8")
    line = running.next_line(running.out)
    assert ".cuedeck/config.toml changed" in line and "/5000 tokens" in line


def _idle(pid: int, within: float = 10.0) -> None:
    """Wait until the process's main thread sleeps (on Linux): blocked in the file
    watcher, where Ctrl-C usually lands."""
    stat = Path(f"/proc/{pid}/stat")
    deadline = time.monotonic() + within
    while stat.exists() and time.monotonic() < deadline:
        if stat.read_text().rsplit(")", 1)[1].split()[0] == "S":
            return


def test_ctrl_c_stops_cleanly(watcher: tuple[Path, Watcher]) -> None:
    _, running = watcher
    running.next_line(running.out)
    _idle(running.process.pid)
    running.process.send_signal(signal.SIGINT)
    code = running.process.wait(timeout=20)
    said = running.lines_within(running.err, 2.0)
    assert code == 0, "\n".join(said)  # a crash's stacks, if it crashed
    assert any("stopped watching" in line for line in said)
    assert not any("KeyboardInterrupt" in line for line in said), said  # no library's log
