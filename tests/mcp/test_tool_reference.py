"""Every tool's reference is complete, its example still answers as documented, and
docs/tools.md is what the references render to."""

from __future__ import annotations

import re

import pytest

from cuedeck.plugins.host import make_plugin_host
from cuedeck.serving.tool_docs import PARTS, reference_of
from tests.conftest import REPO, needs_extras

pytestmark = [needs_extras, pytest.mark.slow]

tool_docs = pytest.importorskip("scripts.tool_docs")


def _documented_codes() -> set[int]:
    text = (REPO / "docs" / "errors.md").read_text(encoding="utf-8")
    return {int(code) for code in re.findall(r"^\| (\d{3,4}) \|", text, flags=re.MULTILINE)}


def test_every_tool_has_every_part_of_its_reference() -> None:
    tools = make_plugin_host().tools()
    codes = _documented_codes()
    problems = []
    for name, tool in tools.items():
        reference = reference_of(tool)
        problems += [f"{name}: no {part}" for part in reference.missing]
        problems += [f"{name}: related {r} is no tool" for r in reference.related if r not in tools]
        problems += [
            f"{name}: error {e.code} undocumented" for e in reference.errors if e.code not in codes
        ]
        if not tool.summary.endswith("."):
            problems.append(f"{name}: the TL;DR (docstring's first line) is not a sentence")
    assert problems == []
    assert set(PARTS) == {"use_cases", "requires", "returns", "example", "errors", "related"}


def test_examples_answer_as_documented(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in [*tool_docs.GIT_ENV, "GIT_CONFIG_GLOBAL"]:
        monkeypatch.setenv(key, "")  # restored after the test; fresh_replies sets them
    replies = tool_docs.fresh_replies()
    failed = {
        name: reply["example_failed"]
        for name, reply in replies.items()
        if isinstance(reply, dict) and "example_failed" in reply
    }
    assert failed == {}
    assert tool_docs.mismatches(replies) == []  # else: scripts/tool_docs.py --update


def test_docs_tools_md_is_generated_from_the_references() -> None:
    page = (REPO / "docs" / "tools.md").read_text(encoding="utf-8")
    assert page == tool_docs.render()  # else: scripts/tool_docs.py --update
    for name in make_plugin_host().tools():
        assert f"\n## {name}\n" in page
