"""Core's own plugins are thin, domain modules never implement hooks, and the host keeps
what CueDeck records beside pluggy's manager."""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path
from typing import Any

from cuedeck import hookimpl
from cuedeck.hookspecs import PROJECT
from cuedeck.plugins.host import DEFAULT_PLUGINS, PluginHost, get_searchers, make_plugin_host

CORE = Path(importlib.import_module("cuedeck").__file__ or "").parent
#: Top-level imports a default plugin module may have: everything else inside the hook.
THIN_IMPORTS = {"__future__", "typing", "cuedeck.hookspecs"}


def test_default_plugins_are_thin_modules_of_hookimpls() -> None:
    for name in DEFAULT_PLUGINS:
        module = importlib.import_module(name)
        assert module.__name__.startswith("cuedeck.default_plugins.")
        functions = inspect.getmembers(module, inspect.isfunction)
        assert functions, f"{name} implements no hook"
        for function_name, function in functions:
            assert hasattr(function, PROJECT + "_impl"), f"{name}.{function_name} is no hookimpl"
        tree = ast.parse(Path(module.__file__ or "").read_text(encoding="utf-8"))
        top = {node.module for node in tree.body if isinstance(node, ast.ImportFrom)}
        top |= {a.name for n in tree.body if isinstance(n, ast.Import) for a in n.names}
        assert top <= THIN_IMPORTS, f"{name} imports {top - THIN_IMPORTS} at module level"


def test_no_domain_module_imports_hookimpl() -> None:
    allowed = {CORE / "__init__.py", CORE / "hookspecs.py"}
    for path in sorted(CORE.glob("*.py")):
        if path in allowed:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom)
            for alias in node.names
        }
        assert "hookimpl" not in imported, f"{path.name} imports hookimpl"


def test_core_tools_keep_their_order_and_owner() -> None:
    tools = (make_plugin_host(entry_points=False)).tools()
    assert list(tools) == [
        "build_scene",
        "read_doc",
        "get_file_content",
        "create_file",
        "edit_file",
        "delete_file",
        "get_tool_categories",
        "get_tool_docs",
        "first_time_user_guide",
    ]
    assert {tool.plugin for tool in tools.values()} == {"cuedeck.default_plugins.tools"}


class _Title:
    def search(self, *args: Any, **kwargs: Any) -> list[Any]:
        return []


class _TitlePlugin:
    @hookimpl
    def register_searchers(self, register: Any) -> None:
        register("title", _Title())


def test_the_host_records_owners_and_starts_over_when_a_plugin_arrives() -> None:
    host = make_plugin_host(entry_points=False)
    assert isinstance(host, PluginHost)
    assert get_searchers(host) == {}
    host.register(_TitlePlugin(), name="late")
    assert set(get_searchers(host)) == {"title"}  # not the answer cached before
    assert host.source_of("register_searchers", "title") == "late"
    infos = {info.name: info for info in host.infos()}
    assert infos["late"].distribution is None
    assert infos["late"].hooks == ("register_searchers",)
    assert infos["cuedeck.default_plugins.pruners"].distribution == "cuedeck-core"
    assert infos["cuedeck.default_plugins.pruners"].hooks == ("register_pruners",)
