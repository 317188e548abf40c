"""The five task tools as registered: schemas, validation errors, replies and CueErrors."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cuedeck.errors import FileNotFound, InvalidInput
from cuedeck.plugins.tools import Tool
from cuedeck.workspace import Workspace
from cuedeck_tasks.errors import CircularDependency, DependencyNotFound
from tests.tasks.conftest import store_of

TASK_TOOLS = [
    "list_tasks",
    "create_task",
    "update_task",
    "get_task_dependencies",
    "validate_task_graph",
]


def tool(workspace: Workspace, name: str) -> Tool:
    return workspace.plugins.tools()[name]


def call(workspace: Workspace, name: str, **arguments: Any) -> Any:
    result = tool(workspace, name).call(workspace, arguments)
    json.dumps(result)  # every reply is plain JSON
    return result


def test_the_tools_are_registered_by_the_tasks_plugin(chain: Workspace) -> None:
    tools = chain.plugins.tools()
    for name in TASK_TOOLS:
        assert tools[name].plugin == "tasks"
        assert tools[name].category == "tasks"
        assert tools[name].summary
    assert tools["list_tasks"].read_only and not tools["update_task"].read_only


def test_schemas_follow_the_specification(chain: Workspace) -> None:
    schemas = {name: tool(chain, name).input_schema() for name in TASK_TOOLS}
    outputs = {name: tool(chain, name).output_schema() for name in TASK_TOOLS}
    id_pattern = "^[a-z0-9]{6}$"

    listing = schemas["list_tasks"]["properties"]
    assert listing["status"]["anyOf"][0]["enum"] == ["todo", "active", "done", "archived"]
    assert listing["priority"]["anyOf"][0]["enum"] == ["low", "medium", "high", "critical"]
    assert listing["tags"]["anyOf"][0] == {"items": {"type": "string"}, "type": "array"}
    assert "required" not in schemas["list_tasks"]

    create = schemas["create_task"]
    assert create["required"] == ["title"]
    assert create["properties"]["title"]["minLength"] == 1
    assert create["properties"]["title"]["maxLength"] == 200
    assert create["properties"]["assignee"]["anyOf"][0]["maxLength"] == 50
    deps = create["properties"]["depends_on"]["anyOf"][0]
    assert deps["items"]["pattern"] == id_pattern

    update = schemas["update_task"]
    assert update["required"] == ["id", "updates"]
    assert update["properties"]["id"]["pattern"] == id_pattern
    updates = update["$defs"]["TaskUpdates"]
    assert updates["minProperties"] == 1
    assert updates["additionalProperties"] is False
    assert updates["properties"]["notes"]["maxLength"] == 500
    assert updates["properties"]["assignee"]["maxLength"] == 50
    assert updates["properties"]["status"]["enum"] == ["todo", "active", "done", "archived"]

    deps_schema = schemas["get_task_dependencies"]
    assert deps_schema["required"] == ["id"]
    assert deps_schema["properties"]["reverse"]["default"] is False
    assert "required" not in schemas["validate_task_graph"]

    for name in TASK_TOOLS:
        assert outputs[name] is not None
        assert schemas[name]["additionalProperties"] is False
    assert outputs["list_tasks"]["type"] == "array"  # type: ignore[index]
    assert set(outputs["create_task"]["required"]) == {"id", "path", "metadata"}  # type: ignore[index]
    assert outputs["validate_task_graph"]["required"] == ["valid"]  # type: ignore[index]
    assert set(outputs["update_task"]["required"]) >= {  # type: ignore[index]
        "id",
        "title",
        "status",
        "updated_at",
        "updated_fields",
    }
    dependencies = outputs["get_task_dependencies"]
    assert dependencies["properties"]["type"]["enum"] == ["dependencies", "dependents"]  # type: ignore[index]


@pytest.mark.parametrize(
    ("name", "arguments", "field"),
    [
        ("update_task", {"id": "abc123", "updates": {}}, "updates"),
        ("update_task", {"id": "ABC123", "updates": {"status": "done"}}, "id"),
        ("update_task", {"id": "abc123", "updates": {"status": "blocked"}}, "updates.status"),
        ("update_task", {"id": "abc123", "updates": {"notes": "x" * 501}}, "updates.notes"),
        ("update_task", {"id": "abc123", "updates": {"assignee": "x" * 51}}, "updates.assignee"),
        ("update_task", {"id": "abc123", "updates": {"color": "red"}}, "updates.color"),
        ("update_task", {"id": "abc123"}, "updates"),
        ("create_task", {"title": ""}, "title"),
        ("create_task", {"title": "x" * 201}, "title"),
        ("create_task", {"title": "t", "priority": "urgent"}, "priority"),
        ("create_task", {"title": "t", "depends_on": ["short"]}, "depends_on.0"),
        ("list_tasks", {"status": "blocked"}, "status"),
        ("list_tasks", {"created": "last tuesday"}, "created"),
        ("get_task_dependencies", {"id": "abc12"}, "id"),
        ("validate_task_graph", {"id": "!!!!!!"}, "id"),
    ],
)
def test_bad_input_is_invalid_input_naming_the_field(
    chain: Workspace, name: str, arguments: dict[str, Any], field: str
) -> None:
    with pytest.raises(InvalidInput) as caught:
        call(chain, name, **arguments)
    assert caught.value.code == 1004
    assert caught.value.data["field"] == field


def test_list_tasks(chain: Workspace) -> None:
    everything = call(chain, "list_tasks")
    assert [task["id"] for task in everything] == ["a1a1a1", "b2b2b2", "c3c3c3"]
    assert everything[0] == {
        "id": "a1a1a1",
        "title": "Set up the database",
        "status": "done",
        "priority": "medium",
        "assignee": None,
        "tags": [],
        "depends_on": [],
        "claim": None,
    }
    assert [t["id"] for t in call(chain, "list_tasks", status="todo")] == ["b2b2b2", "c3c3c3"]
    assert call(chain, "list_tasks", created=">2026-01-10", priority="medium") == []


def test_create_task(chain: Workspace) -> None:
    reply = call(
        chain,
        "create_task",
        title="Implement login API",
        tags=["auth", "backend"],
        priority="high",
        assignee="@developer",
        depends_on=["a1a1a1", "b2b2b2"],
    )
    assert reply["path"] == f".cuedeck/cards/{reply['id']}.md"
    metadata = reply["metadata"]
    created = metadata.pop("created")
    assert created.endswith("Z")
    assert metadata == {
        "title": "Implement login API",
        "status": "todo",
        "priority": "high",
        "assignee": "@developer",
        "tags": ["auth", "backend"],
        "depends_on": ["a1a1a1", "b2b2b2"],
    }
    assert store_of(chain).get(reply["id"]).title == "Implement login API"


def test_create_task_with_a_missing_dependency(chain: Workspace) -> None:
    with pytest.raises(DependencyNotFound) as caught:
        call(chain, "create_task", title="t", depends_on=["c3c3c4"])
    assert caught.value.code == 1001
    assert caught.value.data["suggestion"] == "Did you mean 'c3c3c3'?"
    assert len(store_of(chain).all()) == 3


def test_get_task_dependencies(chain: Workspace) -> None:
    assert call(chain, "get_task_dependencies", id="b2b2b2") == {
        "task_id": "b2b2b2",
        "type": "dependencies",
        "count": 1,
        "tasks": [{"id": "a1a1a1", "title": "Set up the database", "status": "done"}],
    }
    assert call(chain, "get_task_dependencies", id="b2b2b2", reverse=True) == {
        "task_id": "b2b2b2",
        "type": "dependents",
        "count": 1,
        "tasks": [{"id": "c3c3c3", "title": "Implement login", "status": "todo"}],
    }
    with pytest.raises(FileNotFound):
        call(chain, "get_task_dependencies", id="d4d4d4")


def test_validate_task_graph(chain: Workspace) -> None:
    assert call(chain, "validate_task_graph") == {
        "valid": True,
        "message": "All task dependencies are valid (no circular dependencies, 3 cards)",
    }
    assert call(chain, "validate_task_graph", id="c3c3c3") == {
        "valid": True,
        "task_id": "c3c3c3",
        "message": "Task dependencies are valid",
    }
    # A cycle written by hand (the store refuses to write one).
    path = chain.root / ".cuedeck/cards/a1a1a1.md"
    path.write_text(path.read_text().replace("depends_on: []", "depends_on: [c3c3c3, zzzzzz]"))
    report = call(chain, "validate_task_graph")
    assert report["valid"] is False
    assert report["error"] == "Circular dependency detected: a1a1a1 → c3c3c3 → b2b2b2 → a1a1a1"
    assert report["cycle_path"] == ["a1a1a1", "c3c3c3", "b2b2b2", "a1a1a1"]
    assert report["missing"] == [{"card": "a1a1a1", "depends_on": "zzzzzz"}]
    single = call(chain, "validate_task_graph", id="b2b2b2")
    assert single["valid"] is False and single["cycle_path"][0] == "b2b2b2"
    assert "missing" not in single


def test_update_task(chain: Workspace) -> None:
    reply = call(
        chain,
        "update_task",
        id="b2b2b2",
        updates={"status": "active", "priority": "high", "notes": "Started", "assignee": "lee"},
    )
    updated_at = reply.pop("updated_at")
    assert updated_at.endswith("Z")
    assert reply == {
        "id": "b2b2b2",
        "title": "Create the users table",
        "status": "active",
        "assignee": "lee",
        "priority": "high",
        "tags": [],
        "depends_on": ["a1a1a1"],
        "refs": [],
        "updated_fields": ["status", "priority", "assignee", "notes"],
        "recorded": [],
    }
    assert "- " + updated_at + ": Started" in store_of(chain).text("b2b2b2")


def test_update_task_refuses_a_cycle(chain: Workspace) -> None:
    with pytest.raises(CircularDependency) as caught:
        call(chain, "update_task", id="a1a1a1", updates={"add_depends_on": ["c3c3c3"]})
    assert caught.value.code == 1002
    assert caught.value.data["cycle_path"] == ["a1a1a1", "c3c3c3", "b2b2b2", "a1a1a1"]


def test_update_task_refuses_a_card_changed_since_it_was_read(chain: Workspace) -> None:
    from cuedeck.errors import Conflict
    from cuedeck.writes import sha256_bytes

    path = chain.root / ".cuedeck" / "cards" / "c3c3c3.md"
    read = sha256_bytes(path.read_bytes())  # what read_doc / card show report
    done = call(chain, "update_task", id="c3c3c3", updates={"priority": "low"}, content_hash=read)
    assert done["updated_fields"] == ["priority"]
    with pytest.raises(Conflict) as stale:  # the card changed: the hash read is old now
        call(chain, "update_task", id="c3c3c3", updates={"status": "done"}, content_hash=read)
    after = path.read_bytes()
    assert stale.value.code == 1005
    assert stale.value.data["current_content_hash"] == sha256_bytes(after)
    assert b"status: done" not in after
