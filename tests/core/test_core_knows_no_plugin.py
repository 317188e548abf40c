"""Core knows no plugin: its modules name no plugin package, tool, path or setting.

Plugins register what they bring (settings, tools, paths, scene sources, errors...)
through the hooks; core reads what was registered. So no core module may spell a
plugin's import or distribution name (docstrings and comments included), nor, in its
code, the name of a tool a plugin registers, a place it keeps under ``.cuedeck/``
(``register_paths``) or a key of its settings (``[section]``, ``section.key``);
docstrings may use any of them as an example.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import attrs

from cuedeck.layout import place_name
from cuedeck.plugins.host import DEFAULT_PLUGINS, make_plugin_host
from tests.conftest import needs_extras

CORE = Path(importlib.import_module("cuedeck").__file__ or "").parent
PLUGIN_PACKAGES = re.compile(
    r"cuedeck[_-](?:search|tasks|memory|git|mcp|cli|code|example[_-]plugin)\b"
)


def _modules() -> list[Path]:
    return sorted(CORE.rglob("*.py"))


def _code_strings(tree: ast.AST) -> list[str]:
    """The string constants of a module's code, docstrings left out."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        if id(node) not in docstrings
    ]


def _code_words(path: Path) -> set[str]:
    """Identifiers and string constants of a module's code, docstrings left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    words: set[str] = set()
    for text in _code_strings(tree):
        words.update(re.findall(r"\w+", text))
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            words.add(node.id)
        elif isinstance(node, ast.Attribute):
            words.add(node.attr)
    return words


def test_no_core_module_names_a_plugin_package() -> None:
    found = {
        f"{path.relative_to(CORE)}:{number}: {match.group()}"
        for path in _modules()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        for match in PLUGIN_PACKAGES.finditer(line)
    }
    assert not found, sorted(found)


@needs_extras
def test_no_core_module_names_a_plugin_tool_in_its_code() -> None:
    tools = make_plugin_host().tools()
    theirs = {name for name, tool in tools.items() if tool.plugin not in DEFAULT_PLUGINS}
    assert {"list_tasks", "read_context", "git_status", "whoami", "word_count"} <= theirs
    # A function core defines itself is its own, whatever a tool is called
    # (Document.find_symbol, beside cuedeck-code's find_symbol tool).
    theirs -= {
        node.name
        for path in _modules()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    found = {
        f"{path.relative_to(CORE)}: {word}"
        for path in _modules()
        for word in _code_words(path) & theirs
    }
    assert not found, sorted(found)


def _theirs(hook: str) -> set[str]:
    """What the installed plugins (not core's own) registered through ``hook``."""
    host = make_plugin_host()
    return {n for n, e in host.collect(hook).items() if e.plugin not in DEFAULT_PLUGINS}


def _named_in_code(patterns: dict[str, re.Pattern[str]]) -> set[str]:
    return {
        f"{path.relative_to(CORE)}: {name} in {text!r}"
        for path in _modules()
        for text in _code_strings(ast.parse(path.read_text(encoding="utf-8")))
        for name, pattern in patterns.items()
        if pattern.search(text)
    }


@needs_extras
def test_no_core_module_names_a_plugin_path_in_its_code() -> None:
    places = {place_name(name) for name in _theirs("register_paths")}
    assert {"memory", "access.toml", "team"} <= places
    # A path component: ".cuedeck/memory", "access.toml", "memory/" (a word in prose is not).
    patterns = {
        place: re.compile(rf"(?:^|/){re.escape(place)}(?:/|$)|^{re.escape(place)}\.", re.I | re.M)
        for place in places
    }
    patterns |= {
        place: re.compile(rf"(?<![\w.-]){re.escape(place)}(?![\w-])", re.I)
        for place in places
        if "." in place  # a file name is never an English word
    }
    found = _named_in_code(patterns)
    assert not found, sorted(found)


@needs_extras
def test_no_core_module_names_a_plugin_setting_in_its_code() -> None:
    host = make_plugin_host()
    sections = {
        name: host.items("register_settings")[name] for name in _theirs("register_settings")
    }
    assert {"rate_limits", "memory", "mcp", "search"} <= set(sections)
    patterns = {}
    for name, cls in sections.items():
        keys = [field.name for field in attrs.fields(cls)]
        pattern = rf"\[{name}[\].]|\b{name}\.(?:{'|'.join(keys)})\b|CUEDECK_{name.upper()}_"
        patterns[name] = re.compile(pattern)
    found = _named_in_code(patterns)
    assert not found, sorted(found)


def test_the_checks_see_a_path_and_a_setting() -> None:
    tree = ast.parse(
        'def f():\n    """The [memory] docs may say memory.scene."""\n'
        '    return ("x/.cuedeck/memory/y", "[memory]", "memory.scene", "out of memory")\n'
    )
    strings = _code_strings(tree)
    assert strings == ["x/.cuedeck/memory/y", "[memory]", "memory.scene", "out of memory"]
    place = re.compile(r"(?:^|/)memory(?:/|$)|^memory\.", re.I | re.M)
    assert [bool(place.search(text)) for text in strings] == [True, False, True, False]
