"""The task tools: typed functions served to MCP, the CLI and Python alike.

Inputs and outputs follow the tools specification (list_tasks, create_task,
get_task_dependencies, validate_task_graph, update_task); the JSON schemas are derived
from the annotations by :class:`cuedeck.plugins.tools.Tool`. Errors are CueErrors: unknown ids
1001 (with similar ids), missing dependencies 1001 (``DependencyNotFound``), cycles 1002
(``CircularDependency`` with ``cycle_path``), bad input 1004, conflicts 1005.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal, NotRequired, cast

import attrs
import pydantic
from pydantic import Field
from typing_extensions import TypedDict  # pydantic needs it on Python 3.11

from cuedeck_tasks.cards import ID_PATTERN, Card, Priority, Status
from cuedeck_tasks.filters import DATE_FILTER_PATTERN, CardFilter
from cuedeck_tasks.reports import dependency_report, validation_report
from cuedeck_tasks.store import CardChanges, CardStore, Updated

if TYPE_CHECKING:
    # cuedeck.plugins.tools.Tool supplies Workspace when it reads the signatures.
    from cuedeck.plugins.claims import Hold
    from cuedeck.workspace import Workspace

CardId = Annotated[str, Field(pattern=ID_PATTERN)]
DateFilterText = Annotated[
    str,
    Field(
        pattern=DATE_FILTER_PATTERN,
        description="'2024-01-01', '>2024-01-01', '<2w' (newer), '>3d' (older); d/w/m/y",
    ),
]


# --- outputs -----------------------------------------------------------------------------


class ClaimSummary(TypedDict):
    """Who holds a card: the agent, since and until when (ISO 8601 UTC), its paths."""

    agent: str
    since: str
    until: str
    paths: list[str]


class TaskSummary(TypedDict):
    """A card as ``list_tasks`` returns it: what an agent picks work by. The file is
    ``.cuedeck/cards/<id>.md``; dates are left out to keep the reply small."""

    id: Annotated[str, Field(pattern=ID_PATTERN)]
    title: str
    status: Annotated[str, Field(description="todo, active, done or archived")]
    priority: Annotated[str, Field(description="low, medium, high or critical")]
    assignee: str | None
    tags: list[str]
    depends_on: list[str]
    claim: Annotated[ClaimSummary | None, Field(description="Who holds it, if anyone")]


class TaskMetadata(TypedDict):
    """The frontmatter of a new card."""

    title: str
    status: str
    priority: str
    assignee: str | None
    tags: list[str]
    depends_on: list[str]
    created: Annotated[str, Field(json_schema_extra={"format": "date-time"})]


class CreatedTask(TypedDict):
    """The reply of ``create_task``."""

    id: Annotated[str, Field(pattern=ID_PATTERN)]
    path: str
    metadata: TaskMetadata


class TaskRef(TypedDict):
    """A card named by a dependency query (``status`` is ``missing`` for a dangling id)."""

    id: str
    title: str
    status: str


class TaskDependencies(TypedDict):
    """The reply of ``get_task_dependencies``."""

    task_id: str
    type: Literal["dependencies", "dependents"]
    count: int
    tasks: list[TaskRef]


class MissingDependency(TypedDict):
    """A ``depends_on`` entry that names no card."""

    card: str
    depends_on: str


class GraphValidation(TypedDict):
    """The reply of ``validate_task_graph``."""

    valid: bool
    task_id: NotRequired[str]
    message: NotRequired[str]
    error: NotRequired[str]
    cycle_path: NotRequired[list[str]]
    cycles: NotRequired[list[list[str]]]
    missing: NotRequired[list[MissingDependency]]


class UpdatedTask(TypedDict):
    """The reply of ``update_task``."""

    id: Annotated[str, Field(pattern=ID_PATTERN)]
    title: str
    status: str
    assignee: str | None
    priority: str
    tags: list[str]
    depends_on: list[str]
    refs: list[str]
    updated_at: Annotated[str, Field(json_schema_extra={"format": "date-time"})]
    updated_fields: list[str]
    recorded: list[str]


@pydantic.with_config(pydantic.ConfigDict(extra="forbid", json_schema_extra={"minProperties": 1}))
class TaskUpdates(TypedDict, total=False):
    """The fields to change; at least one."""

    status: Status
    assignee: Annotated[str, Field(max_length=50, description="'' unassigns")]
    priority: Priority
    notes: Annotated[str, Field(min_length=1, max_length=500, description="Appended, dated")]
    title: Annotated[str, Field(min_length=1, max_length=200)]
    add_tags: list[str]
    remove_tags: list[str]
    add_depends_on: list[CardId]
    remove_depends_on: list[CardId]
    add_refs: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=300)]],
        Field(description="e.g. doc/api#Login, code/src/a.py#Cls.fn, code/src/a.py#L10-L40"),
    ]
    remove_refs: list[str]


def _at_least_one(updates: TaskUpdates) -> TaskUpdates:
    if not updates:
        raise ValueError("name at least one field to update")
    return updates


# --- tools -------------------------------------------------------------------------------


def _store(workspace: Workspace) -> CardStore:
    return CardStore.of(workspace)


def summary(card: Card, hold: Hold | None = None) -> TaskSummary:
    """The ``list_tasks`` item of ``card``, held by ``hold`` (None: free)."""
    return {
        "id": card.id,
        "title": card.title,
        "status": card.status,
        "priority": card.priority,
        "assignee": card.assignee,
        "tags": list(card.tags),
        "depends_on": list(card.depends_on),
        "claim": None if hold is None else cast("ClaimSummary", hold.to_record()),
    }


def holds(workspace: Workspace) -> dict[str, Hold]:
    """The live claims of the workspace's cards, by card."""
    from cuedeck_tasks.claim_tools import ledger

    return {card: claim.hold() for card, claim in ledger(workspace).live().items()}


def list_tasks(
    workspace: Workspace,
    status: Status | list[Status] | None = None,
    assignee: str | None = None,
    tags: list[str] | None = None,
    priority: Priority | list[Priority] | None = None,
    created: DateFilterText | None = None,
    updated: DateFilterText | None = None,
    claimed: Annotated[
        bool | None,
        Field(description="true: held cards only; false: free ones only"),
    ] = None,
) -> list[TaskSummary]:
    """List task cards by status, assignee, tags, priority, dates and claims, sorted by id.

    Filters combine; tags, statuses and priorities match any; assignee ignores case.
    claim names the agent holding a card, since and until when.
    """
    filters = CardFilter.build(
        status=status,
        priority=priority,
        assignee=assignee,
        tags=tags,
        created=created,
        updated=updated,
    )
    held = holds(workspace)
    return [
        summary(card, held.get(card.id))
        for card in _store(workspace).select(filters)
        if claimed is None or (card.id in held) == claimed
    ]


def create_task(
    workspace: Workspace,
    title: Annotated[str, Field(min_length=1, max_length=200)],
    tags: list[str] | None = None,
    priority: Annotated[Priority | None, Field(description="Default medium")] = None,
    assignee: Annotated[str | None, Field(max_length=50)] = None,
    depends_on: list[CardId] | None = None,
    body: Annotated[str | None, Field(description="Markdown under the title")] = None,
) -> CreatedTask:
    """Create a task card (status todo); its dependencies must exist and form no cycle.

    A missing dependency is 1001 with similar ids, a cycle 1002; nothing is written then.
    """
    card = _store(workspace).create(
        title,
        priority=priority,
        assignee=assignee,
        tags=tags or (),
        depends_on=depends_on or (),
        body=body,
    )
    return {
        "id": card.id,
        "path": card.path,
        "metadata": {
            "title": card.title,
            "status": card.status,
            "priority": card.priority,
            "assignee": card.assignee,
            "tags": list(card.tags),
            "depends_on": list(card.depends_on),
            "created": card.created or "",
        },
    }


def get_task_dependencies(
    workspace: Workspace,
    id: CardId,
    reverse: Annotated[bool, Field(description="Cards depending on this one instead")] = False,
) -> TaskDependencies:
    """Cards a task depends on, or with ``reverse`` the cards that depend on it.

    A dependency that names no card has status ``missing``.
    """
    return cast("TaskDependencies", dependency_report(_store(workspace), id, reverse=reverse))


def validate_task_graph(
    workspace: Workspace,
    id: Annotated[CardId | None, Field(description="Only this card")] = None,
) -> GraphValidation:
    """Check task dependencies for cycles and missing cards; reports, never raises."""
    return cast("GraphValidation", validation_report(_store(workspace), id))


def _code_key(spec: str) -> str | None:
    """The record key of a code reference (``code/PATH#Symbol``), else None."""
    from cuedeck.refs.drift import spec_key

    return spec_key(spec)


def _code_cited(workspace: Workspace, card: Card) -> set[str]:
    """The record keys of the code ``card`` cites, in its body or its ``refs:``."""
    from cuedeck.layout import card_path
    from cuedeck.refs.drift import code_references

    workspace.invalidate([card_path(card.id)])
    document = workspace.document(card_path(card.id))
    return {key for r in code_references(document) if (key := _code_key(r.raw)) is not None}


def update_task(
    workspace: Workspace,
    id: CardId,
    updates: Annotated[
        TaskUpdates,
        pydantic.AfterValidator(_at_least_one),
        Field(description="At least one field"),
    ],
    content_hash: Annotated[
        str | None,
        Field(description="The card's sha256 as read: refuse if changed", pattern="^[0-9a-f]{64}$"),
    ] = None,
) -> UpdatedTask:
    """Change a task card's fields, dependencies or references, or add a note.

    Nothing else changes. A code reference added (code/PATH#Symbol) must exist; its
    current text is recorded, so scenes and doctor notice when it drifts. With
    content_hash, a card changed since it was read is refused (1005). Status done ends
    the caller's claim on the card; another agent's live claim refuses it (1500).
    """
    changes = CardChanges(
        title=updates.get("title"),
        status=updates.get("status"),
        priority=updates.get("priority"),
        assignee=updates.get("assignee"),
        note=updates.get("notes"),
        add_tags=tuple(updates.get("add_tags", ())),
        remove_tags=tuple(updates.get("remove_tags", ())),
        add_depends_on=tuple(updates.get("add_depends_on", ())),
        remove_depends_on=tuple(updates.get("remove_depends_on", ())),
        add_refs=tuple(updates.get("add_refs", ())),
        remove_refs=tuple(updates.get("remove_refs", ())),
    ).check()
    from cuedeck.refs.drift import check_code_spec, record_references

    # Code must exist to be cited: a typo is refused with the closest names.
    cited = {key for ref in changes.add_refs if (key := check_code_spec(workspace, ref))}
    store = _store(workspace)
    # Code the card cites already (in its body: doctor's drift help says to update it
    # with --ref) is recorded anew, not added to refs: a second time.
    known = _code_cited(workspace, store.get(id)) if cited else set()
    adding = tuple(ref for ref in changes.add_refs if _code_key(ref) not in known)
    if adding != changes.add_refs:
        changes = attrs.evolve(changes, add_refs=adding)
    if changes == CardChanges():  # nothing but references to record again
        result = Updated(store.get(id), ())
    elif changes.status == "done":  # through the claims: the holder's claim ends with it
        from cuedeck.plugins.claims import acting_agent
        from cuedeck_tasks.claim_tools import finish

        result = finish(workspace, store, id, acting_agent(), changes, content_hash=content_hash)
    else:
        result = store.update(id, changes, content_hash=content_hash)
    card = result.card
    recorded: list[str] = []
    if cited or changes.remove_refs:
        workspace.invalidate([card.path])
        labels = record_references(workspace, card.path, keys=cited, replace=True)
        recorded = sorted(label.key for label in labels if label.key in cited and label.current)
    return {
        "id": card.id,
        "title": card.title,
        "status": card.status,
        "assignee": card.assignee,
        "priority": card.priority,
        "tags": list(card.tags),
        "depends_on": list(card.depends_on),
        "refs": list(card.refs),
        "updated_at": card.updated or "",
        "updated_fields": list(result.fields),
        "recorded": recorded,
    }
