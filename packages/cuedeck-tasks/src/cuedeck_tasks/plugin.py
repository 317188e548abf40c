"""The CueDeck plugin of cuedeck-tasks (entry point ``cuedeck = tasks``).

Registers the ``[tasks]`` config section, the ``cards`` service (the card store), the
``claims`` service (claims on cards, core's ClaimRegistry), the task and claim tools, the
``cue card`` and ``cue open`` commands, ``cue init``'s ``merge-driver`` step and the
``claims`` scene source. Kept import-light: ``cue
--help`` loads every plugin module, so the store, pydantic and prompt_toolkit load only
when used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuedeck.hookspecs import hookimpl

if TYPE_CHECKING:
    from cuedeck.hookspecs import (
        RegisterCommand,
        RegisterNamed,
        RegisterSceneSource,
        RegisterTool,
    )
    from cuedeck.plugins.services import CardService
    from cuedeck.workspace import Workspace
    from cuedeck_tasks.claims import ClaimStore


def card_store(workspace: Workspace) -> CardService:
    """The ``cards`` service: the workspace's card store, keeping the
    :class:`~cuedeck.plugins.services.CardService` contract other packages use (mypy
    checks it)."""
    from cuedeck_tasks.service import ServedCards

    return ServedCards(workspace)


@hookimpl
def register_checks(register: RegisterNamed) -> None:
    from cuedeck_tasks.reports import card_problems, merge_driver_problems

    register("cards", card_problems)
    register("merge-driver", merge_driver_problems)


def claim_store(workspace: Workspace) -> ClaimStore:
    """The ``claims`` service: the workspace's claims on cards (core's ClaimRegistry)."""
    from cuedeck_tasks.claims import ClaimStore

    return ClaimStore(workspace.root)


@hookimpl
def register_services(register: RegisterNamed) -> None:
    register("cards", card_store)
    register("claims", claim_store)


@hookimpl
def register_init_steps(register: RegisterNamed) -> None:
    from cuedeck_tasks.merge_driver import MergeDriverStep

    register("merge-driver", MergeDriverStep())


@hookimpl
def register_scene_sources(register: RegisterSceneSource) -> None:
    from cuedeck_tasks.claim_scene import claims_in_scene

    register("claims", claims_in_scene)


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
    # Category "claims": several agents sharing a backlog opt in (cue mcp --tools core,claims).
    claims = "cuedeck_tasks.claim_tools"
    for name in ("claim_task", "renew_task", "release_task", "next_task"):
        register(f"{claims}:{name}", category="claims")


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
