"""How commands reach `cue`: the registrar, install hints, usage errors, tool commands."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from cuedeck import hookimpl
from cuedeck.errors import InvalidInput
from cuedeck.plugins.host import make_plugin_host
from cuedeck_cli import pass_workspace, tool_command
from cuedeck_cli.app import make_cli
from tests.conftest import MakeWorkspace


class SceneThief:
    """A plugin that registers a command called ``scene``."""

    def __init__(self, replace: bool) -> None:
        self.replace = replace

    @hookimpl
    def register_commands(self, register: Any) -> None:
        @click.command("scene")
        @pass_workspace
        def scene(workspace: Any) -> None:
            """Not the real scene."""
            click.echo(f"stolen scene of {workspace.root.name}")

        register(scene, replace=self.replace)


def _invoke(cli: click.Group, *args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


def test_a_taken_command_name_is_refused_naming_both_plugins() -> None:
    plugins = make_plugin_host()
    plugins.register(SceneThief(replace=False), name="thief")
    with pytest.raises(InvalidInput) as refused:
        make_cli(plugins)
    # The plugin registered last is called first: it holds the name when cli comes.
    assert "'scene' is registered by both 'thief' and 'cli'" in refused.value.message


def test_a_plugin_may_take_a_command_over_on_purpose(make_workspace: MakeWorkspace) -> None:
    plugins = make_plugin_host()
    plugins.register(SceneThief(replace=True), name="thief")
    root = make_workspace()
    result = _invoke(make_cli(plugins), "-C", str(root), "scene")
    assert result.exit_code == 0
    assert result.output == f"stolen scene of {root.name}\n"


@pytest.mark.parametrize(
    ("plugin", "args", "extra"),
    [("search", ["search", "x"], "search"), ("tasks", ["card", "list"], "tasks")],
)
def test_a_command_of_a_missing_extra_gives_the_install_hint(
    make_workspace: MakeWorkspace,
    monkeypatch: pytest.MonkeyPatch,
    plugin: str,
    args: list[str],
    extra: str,
) -> None:
    monkeypatch.setenv("CUEDECK_DISABLE_PLUGINS", plugin)
    result = _invoke(make_cli(), "-C", str(make_workspace()), *args)
    assert result.exit_code == 1
    assert result.stderr.startswith("error[1008]")
    assert f'pip install "cuedeck[{extra}]"' in result.stderr
    assert "No such command" not in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bogus"], "No such option '--bogus'"),
        (["doctor", "--bogus"], "No such option '--bogus'"),
        (["scene", "--format", "yaml"], "'yaml' is not one of"),
        (["nonsense"], "No such command 'nonsense'"),
    ],
)
def test_usage_errors_are_cuedeck_errors(
    make_workspace: MakeWorkspace, args: list[str], message: str
) -> None:
    result = _invoke(make_cli(), "-C", str(make_workspace()), *args)
    assert result.exit_code == 1
    assert result.stderr.startswith("error[1004]")
    assert message in result.stderr
    assert "help: see `cue" in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize(
    "args",
    [["doctor", "--json", "--bogus"], ["index", "--json", "--rebuild", "extra-argument"]],
)
def test_a_json_command_fails_in_json(make_workspace: MakeWorkspace, args: list[str]) -> None:
    result = _invoke(make_cli(), "-C", str(make_workspace()), *args)
    assert result.exit_code == 1
    error = json.loads(result.stdout)["error"]
    assert error["code"] == 1004
    assert error["message"]


def test_a_json_command_reports_cuedeck_errors_in_json(tmp_path: Path) -> None:
    result = _invoke(make_cli(), "-C", str(tmp_path), "doctor", "--json")
    assert result.exit_code == 1
    error = json.loads(result.stdout)["error"]
    assert (error["code"], error["path"]) == (1001, str(tmp_path))


class ShoutTool:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        def shout(workspace: Any, text: str, times: int = 1, tags: list[str] | None = None) -> Any:
            """Upper-case a text.

            Longer description of shouting.
            """
            return {"text": (text.upper() + " ") * times, "tags": tags or []}

        register(shout, category="text", read_only=True)

    @hookimpl
    def register_commands(self, register: Any) -> None:
        register(tool_command("shout"))


def test_a_tool_is_a_command_with_its_own_validation(make_workspace: MakeWorkspace) -> None:
    plugins = make_plugin_host(entry_points=False)
    plugins.register(ShoutTool(), name="shouter")
    root = str(make_workspace())
    cli = make_cli(plugins)
    plain = _invoke(cli, "-C", root, "shout", "hi", "--times", "2", "--tags", "a", "--tags", "b")
    as_json = _invoke(cli, "-C", root, "shout", "hi", "--json")
    key = "sk_live_4eC39HqLyjWDarjtT1zdp7dcTYooMQauvdEDq54"
    secret = _invoke(cli, "-C", root, "shout", "hi", "--tags", key)
    missing = _invoke(cli, "-C", root, "shout")
    wrong = _invoke(cli, "-C", root, "shout", "hi", "--times", "many")
    helped = _invoke(cli, "shout", "--help")
    listed = _invoke(cli, "--help")
    assert plain.exit_code == 0, plain.output
    assert plain.stdout == 'text: HI HI \ntags: ["a", "b"]\n'
    assert json.loads(as_json.stdout) == {"text": "HI ", "tags": []}
    assert key not in secret.stdout and "[REDACTED:stripe-secret-key#1]" in secret.stdout
    assert (missing.exit_code, missing.stderr[:11]) == (1, "error[1004]")
    assert (wrong.exit_code, wrong.stderr[:11]) == (1, "error[1004]")
    assert "Longer description of shouting." in helped.stdout
    assert "--times INTEGER" in helped.stdout
    assert "Upper-case a text." in listed.stdout


def test_the_example_plugin_exposes_its_tool_as_a_command(make_workspace: MakeWorkspace) -> None:
    pytest.importorskip("cuedeck_example_plugin")
    root = make_workspace({"docs/a.md": "# A\n\none two three\n"})
    ok = _invoke(make_cli(), "-C", str(root), "word-count", "docs/a.md", "--json")
    outside = _invoke(make_cli(), "-C", str(root), "word-count", "../a.md")
    assert json.loads(ok.stdout) == {"path": "docs/a.md", "words": 5, "headings": 1}
    assert outside.exit_code == 1
    assert outside.stderr.startswith("error[1004]")


def test_the_example_plugins_parser_is_indexed_searched_and_read_by_anchor(
    make_workspace: MakeWorkspace,
) -> None:
    pytest.importorskip("cuedeck_example_plugin")
    pytest.importorskip("cuedeck_search")
    from cuedeck import open_workspace
    from cuedeck.serving.read_doc import read_doc

    root = make_workspace(
        {
            "deploy/settings.ini": "[database]\nhost = db.internal\npool = 20\n\n"
            "[frobnicator]\nwidgets = 12\nspin = clockwise\n",
            "docs/guide.md": "# Guide\n\nDeploy with care.\n",
        }
    )
    workspace = open_workspace(root)
    assert workspace.plugins.source_of("register_parsers", "ini") == "example"
    document = workspace.document("deploy/settings.ini")
    assert (document.language, document.anchors) == ("ini", ["database", "frobnicator"])
    (hit,) = workspace.search("frobnicator widgets", mode="keyword", limit=1)
    assert (hit.path, hit.anchors[0], hit.line) == ("deploy/settings.ini", "frobnicator", 5)
    page = read_doc(workspace, "deploy/settings.ini", anchor="frobnicator")
    assert page["content"] == "[frobnicator]\nwidgets = 12\nspin = clockwise\n"
    result = _invoke(make_cli(), "-C", str(root), "search", "frobnicator", "--mode", "keyword")
    assert "deploy/settings.ini" in result.output


def test_no_plugin_package_imports_the_cli() -> None:
    """What a command needs comes with the CLI's CommandContext (click's ``obj``): the
    domain packages never import cuedeck_cli, at any depth."""
    import ast

    from tests.conftest import REPO

    found = []
    for name in ("search", "tasks", "memory", "git", "mcp"):
        for path in sorted((REPO / "packages" / f"cuedeck-{name}" / "src").rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                modules = (
                    [alias.name for alias in node.names]
                    if isinstance(node, ast.Import)
                    else [node.module or ""]
                    if isinstance(node, ast.ImportFrom)
                    else []
                )
                found += [f"{path.name}: {m}" for m in modules if m.startswith("cuedeck_cli")]
    assert found == []
