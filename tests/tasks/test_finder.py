"""``cue open``: ranking, the picker driven by key presses, and a real fake $EDITOR."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from cuedeck.errors import CueError
from cuedeck.workspace import Workspace, open_workspace
from cuedeck_tasks.finder import Entry, editor_command, entries_of, open_in_editor, pick, rank

FILES = {
    ".cuedeck/cards/k3x9q2.md": "---\ntitle: Add refresh tokens to login\n---\n"
    "# Add refresh tokens to login\n\n## Acceptance\n\ntext\n",
    ".cuedeck/docs/auth.md": "# Authentication\n\nintro\n\n## Sessions\n\ns\n\n"
    "## Rate limiting\n\nr\n",
    ".cuedeck/docs/api.md": "# API\n\n## Login\n\nPOST /v1/login\n\n## Refunds\n\nx\n",
    "docs/deployment.md": "# Deployment\n\n## Rollback\n\nsteps\n",
}


@pytest.fixture
def docs_workspace(make_workspace: Callable[..., Path]) -> Workspace:
    return open_workspace(make_workspace(FILES))


@pytest.fixture
def fake_editor(tmp_path: Path) -> tuple[Path, Path]:
    """An executable that records its argv as JSON; returns (script, record)."""
    record = tmp_path / "editor-argv.json"
    script = tmp_path / "bin" / "vim"  # named like an editor that takes +LINE
    script.parent.mkdir()
    script.write_text(
        f"#!{sys.executable}\nimport json, sys\n"
        f"open({str(record)!r}, 'w').write(json.dumps(sys.argv[1:]))\n"
    )
    script.chmod(0o755)
    return script, record


def labels(entries: list[Entry]) -> list[str]:
    return [f"{e.path}#{e.heading}" if e.heading else e.path for e in entries]


def test_entries_are_files_and_headings_cards_first(docs_workspace: Workspace) -> None:
    entries = entries_of(docs_workspace.documents)
    assert labels(entries)[:3] == [
        ".cuedeck/cards/k3x9q2.md",
        ".cuedeck/cards/k3x9q2.md#Acceptance",
        ".cuedeck/docs/api.md",
    ]
    login = next(e for e in entries if e.heading == "Login")
    assert (login.path, login.line, login.title) == (".cuedeck/docs/api.md", 3, "API")
    # The H1 that repeats the file title is not a separate entry.
    assert ".cuedeck/docs/api.md#API" not in labels(entries)


def test_ranking_prefers_tight_matches_and_needs_every_word(docs_workspace: Workspace) -> None:
    entries = entries_of(docs_workspace.documents)
    assert labels(rank(entries, "login"))[:2] == [
        ".cuedeck/docs/api.md#Login",
        ".cuedeck/cards/k3x9q2.md",
    ]
    assert labels(rank(entries, "rate lim"))[0] == ".cuedeck/docs/auth.md#Rate limiting"
    assert labels(rank(entries, "rfrsh"))[0] == ".cuedeck/cards/k3x9q2.md"  # a subsequence
    assert labels(rank(entries, "deploy rollback")) == ["docs/deployment.md#Rollback"]
    assert rank(entries, "nothing-like-this") == []
    assert all(e.heading is None for e in rank(entries, ""))


def drive(entries: list[Entry], keys: list[str], query: str = "") -> Entry | None:
    with create_pipe_input() as pipe:
        for key in keys:
            pipe.send_text(key)
        return pick(entries, query, input=pipe, output=DummyOutput())


DOWN, UP, ENTER, ESC = "\x1b[B", "\x1b[A", "\r", "\x1b"


def test_typing_filters_and_enter_opens_the_best(docs_workspace: Workspace) -> None:
    entries = entries_of(docs_workspace.documents)
    chosen = drive(entries, ["sess", ENTER])
    assert chosen is not None and (chosen.path, chosen.heading) == (
        ".cuedeck/docs/auth.md",
        "Sessions",
    )


def test_arrows_move_the_selection(docs_workspace: Workspace) -> None:
    entries = entries_of(docs_workspace.documents)
    expected = rank(entries, "login")
    assert drive(entries, ["login", DOWN, ENTER]) == expected[1]
    assert drive(entries, ["login", DOWN, DOWN, UP, ENTER]) == expected[1]
    assert drive(entries, ["login", UP, UP, ENTER]) == expected[0]  # stops at the top


def test_backspace_widens_and_a_query_argument_prefills(docs_workspace: Workspace) -> None:
    entries = entries_of(docs_workspace.documents)
    assert drive(entries, ["x", "\x7f", ENTER]) == rank(entries, "")[0]
    assert drive(entries, [ENTER], query="refunds") == rank(entries, "refunds")[0]


@pytest.mark.slow
def test_escape_and_ctrl_c_quit_without_a_choice(docs_workspace: Workspace) -> None:
    entries = entries_of(docs_workspace.documents)
    assert drive(entries, ["auth", ESC]) is None
    assert drive(entries, ["\x03"]) is None
    assert drive(entries, ["zzzzzz", ENTER]) is None  # nothing to open


@pytest.mark.parametrize(
    ("editor", "line", "expected"),
    [
        ("vim", 12, ["vim", "+12", "/w/a.md"]),
        ("/usr/bin/nvim -u NONE", 3, ["/usr/bin/nvim", "-u", "NONE", "+3", "/w/a.md"]),
        ("nano", 7, ["nano", "+7", "/w/a.md"]),
        ("emacsclient -t", 7, ["emacsclient", "-t", "+7", "/w/a.md"]),
        ("code --wait", 9, ["code", "--wait", "-g", "/w/a.md:9"]),
        ("subl", 9, ["subl", "/w/a.md:9"]),
        ("kate", 9, ["kate", "-l", "9", "/w/a.md"]),
        ("notepad.exe", 9, ["notepad.exe", "/w/a.md"]),
        ("vim", None, ["vim", "/w/a.md"]),
    ],
)
def test_editor_commands_jump_to_the_line_where_supported(
    editor: str, line: int | None, expected: list[str]
) -> None:
    assert editor_command(Path("/w/a.md"), line, editor) == expected


def test_visual_wins_over_editor_and_none_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EDITOR", "nano")
    monkeypatch.setenv("VISUAL", "vim")
    assert editor_command(Path("a.md"), 2)[0] == "vim"
    monkeypatch.delenv("VISUAL")
    monkeypatch.delenv("EDITOR")
    with pytest.raises(CueError, match="no editor"):
        editor_command(Path("a.md"), 2)


def test_open_in_editor_runs_the_real_editor(
    fake_editor: tuple[Path, Path], tmp_path: Path
) -> None:
    script, record = fake_editor
    open_in_editor(tmp_path / "a.md", 5, str(script))
    assert json.loads(record.read_text()) == ["+5", str(tmp_path / "a.md")]
    with pytest.raises(CueError, match="could not start"):
        open_in_editor(tmp_path / "a.md", 5, str(tmp_path / "no-such-editor"))
    failing = tmp_path / "bin" / "false-editor"
    failing.write_text("#!/bin/sh\nexit 3\n")
    failing.chmod(0o755)
    with pytest.raises(CueError, match="status 3"):
        open_in_editor(tmp_path / "a.md", None, str(failing))


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_cue_open_in_a_real_terminal(
    docs_workspace: Workspace, fake_editor: tuple[Path, Path]
) -> None:
    """The whole command in a pseudo-terminal: type, move, Enter, and $EDITOR runs."""
    script, record = fake_editor
    cue = Path(sys.executable).with_name("cue")
    master, slave = os.openpty()
    env = {
        **os.environ,
        "EDITOR": str(script),
        "TERM": "xterm",
        "PROMPT_TOOLKIT_NO_CPR": "1",
        "CUE_WORKSPACE": str(docs_workspace.root),
    }
    env.pop("VISUAL", None)
    process = subprocess.Popen(
        [str(cue), "open", "rate"], stdin=slave, stdout=slave, stderr=slave, env=env
    )
    os.close(slave)
    screen = b""

    def read_until(done: Callable[[], bool], timeout: float = 30.0) -> None:
        nonlocal screen
        deadline = time.monotonic() + timeout
        while not done() and time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.05)
            if ready:
                try:
                    screen += os.read(master, 65536)
                except OSError:
                    return

    try:
        read_until(lambda: b"Rate limiting" in screen)
        assert b"Rate limiting" in screen, screen.decode(errors="replace")
        os.write(master, b"\x7f\x7f\x7f\x7fsessions")
        read_until(lambda: b"Sessions" in screen)
        os.write(master, b"\r")
        read_until(lambda: process.poll() is not None)
        assert process.wait(timeout=30) == 0, screen.decode(errors="replace")
    finally:
        if process.poll() is None:
            process.kill()
        os.close(master)
    auth = docs_workspace.root / ".cuedeck/docs/auth.md"
    assert json.loads(record.read_text()) == ["+5", str(auth)]


def test_code_symbols_are_entries_too(make_workspace: Callable[..., Path]) -> None:
    pytest.importorskip("cuedeck_code")
    source = (
        "class Client:\n    def send(self):\n        pass\n\n\ndef handle_request():\n    pass\n"
    )
    workspace = open_workspace(make_workspace({**FILES, "app/client.py": source}))
    entries = entries_of(workspace.documents)
    best = rank(entries, "client send")[0]
    assert (best.path, best.heading, best.line) == ("app/client.py", "Client.send", 2)
    assert "app/client.py  handle_request  " not in best.label
    assert rank(entries, "handle_req")[0].label.endswith("app/client.py:6")
