"""Core knows no plugin: its modules name no plugin package and no plugin's tool.

Plugins register what they bring (settings, tools, scene sources, errors...) through the
hooks; core reads what was registered. So no core module may spell a plugin's import or
distribution name (docstrings and comments included), nor, in its code, the name of a
tool a plugin registers (docstrings may use one as an example).
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

from cuedeck.plugins.host import DEFAULT_PLUGINS, make_plugin_host
from tests.conftest import needs_extras

CORE = Path(importlib.import_module("cuedeck").__file__ or "").parent
PLUGIN_PACKAGES = re.compile(
    r"cuedeck[_-](?:search|tasks|memory|git|mcp|cli|code|example[_-]plugin)\b"
)


def _modules() -> list[Path]:
    return sorted(CORE.rglob("*.py"))


def _code_words(path: Path) -> set[str]:
    """Identifiers and string constants of a module's code, docstrings left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    words: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in docstrings:
                words.update(re.findall(r"\w+", node.value))
        elif isinstance(node, ast.Name):
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
