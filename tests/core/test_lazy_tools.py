"""Tools registered by import path: imported on first use, broken ones reported, not fatal."""

from __future__ import annotations

import json
import logging
import sys
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from click.testing import CliRunner

from cuedeck import hookimpl, open_workspace
from cuedeck.errors import InvalidInput, ToolLoadFailed
from cuedeck.plugins.host import make_plugin_host
from cuedeck_cli.app import make_cli
from tests.conftest import MakeWorkspace

if TYPE_CHECKING:
    from collections.abc import Iterator

TOOL_MODULE = '''
"""A tool module of a test plugin."""

LOADED = True


def count_words(workspace, path: str, at_least: int = 0) -> dict:
    """Count the words of a workspace file.

    Longer text after the summary.
    """
    words = len(workspace.read_text(workspace.relative_path(path)).split())
    return {"path": path, "words": words, "enough": words >= at_least}


def undocumented(workspace) -> None:
    pass


NOT_CALLABLE = 42
'''


@pytest.fixture
def tool_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The name of a fresh tool module on sys.path, never imported yet."""
    name = f"lazy_tools_{uuid.uuid4().hex}"
    folder = tmp_path / "plugin-src"
    folder.mkdir()
    (folder / f"{name}.py").write_text(TOOL_MODULE, encoding="utf-8")
    (folder / f"{name}_broken.py").write_text("raise RuntimeError('boom at import')\n")
    monkeypatch.syspath_prepend(str(folder))
    yield name
    for module in (name, f"{name}_broken"):
        sys.modules.pop(module, None)


class PathPlugin:
    """Registers ``count_words`` by import path, as first-party plugins do, and each of
    ``extra`` (paths with a ``{module}`` placeholder) as the tool ``extra``."""

    def __init__(self, module: str, *extra: str) -> None:
        self.module = module
        self.extra = extra

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(f"{self.module}:count_words", category="text", read_only=True, idempotent=True)
        for path in self.extra:
            register(path.format(module=self.module), name="extra", category="text")


def _plugins(module: str, *extra: str, entry_points: bool = False) -> Any:
    plugins = make_plugin_host(entry_points=entry_points)
    plugins.register(PathPlugin(module, *extra), name="lazy-plugin")
    return plugins


FILES = {".cuedeck/docs/a.md": "# A\n\none two three\n"}


def test_a_tool_registered_by_path_is_imported_when_first_used(
    tool_module: str, make_workspace: MakeWorkspace
) -> None:
    plugins = _plugins(tool_module)
    workspace = open_workspace(make_workspace(FILES), plugins=plugins)
    tool = plugins.tools()["count_words"]  # the name is the part after ':'
    assert (tool.plugin, tool.category, tool.role) == ("lazy-plugin", "text", "read")
    assert tool_module not in sys.modules
    assert tool.call(workspace, {"path": ".cuedeck/docs/a.md", "at_least": 2}) == {
        "path": ".cuedeck/docs/a.md",
        "words": 5,
        "enough": True,
    }
    assert sys.modules[tool_module].LOADED
    assert tool.summary == "Count the words of a workspace file."
    assert tool.input_schema()["required"] == ["path"]
    with pytest.raises(InvalidInput) as refused:  # validated like any tool
        tool.call(workspace, {"path": ".cuedeck/docs/a.md", "at_least": "two"})
    assert refused.value.data["field"] == "at_least"


@pytest.mark.parametrize(
    ("target", "cause"),
    [
        ("{module}_missing:count_words", "ModuleNotFoundError"),
        ("{module}:no_such_tool", "AttributeError"),
        ("{module}_broken:count_words", "RuntimeError: boom at import"),
        ("{module}:NOT_CALLABLE", "TypeError: int object is not callable"),
    ],
)
def test_a_path_that_does_not_load_is_a_coded_error_naming_tool_plugin_and_path(
    tool_module: str, make_workspace: MakeWorkspace, target: str, cause: str
) -> None:
    plugins = _plugins(tool_module, target)
    workspace = open_workspace(make_workspace(FILES), plugins=plugins)
    name = "extra"
    path = target.format(module=tool_module)
    tool = plugins.tools()[name]  # looking tools up loads none of them
    with pytest.raises(ToolLoadFailed) as failed:
        tool.call(workspace, {})
    error = failed.value
    assert error.code == 1004
    assert {k: error.data[k] for k in ("tool", "plugin", "target")} == {
        "tool": name,
        "plugin": "lazy-plugin",
        "target": path,
    }
    assert f"tool {name!r} from 'lazy-plugin' cannot be loaded from {path!r}" in error.message
    assert cause in error.message
    assert error.help is not None and "CUEDECK_DISABLE_PLUGINS" in error.help
    # The plugin's other tool is unaffected.
    assert plugins.tools()["count_words"].call(workspace, {"path": ".cuedeck/docs/a.md"})


def test_a_path_is_checked_like_a_function_when_it_loads(tool_module: str) -> None:
    plugins = _plugins(tool_module, "{module}:undocumented")
    tool = plugins.tools()["extra"]
    with pytest.raises(InvalidInput, match="'extra' from 'lazy-plugin' has no docstring"):
        tool.check()


def test_a_string_that_is_no_import_path_is_refused_when_tools_are_looked_up(
    tool_module: str,
) -> None:
    plugins = _plugins(tool_module, "{module}.count_words")
    with pytest.raises(InvalidInput, match="is not an import path") as refused:
        plugins.tools()
    assert refused.value.data["field"] == "func"


def test_check_tools_leaves_a_broken_tool_out_and_records_its_plugin(
    tool_module: str, caplog: pytest.LogCaptureFixture
) -> None:
    plugins = _plugins(tool_module, "{module}:no_such_tool")
    with caplog.at_level(logging.WARNING, logger="cuedeck"):
        checked = plugins.checked_tools()
        plugins.checked_tools()  # checked once per host: one failure, not two
    assert "count_words" in checked and "build_scene" in checked
    assert "extra" not in checked
    (failure,) = plugins.failures
    assert failure.name == "lazy-plugin"
    assert failure.error.startswith("ToolLoadFailed: tool 'extra' from 'lazy-plugin'")
    assert "no_such_tool" in caplog.text


def test_cue_plugins_and_doctor_report_a_broken_tool(
    tool_module: str, make_workspace: MakeWorkspace
) -> None:
    root = str(make_workspace(FILES))
    target = f"{tool_module}_missing:ghost"

    def invoke(*args: str) -> Any:
        # A fresh host per command, as each run of `cue` has; the installed plugins give
        # the commands.
        cli = make_cli(_plugins(tool_module, "{module}_missing:ghost", entry_points=True))
        return CliRunner().invoke(cli, ["-C", root, *args])

    listed = invoke("plugins", "--json")
    assert listed.exit_code == 0, listed.output
    report = json.loads(listed.stdout)
    (failure,) = report["failures"]
    assert failure["name"] == "lazy-plugin"
    assert target in failure["error"]
    assert report["registered"]["tools"]["count_words"] == "lazy-plugin"

    doctor = invoke("doctor", "--json")
    problems = json.loads(doctor.stdout)["problems"]
    broken = [p for p in problems if target in p["message"]]
    assert [(p["severity"], p["code"]) for p in broken] == [("warning", 1008)]
    assert "tool 'extra' from 'lazy-plugin'" in broken[0]["message"]
