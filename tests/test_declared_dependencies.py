"""Every distribution declares what it imports.

Each module of each distribution under ``packages/`` is parsed (not imported) and every
``import`` at any depth counts, inside functions and under ``if TYPE_CHECKING:`` too: a
lazy import still fails at run time when its distribution is missing, and a type-only
one fails the type check. A name imported must come from the distribution itself, the
standard library, or a distribution its ``pyproject.toml`` requires (its extras
included). A meta-distribution that ships no module of its own (``fastmcp`` ships
``fastmcp-slim``) counts with what it requires. An import the module guards with
``importlib.util.find_spec("name")`` is a probe of something used only when installed.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from functools import cache
from importlib import metadata
from pathlib import Path

import pytest

from tests.conftest import REPO

PACKAGES = sorted(
    path.parent
    for path in [
        *(REPO / "packages").glob("*/pyproject.toml"),
        *(REPO / "examples").glob("*/pyproject.toml"),
    ]
    if (path.parent / "src").is_dir()
)


def _name(requirement: str) -> str:
    """The normalised distribution name of a requirement string."""
    return re.sub(
        r"[-_.]+", "-", re.split(r"[\[<>=!~;@ ]", requirement.strip(), maxsplit=1)[0]
    ).lower()


def _project(folder: Path) -> dict[str, object]:
    project: dict[str, object] = tomllib.loads(
        (folder / "pyproject.toml").read_text(encoding="utf-8")
    )["project"]
    return project


def declared(folder: Path) -> set[str]:
    """The distributions ``folder``'s pyproject requires, extras included."""
    project = _project(folder)
    extras = project.get("optional-dependencies") or {}
    assert isinstance(extras, dict)
    requirements = [*project["dependencies"], *(r for extra in extras.values() for r in extra)]  # type: ignore[misc]
    return {_name(requirement) for requirement in requirements}


@cache
def providers() -> dict[str, set[str]]:
    """Top-level import name -> the distributions that provide it: the repository's own
    by their ``src`` folders, the installed third-party ones by their metadata."""
    found: dict[str, set[str]] = {
        top: {_name(dist) for dist in dists}
        for top, dists in metadata.packages_distributions().items()
    }
    for folder in PACKAGES:
        for package in (folder / "src").iterdir():
            if package.is_dir() and (package / "__init__.py").is_file():
                found[package.name] = {_name(str(_project(folder)["name"]))}
    return found


def _meta_requirements(distribution: str) -> set[str]:
    """What the installed third-party ``distribution`` requires when it ships no Python
    module of its own (the repository's are installed editable: they ship none either)."""
    try:
        dist = metadata.distribution(distribution)
    except metadata.PackageNotFoundError:
        return set()
    if any(str(file).endswith(".py") for file in dist.files or []):
        return set()
    return {_name(r) for r in dist.requires or [] if "extra ==" not in r}


def imported(folder: Path) -> dict[str, set[str]]:
    """Top-level names ``folder``'s modules import (at any depth) -> the files that do,
    the standard library, relative imports and names probed with ``find_spec`` left out."""
    src = folder / "src"
    found: dict[str, set[str]] = {}
    for path in sorted(src.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        probed = set(re.findall(r"find_spec\(\"(\w+)\"\)", text))
        for node in ast.walk(ast.parse(text, filename=str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top in sys.stdlib_module_names or top == "__future__" or top in probed:
                    continue
                found.setdefault(top, set()).add(str(path.relative_to(src)))
    return found


def undeclared(folder: Path) -> dict[str, list[str]]:
    """Imported names no declared distribution provides -> files importing them."""
    own = _name(str(_project(folder)["name"]))
    allowed = {own} | declared(folder)
    ours = {_name(str(_project(package)["name"])) for package in PACKAGES}
    allowed |= {r for dist in allowed - ours for r in _meta_requirements(dist)}
    return {
        top: sorted(files)
        for top, files in imported(folder).items()
        if not providers().get(top, {_name(top)}) & allowed
    }


@pytest.mark.parametrize("folder", PACKAGES, ids=[folder.name for folder in PACKAGES])
def test_each_distribution_declares_what_it_imports(folder: Path) -> None:
    # Import names map to distributions through installed metadata: a distribution that is
    # not installed here (an extra's tox environment) has its requirements missing too.
    name = str(_project(folder)["name"])
    try:
        metadata.distribution(name)
    except metadata.PackageNotFoundError:
        pytest.skip(f"{name} is not installed here")
    assert undeclared(folder) == {}


def test_the_check_finds_an_undeclared_import(tmp_path: Path) -> None:
    folder = tmp_path / "cuedeck-demo"
    (folder / "src" / "cuedeck_demo").mkdir(parents=True)
    (folder / "pyproject.toml").write_text(
        '[project]\nname = "cuedeck-demo"\ndependencies = ["cuedeck-core==0.1.0"]\n'
        '[project.optional-dependencies]\nfast = ["pyyaml>=6"]\n',
        encoding="utf-8",
    )
    (folder / "src" / "cuedeck_demo" / "__init__.py").write_text(
        "import json\nimport yaml\nfrom cuedeck.errors import CueError\nfrom . import x\n"
        "def later():\n    import numpy\n"
        'if find_spec("tiktoken"):\n    import tiktoken\n',
        encoding="utf-8",
    )
    assert undeclared(folder) == {"numpy": ["cuedeck_demo/__init__.py"]}
