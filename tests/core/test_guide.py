"""get_tool_categories and first_time_user_guide: built from the registered tools' metadata."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from cuedeck import hookimpl
from cuedeck.plugins.host import make_plugin_host
from cuedeck.scene import build_scene
from cuedeck.serving.guide import first_time_user_guide, get_tool_categories
from cuedeck.state import set_active_card
from cuedeck.workspace import open_workspace

if TYPE_CHECKING:
    from tests.conftest import MakeWorkspace

CARD = """---
id: {id}
title: {title}
status: {status}
---
# {title}
"""


def shout(workspace: Any, text: str) -> str:
    """Shout a text back (a test plugin's tool)."""
    return text.upper()


class ShoutPlugin:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(shout, category="fun", read_only=True, idempotent=True)


def test_categories_come_from_tool_metadata_including_plugins(
    make_workspace: MakeWorkspace,
) -> None:
    pm = make_plugin_host()
    pm.register(ShoutPlugin(), name="shout")
    workspace = open_workspace(make_workspace(), plugins=pm)
    reply = get_tool_categories(workspace)
    by_category = {c["category"]: c["tools"] for c in reply["categories"]}
    assert by_category["fun"] == [
        {
            "name": "shout",
            "summary": "Shout a text back (a test plugin's tool).",
            "read_only": True,
            "destructive": False,
        }
    ]
    guide_tools = {t["name"] for t in by_category["guide"]}
    assert {"get_tool_categories", "get_tool_docs", "first_time_user_guide"} <= guide_tools
    assert guide_tools <= {
        "get_tool_categories",
        "get_tool_docs",
        "first_time_user_guide",
        "whoami",
    }
    if "word_count" in pm.tools():  # the example plugin, when installed
        assert {t["name"] for t in by_category["example"]} == {"word_count"}
    listed = [t["name"] for tools in by_category.values() for t in tools]
    assert sorted(listed) == sorted(pm.tools())
    assert [c["category"] for c in reply["categories"]] == sorted(by_category)


def test_guide_uses_the_workspace_real_ids_and_paths(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(
        {
            ".cuedeck/cards/abc123.md": CARD.format(id="abc123", title="Ship it", status="todo"),
            ".cuedeck/cards/def456.md": CARD.format(id="def456", title="Fix login", status="todo"),
            ".cuedeck/docs/auth.md": "# Auth\n\n## Sessions\n\nText.\n",
        }
    )
    set_active_card(root, "def456")
    guide = first_time_user_guide(open_workspace(root))
    assert (guide["active_card"], guide["cards"], guide["docs"]) == ("def456", 2, 1)
    steps = {step["tool"]: step for step in guide["steps"]}
    assert steps["read_doc"]["example_call"] == {
        "file_path": ".cuedeck/docs/auth.md",
        "anchor": "Sessions",
    }
    assert steps["get_tool_categories"]["example_call"] == {}
    tools = (open_workspace(root).plugins).tools()
    assert set(steps) <= set(tools)  # only installed tools are suggested
    for name in ("update_task", "get_task_dependencies"):
        if name in steps:
            assert steps[name]["example_call"]["id"] == "def456"
    if "read_context" in steps:
        assert steps["read_context"]["example_call"]["query"] == "Fix login"
    if "word_count" in tools:
        assert "word_count (example): " in "\n".join(guide["other_tools"])
    assert any("1001" in tip for tip in guide["tips"])


def test_guide_falls_back_to_an_active_status_card(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(
        {
            ".cuedeck/cards/abc123.md": CARD.format(id="abc123", title="Old", status="done"),
            ".cuedeck/cards/def456.md": CARD.format(id="def456", title="Now", status="active"),
        }
    )
    assert first_time_user_guide(open_workspace(root))["active_card"] == "def456"


def test_guide_without_tasks_tools_leaves_their_steps_out(make_workspace: MakeWorkspace) -> None:
    pm = make_plugin_host(entry_points=False)  # core only: no tasks, no search
    guide = first_time_user_guide(open_workspace(make_workspace(), plugins=pm))
    steps = [step["tool"] for step in guide["steps"]]
    assert steps[0] == "get_tool_categories"
    assert "read_doc" in steps
    assert set(steps) <= set(pm.tools())
    assert not {"list_tasks", "update_task", "read_context"} & set(steps)
    assert guide["active_card"] is None
    # Core's file tools have no step of their own: they are listed with their summary.
    assert sorted(line.split(" ")[0] for line in guide["other_tools"]) == [
        "create_file",
        "delete_file",
        "edit_file",
        "get_file_content",
    ]


def test_guide_and_scene_choose_the_same_active_card(make_workspace: MakeWorkspace) -> None:
    # Two cards with status: active. The scene takes the most recently updated one; the
    # guide used to take the first by path, so it showed a different card.
    older = CARD.format(id="aaa111", title="Old work", status="active")
    newer = CARD.format(id="zzz999", title="New work", status="active")
    root = make_workspace(
        {
            ".cuedeck/cards/aaa111.md": older.replace("---\n#", "updated: 2024-01-01\n---\n#"),
            ".cuedeck/cards/zzz999.md": newer.replace("---\n#", "updated: 2025-06-01\n---\n#"),
        }
    )
    workspace = open_workspace(root)
    scene = build_scene(workspace)
    guide = first_time_user_guide(workspace)
    assert scene.manifest["card"] == "zzz999"
    assert guide["active_card"] == "zzz999"


def test_guide_has_no_active_card_when_the_scene_has_none(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(
        {".cuedeck/cards/abc123.md": CARD.format(id="abc123", title="Todo", status="todo")}
    )
    guide = first_time_user_guide(open_workspace(root))
    assert guide["active_card"] is None
    steps = {step["tool"]: step for step in guide["steps"]}
    if "get_task_dependencies" in steps:  # examples still use a real card id
        assert steps["get_task_dependencies"]["example_call"] == {"id": "abc123"}


def test_guide_steps_carry_the_reference_and_docs_name_the_fix(
    make_workspace: MakeWorkspace,
) -> None:
    from cuedeck.errors import FileNotFound
    from cuedeck.serving.guide import get_tool_docs

    workspace = open_workspace(make_workspace({".cuedeck/docs/a.md": "# A\n"}))
    steps = {step["tool"]: step for step in first_time_user_guide(workspace)["steps"]}
    read_doc = steps["read_doc"]
    assert read_doc["expected_result"].startswith("path, content (masked), anchor")
    assert 1001 in {error["code"] for error in read_doc["common_errors"]}
    docs = get_tool_docs(workspace, "read_doc")
    assert docs["role"] == "read" and docs["example"] is not None
    assert docs["example"]["reply"]["path"] == ".cuedeck/docs/api.md"  # a real demo reply
    assert [p["name"] for p in docs["parameters"]][:2] == ["file_path", "anchor"]
    with pytest.raises(FileNotFound) as unknown:
        get_tool_docs(workspace, "read_dok")
    assert unknown.value.data["suggestion"] == "Did you mean 'read_doc'?"
