"""Plugin loading through entry points: allow/deny lists, broken plugins, name clashes."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

import pytest

from cuedeck import hookimpl
from cuedeck.errors import InvalidInput
from cuedeck.plugins import (
    DEFAULT_PLUGINS,
    get_searchers,
    get_tools,
    hook_names,
    make_plugin_manager,
    plugin_failures,
    plugin_infos,
)
from tests.conftest import needs_extras

REPO = Path(__file__).resolve().parents[2]


@needs_extras
def test_core_and_installed_plugins_load() -> None:
    pm = make_plugin_manager()
    names = {info.name for info in plugin_infos(pm)}
    assert set(DEFAULT_PLUGINS) <= names
    assert {"search", "tasks", "mcp", "code", "example"} <= names
    example = next(info for info in plugin_infos(pm) if info.name == "example")
    assert example.distribution == "cuedeck-example-plugin"
    assert example.version == "0.1.0"
    assert example.hooks == ("register_commands", "register_parsers", "register_tools")
    assert get_tools(pm)["word_count"].plugin == "example"


@needs_extras
def test_disable_and_allow_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUEDECK_DISABLE_PLUGINS", "example, mcp")
    names = {info.name for info in plugin_infos(make_plugin_manager())}
    assert "example" not in names and "mcp" not in names and "tasks" in names
    monkeypatch.delenv("CUEDECK_DISABLE_PLUGINS")
    monkeypatch.setenv("CUEDECK_LOAD_PLUGINS", "example")
    names = {info.name for info in plugin_infos(make_plugin_manager())}
    assert names == {*DEFAULT_PLUGINS, "example"}


def test_a_broken_plugin_is_a_warning_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    dist = tmp_path / "cuedeck_broken-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: cuedeck-broken\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[cuedeck]\nbroken = cuedeck_broken_module\n")
    (tmp_path / "cuedeck_broken_module.py").write_text("raise RuntimeError('boom at import')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with caplog.at_level(logging.WARNING, logger="cuedeck"):
        pm = make_plugin_manager()
    (failure,) = plugin_failures(pm)
    assert (failure.name, failure.distribution) == ("broken", "cuedeck-broken")
    assert "boom at import" in failure.error
    assert "broken" in caplog.text
    assert set(DEFAULT_PLUGINS) <= {info.name for info in plugin_infos(pm)}


class _Keyword:
    def search(self, *args: Any, **kwargs: Any) -> list[Any]:
        return []


class _Clash:
    @hookimpl
    def register_searchers(self, register: Any) -> None:
        register("title", _Keyword())


class _Replacer:
    searcher = _Keyword()

    @hookimpl
    def register_searchers(self, register: Any) -> None:
        register("title", self.searcher, replace=True)


def test_duplicate_names_name_both_plugins() -> None:
    pm = make_plugin_manager(entry_points=False)
    pm.register(_Clash(), name="first")
    pm.register(_Clash(), name="second")
    with pytest.raises(InvalidInput, match=r"'title' is registered by both 'first' and 'second'"):
        get_searchers(pm)


def test_replace_takes_a_name_over() -> None:
    pm = make_plugin_manager(entry_points=False)
    pm.register(_Clash(), name="first")
    pm.register(_Replacer(), name="second")
    assert get_searchers(pm)["title"] is _Replacer.searcher


def test_every_hook_is_documented_and_tested() -> None:
    docs = (REPO / "docs" / "plugin-hooks.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^## `(register_\w+)`", docs, flags=re.M))
    tests = "\n".join(p.read_text(encoding="utf-8") for p in (REPO / "tests").rglob("test_*.py"))
    tested = set(re.findall(r"def test_hook_(register_\w+)\(", tests))
    assert set(hook_names()) == documented, "docs/plugin-hooks.md needs one section per hook"
    assert set(hook_names()) == tested, "each hook needs a test_hook_<name> test"
