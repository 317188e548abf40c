"""``cue init``'s steps from plugins (``register_init_steps``): an option each, asked only
at a terminal, left with a hint otherwise."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from click.testing import CliRunner

from cuedeck import hookimpl
from cuedeck.plugins.host import make_plugin_host
from cuedeck_cli import plugin as cli_plugin
from cuedeck_cli.app import make_cli


class Greeting:
    question = "Write a GREETING file?"

    def needed(self, root: Path) -> bool:
        return not (root / "GREETING").exists()

    def run(self, root: Path) -> list[str]:
        (root / "GREETING").write_text("hello\n")
        return ["wrote GREETING"]


class Steps:
    @hookimpl
    def register_init_steps(self, register: Any) -> None:
        register("greeting", Greeting())


def _init(root: Path, *args: str) -> str:
    root.mkdir(exist_ok=True)
    plugins = make_plugin_host(entry_points=False)
    plugins.register(cli_plugin, name="cli")
    plugins.register(Steps(), name="steps")
    result = CliRunner().invoke(make_cli(plugins), ["-C", str(root), "init", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_hook_register_init_steps(tmp_path: Path) -> None:
    assert "--greeting / --no-greeting" in _init(tmp_path, "--help")
    untold = _init(tmp_path / "a")  # no terminal: not asked, told how
    assert "not asked without a terminal: Write a GREETING file? (`cue init --greeting`)" in untold
    assert not (tmp_path / "a" / "GREETING").exists()
    assert "wrote GREETING" not in _init(tmp_path / "b", "--no-greeting")
    assert not (tmp_path / "b" / "GREETING").exists()
    done = _init(tmp_path / "c", "--greeting")
    assert "  wrote GREETING" in done and (tmp_path / "c" / "GREETING").read_text() == "hello\n"
    again = _init(tmp_path / "c")  # nothing needed any more: nothing asked or said
    assert "GREETING" not in again and "nothing changed" in again
