"""What `cue` imports to start: commands registered by path, and no heavy module for
`cue --help` or a keyword search (the modules a real `cue` process imported; not timed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from cuedeck import hookimpl
from cuedeck.plugins.host import make_plugin_host
from cuedeck_cli.app import make_cli
from tests.conftest import MakeWorkspace, installed, needs_extras

CUE = str(Path(sys.executable).with_name("cue"))
#: Never imported to start `cue` (the MCP stack, ML, parsing and graph libraries).
HEAVY = (
    "numpy",
    "onnxruntime",
    "fastmcp",
    "mcp",
    "mcp_types",
    "pydantic",
    "starlette",
    "httpx",
    "uvicorn",
    "tree_sitter",
    "rustworkx",
    "rich",
)
#: The modules of CueDeck's own commands, registered by path: one loads when it runs.
COMMAND_MODULES = (
    "cuedeck_cli.commands",
    "cuedeck_cli.installation",
    "cuedeck_cli.scene_commands",
    "cuedeck_cli.board",
    "cuedeck_search.command",
    "cuedeck_tasks.commands",
    "cuedeck_memory.commands",
    "cuedeck_mcp.commands",
    "cuedeck_code.commands",
)

HELLO = '''
import click

@click.command("hello")
def hello():
    """Say hello to the workspace.

    Longer text that --help of the command shows.
    """
    click.echo("hello from a lazy command")
'''


class LazyHello:
    """A third party's plugin registering its command by import path."""

    def __init__(self, path: str, help: str | None) -> None:
        self.path = path
        self.help = help

    @hookimpl
    def register_commands(self, register: Any) -> None:
        register(self.path, name="hello", help=self.help)


@pytest.fixture
def hello_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    name = f"cuedeck_hello_{os.getpid()}_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(HELLO, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def _cli(path: str, help: str | None) -> click.Group:
    plugins = make_plugin_host(entry_points=False)
    plugins.register(LazyHello(path, help), name="hello-plugin")
    return make_cli(plugins)


def test_a_command_registered_by_path_loads_when_it_runs(hello_module: str) -> None:
    cli = _cli(f"{hello_module}:hello", "Say hello to the workspace.")
    listed = CliRunner().invoke(cli, ["--help"])
    assert "hello  Say hello to the workspace." in listed.stdout
    assert hello_module not in sys.modules  # listed from its registration
    ran = CliRunner().invoke(cli, ["hello"])
    assert (ran.exit_code, ran.stdout) == (0, "hello from a lazy command\n")
    assert "Longer text" in CliRunner().invoke(cli, ["hello", "--help"]).stdout


def test_without_a_help_line_listing_imports_the_command(hello_module: str) -> None:
    listed = CliRunner().invoke(_cli(f"{hello_module}:hello", None), ["--help"])
    assert "hello  Say hello to the workspace." in listed.stdout
    assert hello_module in sys.modules


@pytest.mark.parametrize("path", ["cuedeck_no_such_module:hello", "click:echo"])
def test_a_path_that_does_not_load_is_1004_naming_the_plugin(path: str) -> None:
    cli = _cli(path, "Say hello.")
    result = CliRunner().invoke(cli, ["hello"])
    assert result.exit_code == 1
    assert result.stderr.startswith("error[1004] command 'hello' from 'hello-plugin'")
    assert "CUEDECK_DISABLE_PLUGINS" in result.stderr
    as_json = CliRunner().invoke(cli, ["hello", "--json"])
    assert '"code": 1004' in as_json.stdout
    # The listing still shows it: its help line is the registration's.
    assert "hello" in CliRunner().invoke(cli, ["--help"]).stdout


def test_every_registered_help_line_is_the_commands_own() -> None:
    cli = make_cli()
    context = click.Context(cli)
    lazy = dict(cli.lazy)  # type: ignore[attr-defined]
    assert {"init", "scene", "plugins"} <= set(lazy)
    for name, entry in lazy.items():
        command = cli.get_command(context, name)
        assert command is not None
        for width in (45, 80, 200):
            stand_in = click.Command(name, help=entry.help)
            assert stand_in.get_short_help_str(width) == command.get_short_help_str(width), name


#: Runs the `cue` script as its console entry point does and writes, as it exits, every
#: module it imported (sys.modules: `-X importtime` leaves out importlib.import_module).
PROBE = """
import atexit, json, runpy, sys
out, script = sys.argv[1], sys.argv[2]
atexit.register(lambda: open(out, "w").write(json.dumps(sorted(sys.modules))))
sys.argv = sys.argv[2:]
sys.path[0] = script.rpartition("/")[0]
runpy.run_path(script, run_name="__main__")
"""


def _imported(*args: str, tmp_path: Path) -> set[str]:
    """The modules `cue ARGS` imports."""
    out = tmp_path / "modules.json"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(out), CUE, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return set(json.loads(out.read_text(encoding="utf-8")))


def _heavy(modules: set[str], *more: str) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY or m in more)


@needs_extras
def test_cue_help_imports_no_heavy_module_and_no_command(tmp_path: Path) -> None:
    _imported("--help", tmp_path=tmp_path)  # the entry points are remembered from here on
    modules = _imported("--help", tmp_path=tmp_path)
    assert "cuedeck_search.plugin" in modules  # the plugins did load
    light = ("sqlite3", "cattrs", "cuedeck.models", "cuedeck.config", "importlib.metadata")
    assert _heavy(modules, *light, *COMMAND_MODULES) == []


@needs_extras
def test_a_keyword_search_imports_its_command_alone(
    make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    root = make_workspace({"docs/auth.md": "# Auth\n\nTokens expire after an hour.\n"})
    from cuedeck import open_workspace

    open_workspace(root).service("search").sync()  # the postings the quick path reads
    search = ("-C", str(root), "search", "tokens", "--mode", "keyword")
    _imported(*search, tmp_path=tmp_path)
    modules = _imported(*search, tmp_path=tmp_path)
    others = [m for m in COMMAND_MODULES if m != "cuedeck_search.command"]
    assert "cuedeck_search.command" in modules
    assert _heavy(modules, "importlib.metadata", *others) == []


@pytest.mark.skipif(not installed("cuedeck_mcp"), reason="needs the mcp extra")
def test_cue_mcp_stdio_does_not_import_the_http_deployment() -> None:
    """What `cue mcp` over stdio imports leaves out CueDeck's HTTP-only modules."""
    http_only = ("cuedeck_mcp.asgi", "cuedeck.serving.http_guard", "cuedeck.serving.ports")
    code = (
        "import sys\n"
        "import cuedeck_mcp.commands, cuedeck_mcp.server, cuedeck_mcp.stdio\n"
        f"print(sorted(m for m in {http_only!r} if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
