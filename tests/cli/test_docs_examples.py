"""Every console example of the README and docs/ runs, and prints what the page says.

A ```` ```console ```` block is a session: ``$ cue ...`` lines are commands, the lines
under one are what it prints (stdout and stderr as a terminal shows them). Each block
runs on its own copy of examples/demo, each command in order, and:

* a command with output shown must print exactly that, up to the volatile parts
  normalised below; a line ``...`` stands for any number of lines;
* a command with no output shown must succeed (its output is not compared);
* output with an ``error[CODE]`` line means the command fails with exit status 1.

An HTML comment right above a block changes how it runs:
``<!-- console: fresh workspace -->`` starts from an empty ``cue init`` workspace instead
of the demo, ``<!-- console: not run: REASON -->`` (servers, editors, other tools) skips it.
Card ids a block creates are random: the id a ``cue card new`` prints stands for the one
the page shows, in later commands (prefixes too) and in later output.
"""

from __future__ import annotations

import re
import shlex
import shutil
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner

from cuedeck.layout import CARD_ID
from tests.conftest import REPO, needs_extras

DEMO = REPO / "examples" / "demo"
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
#: The workspace root the pages show in absolute paths.
PAGE_ROOT = "/home/dana/payments"
DIRECTIVE = re.compile(r"^<!--\s*console:\s*(.*?)\s*-->$")
#: What changes from run to run, in both the page and the output: (pattern, stand-in).
VOLATILE = [
    (re.compile(r"\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z"), "<time>"),
    (re.compile(r"\b\d{4}-\d{2}-\d{2}\b"), "<date>"),
    (re.compile(r"\bcdk_[A-Za-z0-9_-]{20,}"), "<token>"),
    (re.compile(r"\bin \d+(?:\.\d+)?\s?(?:ms|s)\b"), "in <duration>"),
]


@dataclass
class Command:
    line: int
    argv: list[str]
    shown: list[str] = field(default_factory=list)


@dataclass
class Block:
    page: str
    line: int
    directive: str
    commands: list[Command]

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def _argv(command: str, where: str) -> list[str]:
    """The ``cue`` arguments of a page's command line, comment dropped."""
    words = shlex.split(command, comments=True)
    while "&&" in words:  # `cd examples/demo && cue scene`: the block's workspace already
        words = words[words.index("&&") + 1 :]
    if words[:2] == ["uv", "run"]:
        words = words[2:]
    assert words and words[0] == "cue", f"{where}: not a cue command (mark the block not run)"
    assert not {"|", "<", ">", "$("} & set(words), f"{where}: shell syntax: mark it not run"
    return words[1:]


def blocks() -> Iterator[Block]:
    """Every console block of the pages."""
    for page in PAGES:
        lines = page.read_text(encoding="utf-8").splitlines()
        name = page.relative_to(REPO).as_posix()
        for number, text in enumerate(lines):
            if text.strip() != "```console":
                continue
            above = next(
                (lines[n].strip() for n in range(number - 1, -1, -1) if lines[n].strip()), ""
            )
            directive = match.group(1) if (match := DIRECTIVE.match(above)) else ""
            commands: list[Command] = []
            pending = ""
            for offset, body in enumerate(lines[number + 1 :], start=number + 2):
                if body.strip() == "```":
                    break
                if pending or body.startswith("$ "):
                    pending += body.removeprefix("$ ")
                    if pending.endswith("\\"):
                        pending = pending[:-1] + " "
                        continue
                    if not directive.startswith("not run"):
                        commands.append(Command(offset, _argv(pending, f"{name}:{offset}")))
                    else:
                        commands.append(Command(offset, []))
                    pending = ""
                elif commands:
                    commands[-1].shown.append(body.rstrip())
            yield Block(name, number + 1, directive, commands)


BLOCKS = list(blocks())


def _normal(line: str, root: Path, ids: dict[str, str]) -> str:
    line = line.replace(str(root), PAGE_ROOT)
    for actual, shown in ids.items():
        line = line.replace(actual, shown)
    for pattern, stand_in in VOLATILE:
        line = pattern.sub(stand_in, line)
    return line.rstrip()


_ROW = re.compile(r"^\s*[a-z0-9]{6}\b")


def _rows_in_order(lines: list[str]) -> list[str]:
    """Lines with each run of lines that start with a card id (table rows, graph nodes)
    sorted: both list cards by id, and a run's ids are not the page's."""
    out: list[str] = []
    run_: list[str] = []
    for line in [*lines, ""]:
        if _ROW.match(line):
            run_.append(line)
            continue
        out.extend(sorted(run_))
        run_ = []
        out.append(line)
    return out[:-1]


def _matches(shown: list[str], printed: list[str]) -> bool:
    """Whether ``printed`` is ``shown`` line for line, ``...`` standing for any lines."""
    if not shown:
        return not printed
    if shown[0].strip() == "...":
        return any(_matches(shown[1:], printed[n:]) for n in range(len(printed) + 1))
    return bool(printed) and printed[0] == shown[0] and _matches(shown[1:], printed[1:])


def _workspace(block: Block, tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    if "fresh workspace" in block.directive:
        root.mkdir()
        run(root, ["init"])
    else:
        shutil.copytree(DEMO, root, ignore=shutil.ignore_patterns(".cache", "state.json"))
    return root


def run(root: Path, argv: list[str]) -> tuple[int, str]:
    """``cue -C root ARGV`` in this process: exit code and what a terminal shows."""
    from cuedeck_cli.app import make_cli

    # A wide terminal (tables show every column), no display (no clipboard), and the
    # float model: the semantic scores the pages show are the same on every CPU (the
    # default computes in int8 where the CPU has VNNI, a little differently).
    env = {
        "COLUMNS": "120",
        "DISPLAY": "",
        "WAYLAND_DISPLAY": "",
        "CUEDECK_SEARCH_EMBEDDER": "minilm-float",
    }
    result = CliRunner(env=env).invoke(make_cli(), ["-C", str(root), *argv])
    return result.exit_code, result.output


def _rewrite(argv: list[str], ids: dict[str, str]) -> list[str]:
    """The page's card ids (and prefixes of them) as the ids this run made."""
    out = []
    for word in argv:
        for actual, shown in ids.items():
            if word == shown:
                word = actual
            elif 3 <= len(word) < len(shown) and shown.startswith(word):
                word = actual[: len(word)]
        out.append(word)
    return out


@pytest.mark.slow
@needs_extras
@pytest.mark.parametrize(
    "block", [b for b in BLOCKS if not b.directive.startswith("not run")], ids=lambda b: b.id
)
def test_console_example(block: Block, tmp_path: Path) -> None:
    root = _workspace(block, tmp_path)
    ids: dict[str, str] = {}  # this run's card id -> the page's
    for command in block.commands:
        where = f"{block.page}:{command.line}: cue {shlex.join(command.argv)}"
        code, output = run(root, _rewrite(command.argv, ids))
        printed = output.rstrip("\n").splitlines() if output.strip() else []
        made = command.argv[:2] == ["card", "new"] and command.shown and printed
        if made and CARD_ID.match(command.shown[0]) and CARD_ID.match(printed[0]):
            ids[printed[0]] = command.shown[0]
        failing = any(line.startswith("error[") for line in command.shown)
        assert code == (1 if failing else 0), f"{where} exited {code}:\n{output}"
        if command.shown:
            shown = [_normal(line, root, {}) for line in command.shown]
            got = [_normal(line, root, ids) for line in printed]
            if ids:
                shown, got = _rows_in_order(shown), _rows_in_order(got)
            assert _matches(shown, got), f"{where} printed:\n" + "\n".join(got)


def test_every_block_is_run_or_says_why_not() -> None:
    assert BLOCKS, "no console examples found"
    for block in BLOCKS:
        assert block.commands, f"{block.id}: a console block without a command"
        if block.directive.startswith("not run"):
            assert block.directive.removeprefix("not run").strip(" :"), f"{block.id}: say why"
        else:
            assert block.directive in ("", "fresh workspace"), f"{block.id}: {block.directive!r}"


def test_the_readme_names_every_extra() -> None:
    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    sentence = readme.split("`pip install cuedeck` alone gives", 1)[1].split(".", 1)[0]
    sentence = sentence.split("the extras", 1)[1]
    named = set(re.findall(r"`([a-z]+)`", sentence))
    assert named == set(extras), f"README names {sorted(named)}, pyproject has {sorted(extras)}"
