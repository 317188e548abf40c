"""The CueDeck plugin of cuedeck-tasks (entry point ``cuedeck = tasks``).

Registers the ``[tasks]`` config section, the ``cards`` service (the card store), the
five task tools and the ``cue card`` and ``cue open`` commands. Kept import-light: ``cue
--help`` loads every plugin module, so the store, pydantic and prompt_toolkit load only
when used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuedeck.hookspecs import hookimpl

if TYPE_CHECKING:
    from cuedeck.hookspecs import RegisterCommand, RegisterNamed, RegisterTool
    from cuedeck.plugins.services import CardService
    from cuedeck.workspace import Workspace


def card_store(workspace: Workspace) -> CardService:
    """The ``cards`` service: the workspace's :class:`~cuedeck_tasks.store.CardStore`, the
    :class:`~cuedeck.plugins.services.CardService` other packages use (mypy checks it)."""
    from cuedeck_tasks.store import CardStore

    return CardStore(workspace)


@hookimpl
def register_checks(register: RegisterNamed) -> None:
    from cuedeck_tasks.reports import card_problems

    register("cards", card_problems)


@hookimpl
def register_services(register: RegisterNamed) -> None:
    register("cards", card_store)


@hookimpl
def register_settings(register: RegisterNamed) -> None:
    from cuedeck_tasks.settings import TaskSettings

    register("tasks", TaskSettings)


@hookimpl
def register_tools(register: RegisterTool) -> None:
    from cuedeck.settings import RateLimit

    # Import paths: cuedeck_tasks.tools (and pydantic) load when a tool is first used.
    tools = "cuedeck_tasks.tools"
    register(
        f"{tools}:list_tasks",
        category="tasks",
        read_only=True,
        idempotent=True,
        rate_limit=RateLimit(per_minute=20, burst=30),
    )
    register(f"{tools}:create_task", category="tasks")
    register(f"{tools}:update_task", category="tasks", rate_limit=RateLimit(10, 15))
    register(f"{tools}:get_task_dependencies", category="tasks", read_only=True, idempotent=True)
    register(f"{tools}:validate_task_graph", category="tasks", read_only=True, idempotent=True)


@hookimpl
def register_commands(register: RegisterCommand) -> None:
    register(
        "cuedeck_tasks.commands:card",
        help="Task cards: create, list, show, update, activate; dependencies and their graph.",
    )
    register(
        "cuedeck_tasks.commands:open_command",
        name="open",
        help="Fuzzy-find a card, doc or heading and open it in $EDITOR.",
    )
