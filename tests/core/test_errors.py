"""Error codes: every CueError class of every package, its code reserved and documented.

Classes are found by parsing the source of every package (and the example plugin), not
by importing it, so the check covers modules no test imports and needs no extras.
"""

from __future__ import annotations

import ast
import re

import attrs

from tests.conftest import REPO

SOURCES = sorted([*(REPO / "packages").glob("*/src"), *(REPO / "examples").glob("*/src")])
DOCS = REPO / "docs" / "errors.md"


@attrs.frozen
class ErrorClass:
    name: str
    module: str
    bases: tuple[str, ...]
    own_code: int | None


def _classes() -> dict[str, ErrorClass]:
    """Every class of every package by name (names are unique across CueDeck)."""
    found: dict[str, ErrorClass] = {}
    for src in SOURCES:
        for path in sorted(src.rglob("*.py")):
            module = ".".join(path.relative_to(src).with_suffix("").parts)
            for node in ast.parse(path.read_text(encoding="utf-8")).body:
                if not isinstance(node, ast.ClassDef):
                    continue
                code = next(
                    (
                        statement.value.value
                        for statement in node.body
                        if isinstance(statement, ast.Assign)
                        and [getattr(t, "id", None) for t in statement.targets] == ["code"]
                        and isinstance(statement.value, ast.Constant)
                    ),
                    None,
                )
                bases = tuple(
                    b.id if isinstance(b, ast.Name) else ast.unparse(b) for b in node.bases
                )
                found[node.name] = ErrorClass(node.name, module, bases, code)
    return found


def _error_classes() -> dict[str, tuple[ErrorClass, int, str]]:
    """CueError and its subclasses: the class, its code, and the class that set it."""
    classes = _classes()
    resolved: dict[str, tuple[ErrorClass, int, str]] = {}

    def resolve(name: str) -> tuple[int, str] | None:
        cls = classes.get(name)
        if cls is None:
            return None
        if name == "CueError":
            return (cls.own_code or 1000), name
        for base in cls.bases:
            parent = resolve(base)
            if parent is not None:
                return (cls.own_code, name) if cls.own_code is not None else parent
        return None

    for name, cls in classes.items():
        if (code := resolve(name)) is not None:
            resolved[name] = (cls, *code)
    return resolved


def _documented() -> dict[int, str]:
    """Code -> its row of the class table in docs/errors.md."""
    rows = re.findall(r"^\| (\d+) \| (`[^|]*) \|", DOCS.read_text(encoding="utf-8"), flags=re.M)
    return {int(code): classes for code, classes in rows}


def _ranges() -> list[tuple[int, int]]:
    """The reserved ranges of docs/errors.md's "Code ranges" table."""
    table = DOCS.read_text(encoding="utf-8").split("### Code ranges", 1)[1]
    found = []
    for low, high in re.findall(r"^\| (\d+)(?:–(\d+))? \|", table, flags=re.M):
        found.append((int(low), int(high or low)))
    return found


def test_the_scan_finds_core_and_plugin_errors() -> None:
    errors = _error_classes()
    assert errors["GitFailed"][0].module == "cuedeck_git.errors"
    assert errors["DependencyNotFound"][1:] == (1001, "FileNotFound")
    assert errors["InvalidInput"][1] == 1004
    assert errors["TooFewWords"][0].module == "cuedeck_example_plugin.errors"


def test_no_two_error_classes_share_a_code_unless_one_inherits_it() -> None:
    setters: dict[int, list[str]] = {}
    for name, (_, code, setter) in _error_classes().items():
        if setter == name:
            setters.setdefault(code, []).append(name)
    shared = {code: names for code, names in setters.items() if len(names) > 1}
    assert shared == {}, "each code is set by one class; a subclass may inherit it"


def test_every_code_is_reserved_and_every_class_documented_under_its_code() -> None:
    documented = _documented()
    ranges = _ranges()
    for name, (cls, code, _) in _error_classes().items():
        assert any(low <= code <= high for low, high in ranges), f"{name}: {code} not reserved"
        assert f"`{name}`" in documented.get(code, ""), f"{name} ({cls.module}) not under {code}"


def test_core_defines_no_plugin_error() -> None:
    core = {
        name for name, (cls, _, _) in _error_classes().items() if cls.module == "cuedeck.errors"
    }
    assert not core & {"GitFailed", "GitTimeout", "DependencyNotFound", "CircularDependency"}
    assert "RateLimited" not in core
