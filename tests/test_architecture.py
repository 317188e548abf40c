"""docs/architecture.md says what the code is: its ladder, its hooks, and the third-party
internals CueDeck relies on, each with an upper bound on its dependency."""

from __future__ import annotations

import re
import tomllib

from cuedeck.plugins.host import hook_names
from tests.conftest import REPO
from tests.core.test_import_graph import LADDER

DOC = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
SOURCES = {path.name: path for path in (REPO / "packages").glob("*/src/*") if path.is_dir()}


def _section(title: str) -> str:
    return DOC.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def _rows(title: str) -> list[list[str]]:
    """The cells of a section's table, header and rule left out."""
    lines = [line for line in _section(title).splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in lines[2:]]


def _ticked(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


def test_the_ladder_is_the_one_the_import_test_holds() -> None:
    floors = [
        (int(row[0]), tuple(name.strip("/") for name in _ticked(row[1])))
        for row in _rows("Core's rooms and ladder")
    ]
    assert floors == list(enumerate(LADDER))


def test_every_hook_is_named() -> None:
    section = _section("The plugin contract")
    assert set(re.findall(r"`(register_\w+)`", section)) >= set(hook_names())
    assert f"All {len(hook_names())} hooks" in section


def _requirements(distribution: str) -> list[str]:
    project = tomllib.loads((REPO / "packages" / distribution / "pyproject.toml").read_text())[
        "project"
    ]
    extras = project.get("optional-dependencies", {}).values()
    return [*project["dependencies"], *(req for extra in extras for req in extra)]


def test_each_patched_internal_has_a_bound_and_is_where_the_table_says() -> None:
    rows = _rows("Third-party internals")
    assert {row[0] for row in rows} >= {"pluggy", "uvicorn", "fastmcp"}
    for library, internal, where, bound in rows:
        requirement = _ticked(bound)[0]
        assert requirement.startswith(library) and re.search(r"<|==", requirement), requirement
        for distribution in re.findall(r"cuedeck-\w+", bound):
            assert requirement in _requirements(distribution), (distribution, requirement)
        files = [SOURCES[path.split("/")[0]] / path.split("/", 1)[1] for path in _ticked(where)]
        text = "".join(path.read_text(encoding="utf-8") for path in files)
        for name in _ticked(internal):
            assert name in text, (library, name)
