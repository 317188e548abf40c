"""The tasks plugin: registered through entry points, and light to load."""

from __future__ import annotations

import pytest

from cuedeck.plugins.host import get_services, make_plugin_host
from tests.conftest import MakeWorkspace, run_script


def test_the_plugin_registers_the_service_tools_and_commands() -> None:
    pm = make_plugin_host()
    info = next(info for info in pm.infos() if info.name == "tasks")
    assert info.distribution == "cuedeck-tasks"
    assert info.hooks == (
        "register_checks",
        "register_commands",
        "register_init_steps",
        "register_scene_sources",
        "register_services",
        "register_settings",
        "register_tools",
    )
    assert {"cards", "claims"} <= set(get_services(pm))
    assert pm.source_of("register_settings", "tasks") == "tasks"
    assert pm.source_of("register_services", "cards") == "tasks"


def test_loading_the_cli_does_not_import_the_task_modules() -> None:
    code = (
        "import json, sys, click\n"
        "from cuedeck_cli.app import make_cli\n"
        "cli = make_cli()\n"
        "ours = ('cuedeck_tasks', 'prompt_toolkit')\n"
        "loaded = sorted(m for m in sys.modules if m.startswith(ours))\n"
        "names = cli.list_commands(click.Context(cli))\n"
        "print(json.dumps({'commands': names, 'loaded': loaded}))\n"
    )
    report = run_script(code)
    assert {"card", "open"} <= set(report["commands"])
    # The commands are registered by import path: their module loads when one runs.
    assert report["loaded"] == ["cuedeck_tasks", "cuedeck_tasks.plugin"]


@pytest.mark.slow
def test_running_one_tool_imports_that_tool_module_alone(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({".cuedeck/cards/abc123.md": "---\nid: abc123\ntitle: Login\n---\n"})
    modules = [  # the first-party tool modules
        "cuedeck.serving.scene_tool",
        "cuedeck.serving.file_tools",
        "cuedeck.serving.guide",
        "cuedeck.serving.read_doc",
        "cuedeck_tasks.tools",
        "cuedeck_search.tool",
        "cuedeck_memory.tools",
        "cuedeck_git.status",
        "cuedeck_git.history",
        "cuedeck_mcp.tools",
    ]
    code = (
        "import json, sys\n"
        "from cuedeck import open_workspace\n"
        f"modules = {modules!r}\n"
        f"workspace = open_workspace({str(root)!r})\n"
        "tools = workspace.plugins.tools()\n"
        "before = [m for m in modules if m in sys.modules]\n"
        "reply = tools['list_tasks'].call(workspace, {})\n"
        "after = [m for m in modules if m in sys.modules]\n"
        "print(json.dumps({'tools': len(tools), 'reply': reply, 'before': before, "
        "'after': after}))\n"
    )
    report = run_script(code)
    assert report["tools"] > 10  # every installed plugin's tools are registered
    assert [card["id"] for card in report["reply"]] == ["abc123"]
    assert report["before"] == []
    assert report["after"] == ["cuedeck_tasks.tools"]
