"""Dependency and validation reports, shared by the task tools and ``cue card``.

Plain dicts in the shapes of the tools specification (``get_task_dependencies`` and
``validate_task_graph``), so the CLI's ``--json`` and the MCP replies agree.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cuedeck.text import counted
from cuedeck_tasks.graph import ARROW

#: ``cue doctor``'s codes for cards that merged badly: conflict markers in a card, and a
#: clone whose git config lacks the card merge driver ``.gitattributes`` names.
MERGE_CONFLICT = 1503
DRIVER_MISSING = 1504

if TYPE_CHECKING:
    from cuedeck.models import Problem
    from cuedeck.workspace import Workspace
    from cuedeck_tasks.store import CardStore


def dependency_report(store: CardStore, card_id: str, *, reverse: bool = False) -> dict[str, Any]:
    """``{task_id, type, count, tasks: [{id, title, status}]}`` for one card.

    A dependency with no card is listed with status ``missing`` and an empty title.
    """
    store.get(card_id)
    graph = store.graph()
    ids = graph.dependents(card_id) if reverse else graph.dependencies(card_id)
    tasks = []
    for other in ids:
        card = graph.cards.get(other)
        if card is None:
            tasks.append({"id": other, "title": "", "status": "missing"})
        else:
            tasks.append({"id": card.id, "title": card.title, "status": card.status})
    return {
        "task_id": card_id,
        "type": "dependents" if reverse else "dependencies",
        "count": len(tasks),
        "tasks": tasks,
    }


def validation_report(store: CardStore, card_id: str | None = None) -> dict[str, Any]:
    """``{valid, message | error, ...}`` for the whole graph or one card.

    ``cycle_path`` is the (first) cycle, closed (``a → b → a``); ``cycles`` lists one
    cycle per group of cards that depend on each other (whole graph only); ``missing``
    lists ``{card, depends_on}`` entries that name no card.
    """
    graph = store.graph()
    if card_id is not None:
        store.get(card_id)
        missing = [(card_id, dep) for dep in graph.dependencies(card_id) if dep not in graph.cards]
        cycle = graph.cycle_through(card_id)
        cycles = [cycle] if cycle is not None else []
        result: dict[str, Any] = {"valid": not missing and not cycles, "task_id": card_id}
    else:
        missing = graph.missing()
        cycles = graph.cycles()
        result = {"valid": not missing and not cycles}
    if cycles:
        result["cycle_path"] = cycles[0]
        if card_id is None:
            result["cycles"] = cycles
        result["error"] = "Circular dependency detected: " + f" {ARROW} ".join(cycles[0])
    elif missing:
        listed = ", ".join(f"{card} {ARROW} {dep}" for card, dep in missing[:5])
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        result["error"] = f"Missing dependencies: {listed}{more} (no such cards)"
    if missing:
        result["missing"] = [{"card": card, "depends_on": dep} for card, dep in missing]
    if result["valid"]:
        result["message"] = (
            "Task dependencies are valid"
            if card_id is not None
            else f"All task dependencies are valid (no circular dependencies, "
            f"{counted(len(graph.cards), 'card')})"
        )
    return result


def card_problems(workspace: Workspace) -> list[Problem]:
    """``cue doctor``'s check of the cards: values of the wrong type are errors (updates
    of them are refused), other oddities warnings."""
    from cuedeck.models import Problem

    found: list[Problem] = []
    from cuedeck_tasks.store import CardStore

    for card in CardStore.of(workspace).all().values():
        if card.conflicted:  # what else is wrong with the file follows from the markers
            found.extend(
                Problem(
                    "error",
                    MERGE_CONFLICT,
                    card.path,
                    line,
                    "merge conflict: the card holds conflict markers (<<<<<<<, =======, "
                    ">>>>>>>); its fields cannot be read until they are resolved",
                    "keep the right side of each conflict, delete the marker lines, then "
                    "`git add` the card",
                )
                for line in card.conflicted
            )
            continue
        for message in card.problems:
            wrong_type = message.startswith(card.malformed) if card.malformed else False
            found.append(
                Problem(
                    "error" if wrong_type else "warning",
                    1004,
                    card.path,
                    None,
                    message,
                    "edit the card's frontmatter (docs/tasks.md lists each field's type)",
                )
            )
    return found


def merge_driver_problems(workspace: Workspace) -> list[Problem]:
    """``cue doctor``'s check of the card merge driver: ``.gitattributes`` names it but
    this clone's git config does not say how to run it (cards then merge line by line)."""
    from cuedeck.models import Problem
    from cuedeck_tasks.merge_driver import ATTRIBUTES, driver_state

    state = driver_state(workspace.root)
    if not (state.in_git and state.attributes) or state.command:
        return []
    return [
        Problem(
            "warning",
            DRIVER_MISSING,
            ATTRIBUTES,
            None,
            "the card merge driver is named in .gitattributes but not in this clone's git "
            "config (a clone does not copy it): cards changed on two branches merge line by "
            "line and conflict",
            "run `cue init --merge-driver`",
        )
    ]
