"""README.md and docs/ held to the code: every figure that follows from it (settings
tables, defaults, counts of rules, tools and commands, tools/list sizes) agrees with it
(scripts/doc_figures.py, whose `--update` writes them in), and the error table's
classes, codes and data fields are the ones the code raises."""

from __future__ import annotations

import functools
import importlib
import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO, installed, needs_extras

doc_figures = pytest.importorskip("scripts.doc_figures")

HINT = "\n(`uv run python scripts/doc_figures.py --update` writes the code's figures in)"


@needs_extras
def test_tables_defaults_and_counts_agree_with_the_code() -> None:
    stale = doc_figures.check(measured=False)
    assert not stale, "\n".join(map(str, stale)) + HINT


@needs_extras
def test_the_tools_list_sizes_are_a_real_servers() -> None:
    """docs/mcp.md's tools/list figures, measured in exact o200k tokens (budget37 and any
    change to a tool's schema move them: the check says the figure to write)."""
    stale = doc_figures.check(static=False)
    assert not stale, "\n".join(map(str, stale)) + HINT


@needs_extras
def test_a_figure_that_drifts_is_found_and_written_back() -> None:
    """The check is not vacuous: a page saying another count or default is reported at
    its line, and `--update` writes the code's figure back."""
    from cuedeck.masking.secret_rules import RULES

    page = "## Masking\n\nSee the rules (7 secret rules, configurable).\n\n`[search] limit` (9).\n"
    rules = [doc_figures.prose_defaults]
    for _, pattern, truths in doc_figures.COUNTS:
        if "secret rules" in pattern:
            rules.append(
                functools.partial(doc_figures._figures, "page.md", pattern=pattern, truths=truths)
            )
    updated, stale = doc_figures._apply("page.md", page, rules)
    assert {(s.line, s.says, s.truth) for s in stale} >= {(3, "7", str(len(RULES))), (5, "9", "5")}
    assert f"({len(RULES)} secret rules" in updated and "`[search] limit` (5)" in updated
    assert not doc_figures._apply("page.md", updated, rules)[1]


# -- docs/errors.md ---------------------------------------------------------------------------

#: Where CueDeck's error classes live.
ERROR_MODULES = (
    "cuedeck.errors",
    "cuedeck.refs.delta",
    "cuedeck_tasks.errors",
    "cuedeck_search.onnx_model",
    "cuedeck_code.errors",
    "cuedeck_git.errors",
    "cuedeck_memory.errors",
    "cuedeck_mcp.errors",
    "cuedeck_team.errors",
    "cuedeck_mcp.middleware",
    "cuedeck_example_plugin.errors",
)


def _error_rows() -> dict[int, list[str]]:
    """docs/errors.md's table: code -> cells."""
    text = (REPO / "docs" / "errors.md").read_text(encoding="utf-8")
    rows = {}
    for line in text.splitlines():
        if match := re.match(r"^\| (\d+) \|", line):
            rows[int(match[1])] = [cell.strip() for cell in line.strip("|").split(" | ")]
    return rows


@needs_extras
def test_every_error_class_in_the_table_has_its_code() -> None:
    classes: dict[str, int] = {}
    for name in ERROR_MODULES:
        if installed(name.split(".")[0]):
            module = importlib.import_module(name)
            for attribute, value in vars(module).items():
                code = getattr(value, "code", None) if isinstance(value, type) else None
                if isinstance(code, int):
                    classes[attribute] = code
    named = 0
    for code, cells in _error_rows().items():
        for name in re.findall(r"`([A-Z][A-Za-z]+)`", cells[1]):
            assert name in classes, f"docs/errors.md {code}: no error class {name}"
            assert classes[name] == code, f"docs/errors.md {code}: {name} is {classes[name]}"
            named += 1
    assert named > 30


def test_a_stale_scene_sends_the_fields_the_table_names(tmp_path: Path) -> None:
    """1006: `cue scene --check` on a scene whose input changed."""
    from cuedeck.errors import StaleCache
    from cuedeck.scene import build_scene, check_scene, write_scene
    from cuedeck.workspace import open_workspace

    root = tmp_path / "demo"
    shutil.copytree(REPO / "examples" / "demo", root, ignore=shutil.ignore_patterns(".cache"))
    workspace = open_workspace(root)
    write_scene(workspace, build_scene(workspace, "k3x9q2"))
    auth = root / ".cuedeck" / "docs" / "auth.md"
    auth.write_text(auth.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    fresh = open_workspace(root)
    with pytest.raises(StaleCache) as stale:
        check_scene(fresh, build_scene(fresh, "k3x9q2"))
    documented = set(re.findall(r"`([a-z_]+)`", _error_rows()[1006][3]))
    sent = set(stale.value.to_dict()) - {"code", "title", "message", "help", "line"}
    assert sent == documented == {"path", "changed"}
    assert stale.value.data["changed"] == [".cuedeck/docs/auth.md"]
