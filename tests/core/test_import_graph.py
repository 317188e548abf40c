"""No import circles inside a distribution, and core's rooms on a ladder.

Every module under ``packages/*/src`` is parsed (not imported) and each ``import`` or
``from ... import`` statement at any depth counts: inside functions (a lazy import still
closes a circle, it only moves the failure to run time) and under ``if TYPE_CHECKING:``
(a circle of types is a circle a reader must hold in their head; a protocol breaks it).
An edge goes to the module an import statement names (``from a.b import c`` names
``a.b.c`` when that is a module, else ``a.b``); the parent packages Python initialises on
the way are not counted, so a lean ``__init__`` re-exporting lazily does not make every
module a cycle with it.

Core (``cuedeck``) is further held to :data:`LADDER`: its rooms (sub-packages) and its
top-level modules on floors, each importing only from floors below its own
(docs/architecture.md says why each sits where it does).
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


def _import_nodes(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Import statements at any depth (in functions and under ``if TYPE_CHECKING:`` too)."""
    return [node for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)]


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
    """Module -> modules of the same distribution it imports."""
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


def test_the_checker_sees_imports_inside_functions_and_for_types(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg import b\n")
    (package / "b.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from pkg.c import C\n"
        "def late():\n    from . import a\n"
    )
    (package / "c.py").write_text("import os\n")
    graph = import_graph(tmp_path)
    assert graph["pkg.b"] == {"pkg.a", "pkg.c"}, "function and TYPE_CHECKING imports are edges"
    assert find_cycles(graph) == [["pkg.a", "pkg.b", "pkg.a"]]
    (package / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.b\n"
    )
    assert find_cycles(import_graph(tmp_path)) == [["pkg.a", "pkg.b", "pkg.a"]], "one per component"


# --- core's ladder ----------------------------------------------------------------------

CORE = REPO / "packages" / "cuedeck-core" / "src"

#: Core's rooms (sub-packages) and top-level modules, lowest floor first. A module may
#: import from its own room and from any floor below; nothing runs back up, and two
#: rooms on one floor know nothing of each other. ``cuedeck`` is the package itself.
LADDER: tuple[tuple[str, ...], ...] = (
    ("errors", "layout", "progress", "shapes"),  # failures, places; shapes without documents
    ("text", "writes", "models"),  # bytes into lines and words; the one write path; shapes
    ("system", "state", "settings"),  # the machine (child processes, git); settings' shapes
    ("watch", "boundary"),  # the watcher (started through system's spawn); the root, paths
    ("token_counts",),
    ("index",),  # files walked, parsed through the parser registry, stored; the graph
    ("markdown", "masking"),  # one parser (registered, not known by the index); secrets
    ("prose",),  # reStructuredText, AsciiDoc, plain text (their anchors follow markdown's)
    ("hooktypes",),  # the plugin contract: its types, then its hooks
    ("hookspecs",),
    ("plugins",),  # the host that loads plugins and the typed views of what they gave
    ("config",),  # config.toml, read with the sections plugins registered
    ("workspace",),  # the facade: config, index, graph, plugins, masking of one folder
    ("refs",),  # features over a workspace: code references and deltas,
    ("scene",),  # scenes,
    ("serving",),  # tools served (core's own tools among them),
    ("doctor", "default_plugins"),  # and what reads all of them
    ("cuedeck",),
)
FLOOR = {unit: floor for floor, units in enumerate(LADDER) for unit in units}
#: At most this many modules at core's top level: its public face (the rest in rooms).
TOP_LEVEL = 15


def _unit(module: str) -> str:
    """The room or top-level module ``module`` belongs to (``cuedeck`` for the package)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def test_every_room_of_core_is_on_the_ladder() -> None:
    units = {_unit(module) for module in import_graph(CORE)}
    assert units - set(FLOOR) == set(), "place these on the LADDER (docs/architecture.md)"
    assert set(FLOOR) - units == set(), "the LADDER names rooms that are gone"
    assert len(FLOOR) == sum(len(units) for units in LADDER), "a room is on two floors"


def test_nothing_in_core_imports_against_the_ladder() -> None:
    against = sorted(
        f"{module} -> {target}  ({_unit(module)} is on floor {FLOOR[_unit(module)]}, "
        f"{_unit(target)} on floor {FLOOR[_unit(target)]})"
        for module, targets in import_graph(CORE).items()
        for target in targets
        if _unit(target) != _unit(module) and FLOOR[_unit(target)] >= FLOOR[_unit(module)]
    )
    assert not against, "imports against the ladder:\n" + "\n".join(against)


def test_core_keeps_its_public_face_at_the_top_level() -> None:
    top = sorted(path.name for path in (CORE / "cuedeck").glob("*.py"))
    assert len(top) <= TOP_LEVEL, f"{len(top)} modules at core's top level: {top}"
