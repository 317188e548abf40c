"""No import circles inside a distribution: every package's modules form a ladder.

Every module under ``packages/*/src`` is parsed (not imported) and each ``import`` or
``from ... import`` statement at any depth counts, including those inside functions:
a lazy import still closes a circle, it only moves the failure to run time. Imports
under ``if TYPE_CHECKING:`` are excluded (they never run). An edge goes to the module an
import statement names (``from a.b import c`` names ``a.b.c`` when that is a module, else
``a.b``); the parent packages Python initialises on the way are not counted, so a lean
``__init__`` re-exporting lazily does not make every module a cycle with it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DISTRIBUTIONS = sorted(p for p in (REPO / "packages").glob("*/src") if p.is_dir())


def _modules(src: Path) -> dict[str, Path]:
    """Module name -> file, for every ``.py`` file under a src folder."""
    found = {}
    for path in sorted(src.rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Import statements at any depth, skipping the bodies of ``if TYPE_CHECKING:``."""
    found: list[ast.Import | ast.ImportFrom] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))
    return found


def _targets(
    module: str, is_package: bool, node: ast.Import | ast.ImportFrom, known: set[str]
) -> set[str]:
    """The modules of this distribution that one import statement names."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names if alias.name in known}
    base = node.module or ""
    if node.level:
        package = module.split(".") if is_package else module.split(".")[:-1]
        anchor = package[: len(package) - (node.level - 1)]
        base = ".".join([*anchor, base] if base else anchor)
    targets = set()
    for alias in node.names:
        child = f"{base}.{alias.name}"
        if child in known:
            targets.add(child)
        elif base in known:
            targets.add(base)
    return targets


def import_graph(src: Path) -> dict[str, set[str]]:
    """Module -> modules of the same distribution it imports (outside TYPE_CHECKING)."""
    modules = _modules(src)
    known = set(modules)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        edges: set[str] = set()
        for node in _import_nodes(tree):
            edges |= _targets(name, path.name == "__init__.py", node, known)
        edges.discard(name)
        graph[name] = edges
    return graph


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (first module repeated at the end) per strongly connected component."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def connect(node: str) -> None:  # Tarjan; module graphs are shallow enough to recurse
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(component)

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return [_cycle_in(graph, component) for component in components]


def _cycle_in(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """A shortest path from the component's first module back to itself."""
    start = min(component)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(graph[node] & component):
                if target == start:
                    return [*paths[node], start]
                if target not in paths:
                    paths[target] = [*paths[node], target]
                    following.append(target)
        frontier = following
    raise AssertionError("a strongly connected component always holds a cycle")


@pytest.mark.parametrize("src", DISTRIBUTIONS, ids=[src.parent.name for src in DISTRIBUTIONS])
def test_no_import_cycle_within_a_distribution(src: Path) -> None:
    cycles = find_cycles(import_graph(src))
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_the_checker_sees_imports_inside_functions(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg import b\n")
    (package / "b.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from pkg.c import C\n"
        "def late():\n    from . import a\n"
    )
    (package / "c.py").write_text("import pkg.b\n")
    graph = import_graph(tmp_path)
    assert graph["pkg.b"] == {"pkg.a"}, "TYPE_CHECKING imports are not edges"
    assert find_cycles(graph) == [["pkg.a", "pkg.b", "pkg.a"]]
