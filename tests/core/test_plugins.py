"""Plugin loading through entry points: allow/deny lists, broken plugins, name clashes."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from cuedeck import hookimpl
from cuedeck.errors import InvalidInput
from cuedeck.plugins.host import DEFAULT_PLUGINS, get_searchers, hook_names, make_plugin_host
from tests.conftest import needs_extras

REPO = Path(__file__).resolve().parents[2]


@needs_extras
def test_core_and_installed_plugins_load() -> None:
    pm = make_plugin_host()
    names = {info.name for info in pm.infos()}
    assert set(DEFAULT_PLUGINS) <= names
    assert {"search", "tasks", "mcp", "code", "example"} <= names
    example = next(info for info in pm.infos() if info.name == "example")
    assert example.distribution == "cuedeck-example-plugin"
    assert example.version == "0.1.0"
    assert example.hooks == (
        "register_commands",
        "register_maskers",
        "register_parsers",
        "register_settings",
        "register_tools",
    )
    assert example.markers == {"register_maskers": ("tryfirst",)}
    assert pm.tools()["word_count"].plugin == "example"


@needs_extras
def test_disable_and_allow_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUEDECK_DISABLE_PLUGINS", "example, mcp")
    names = {info.name for info in make_plugin_host().infos()}
    assert "example" not in names and "mcp" not in names and "tasks" in names
    monkeypatch.delenv("CUEDECK_DISABLE_PLUGINS")
    monkeypatch.setenv("CUEDECK_LOAD_PLUGINS", "example")
    names = {info.name for info in make_plugin_host().infos()}
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
        pm = make_plugin_host()
    (failure,) = pm.failures
    assert (failure.name, failure.distribution) == ("broken", "cuedeck-broken")
    assert "boom at import" in failure.error
    assert "broken" in caplog.text
    assert set(DEFAULT_PLUGINS) <= {info.name for info in pm.infos()}


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
    pm = make_plugin_host(entry_points=False)
    pm.register(_Clash(), name="first")
    pm.register(_Clash(), name="second")
    # Pluggy calls the plugin registered last first: "second" holds the name when "first" comes.
    with pytest.raises(InvalidInput, match=r"'title' is registered by both 'second' and 'first'"):
        get_searchers(pm)


def test_replace_takes_a_name_over() -> None:
    pm = make_plugin_host(entry_points=False)
    pm.register(_Clash(), name="first")
    pm.register(_Replacer(), name="second")
    assert get_searchers(pm)["title"] is _Replacer.searcher


def test_every_hook_is_documented_and_tested() -> None:
    docs = (REPO / "docs" / "plugin-hooks.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^## `(\w+)`", docs, flags=re.M))
    tests = "\n".join(p.read_text(encoding="utf-8") for p in (REPO / "tests").rglob("test_*.py"))
    tested = set(re.findall(r"def test_hook_(\w+)\(", tests))
    assert set(hook_names()) == documented, "docs/plugin-hooks.md needs one section per hook"
    assert set(hook_names()) == tested, "each hook needs a test_hook_<name> test"


def _named(name: str, **markers: bool) -> SimpleNamespace:
    """A plugin registering one searcher named ``name``, with the given pluggy markers."""

    def register_searchers(register: Any) -> None:
        register(name, _Keyword())

    return SimpleNamespace(register_searchers=hookimpl(**markers)(register_searchers))


def test_hooks_run_through_pluggy_in_its_order() -> None:
    pm = make_plugin_host(entry_points=False)
    pm.register(_named("early", tryfirst=True), name="early")
    pm.register(_named("late", trylast=True), name="late")
    pm.register(_named("plain-1"), name="plain-1")
    pm.register(_named("plain-2"), name="plain-2")
    # tryfirst first, trylast last, and the rest the plugin registered last first.
    assert list(get_searchers(pm)) == ["early", "plain-2", "plain-1", "late"]
    assert pm.source_of("register_searchers", "early") == "early"
    info = {i.name: i for i in pm.infos()}
    assert info["early"].markers == {"register_searchers": ("tryfirst",)}
    assert info["plain-1"].markers == {}


class _NewStyleWrapper:
    @hookimpl(wrapper=True)
    def register_searchers(self, register: Any) -> Any:
        register("before", _Keyword())
        result = yield
        register("after", _Keyword())
        return result


class _OldStyleWrapper:
    @hookimpl(hookwrapper=True)
    def register_searchers(self, register: Any) -> Any:
        register("old-before", _Keyword())
        yield
        register("old-after", _Keyword())


def test_wrappers_run_around_the_other_implementations() -> None:
    pm = make_plugin_host(entry_points=False)
    pm.register(_named("plain"), name="plain")
    pm.register(_NewStyleWrapper(), name="new-wrapper")
    pm.register(_OldStyleWrapper(), name="old-wrapper")
    assert list(get_searchers(pm)) == ["old-before", "before", "plain", "after", "old-after"]
    owners = pm.collect("register_searchers")
    assert {name: entry.plugin for name, entry in owners.items()} == {
        "old-before": "old-wrapper",
        "before": "new-wrapper",
        "plain": "plain",
        "after": "new-wrapper",
        "old-after": "old-wrapper",
    }
    assert pm.failures == []


class _BrokenBefore:
    @hookimpl(wrapper=True)
    def register_searchers(self, register: Any) -> Any:
        raise RuntimeError("wrapper broke before its yield")
        yield  # a wrapper is a generator


class _BrokenAfter:
    @hookimpl(wrapper=True)
    def register_searchers(self, register: Any) -> Any:
        register("kept", _Keyword())
        yield
        raise RuntimeError("wrapper broke after its yield")


class _Broken:
    @hookimpl(tryfirst=True)
    def register_searchers(self, register: Any) -> None:
        raise RuntimeError("plain hook broke")


def test_a_broken_implementation_or_wrapper_is_isolated(
    caplog: pytest.LogCaptureFixture,
) -> None:
    pm = make_plugin_host(entry_points=False)
    pm.register(_named("plain"), name="plain")
    pm.register(_BrokenBefore(), name="broken-before")
    pm.register(_BrokenAfter(), name="broken-after")
    pm.register(_Broken(), name="broken")
    with caplog.at_level(logging.WARNING, logger="cuedeck"):
        assert list(get_searchers(pm)) == ["kept", "plain"]
    assert {(f.name, f.error) for f in pm.failures} == {
        ("broken-before", "RuntimeError: wrapper broke before its yield"),
        ("broken-after", "RuntimeError: wrapper broke after its yield"),
        ("broken", "RuntimeError: plain hook broke"),
    }
    assert "plugin 'broken' failed in register_searchers" in caplog.text


class _Hoarder:
    kept: Any = None

    @hookimpl
    def register_searchers(self, register: Any) -> None:
        _Hoarder.kept = register


def test_register_outside_its_hook_is_refused() -> None:
    pm = make_plugin_host(entry_points=False)
    pm.register(_Hoarder(), name="hoarder")
    get_searchers(pm)
    with pytest.raises(InvalidInput, match="register was called outside a hook implementation"):
        _Hoarder.kept("title", _Keyword())


def test_pluggy_holds_a_stand_in_and_nothing_of_pluggy_is_patched() -> None:
    pm = make_plugin_host(entry_points=False)
    broken = _Broken()
    pm.register(_named("plain"), name="plain")
    pm.register(broken, name="broken")
    caller = pm.pluggy.hook.register_searchers
    held = {impl.plugin_name: impl.function for impl in caller.get_hookimpls()}
    assert held["broken"] != broken.register_searchers  # pluggy holds the guarded one
    assert list(get_searchers(pm)) == ["plain"]  # it raised: skipped, the others kept
    assert [(f.name, f.error) for f in pm.failures] == [
        ("broken", "RuntimeError: plain hook broke")
    ]
    after = {impl.plugin_name: impl.function for impl in caller.get_hookimpls()}
    assert after == held, "calling a hook replaces no HookImpl.function"
    assert dict(pm.list_name_plugin())["broken"] is broken
    with pytest.raises(ValueError, match="already registered"):
        pm.register(broken, name="broken")
    with pytest.raises(ValueError, match="already registered"):
        pm.register(broken, name="broken-again")
