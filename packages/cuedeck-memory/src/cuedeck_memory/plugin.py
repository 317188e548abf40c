"""The CueDeck plugin of cuedeck-memory (entry point ``cuedeck = memory``).

Registers the ``[memory]`` config section, the ``context`` service (the store), the
context tools, ``cue memory``, the doctor check of segment files and the scene source of
a card's pinned segments and decisions. Kept import-light: ``cue --help`` loads every plugin module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuedeck.hookspecs import hookimpl

if TYPE_CHECKING:
    from collections.abc import Iterable

    from cuedeck.hookspecs import (
        RegisterCommand,
        RegisterNamed,
        RegisterPath,
        RegisterSceneSource,
        RegisterTool,
    )
    from cuedeck.models import Baseline, Problem, SceneExtra
    from cuedeck.plugins.services import MemoryService
    from cuedeck.workspace import Workspace


def memory_store(workspace: Workspace) -> MemoryService:
    """The ``context`` service: the workspace's memory store, keeping the
    :class:`~cuedeck.plugins.services.MemoryService` contract other packages use (mypy
    checks it)."""
    from cuedeck_memory.service import ServedMemory

    return ServedMemory(workspace)


def segment_problems(workspace: Workspace) -> Iterable[Problem]:
    """Doctor: every segment file that cannot be read, with its line."""
    from cuedeck_memory.reports import segment_problems as check

    return check(workspace)


def scene_memory(workspace: Workspace, card_id: str) -> Iterable[SceneExtra]:
    """Scene source: the card's pinned segments and decisions."""
    from cuedeck_memory.reports import scene_extras

    return scene_extras(workspace, card_id)


@hookimpl
def register_settings(register: RegisterNamed) -> None:
    from cuedeck_memory.settings import MemorySettings

    register("memory", MemorySettings)


@hookimpl
def register_paths(register: RegisterPath) -> None:
    from cuedeck_memory.paths import PLACE

    register(f"{PLACE}/", "control", gitignore=True)  # one person's, written by memory only


@hookimpl
def register_services(register: RegisterNamed) -> None:
    register("context", memory_store)


@hookimpl
def register_checks(register: RegisterNamed) -> None:
    register("memory", segment_problems)


@hookimpl
def register_scene_sources(register: RegisterSceneSource) -> None:
    register("memory", scene_memory, setting="memory.scene")


@hookimpl
def register_tools(register: RegisterTool) -> None:
    # Import paths: cuedeck_memory.tools loads when a tool is first used.
    tools = "cuedeck_memory.tools"
    register(f"{tools}:context_analyze_usage", category="memory")  # captures recent_messages
    register(f"{tools}:context_get_working_set", category="memory", read_only=True, idempotent=True)
    register(f"{tools}:context_gc_analyze", category="memory")
    register(f"{tools}:context_gc_prune", category="memory", destructive=True)
    register(f"{tools}:context_gc_pin", category="memory", idempotent=True)
    register(f"{tools}:context_gc_unpin", category="memory", idempotent=True)
    stash = "cuedeck_memory.stash_tools"
    register(f"{stash}:context_stash", category="memory")
    register(f"{stash}:context_search_stashed", category="memory", read_only=True, idempotent=True)
    register(f"{stash}:context_retrieve_stashed", category="memory")
    register(f"{tools}:context_list_projects", category="memory", read_only=True, idempotent=True)
    register(f"{tools}:context_set_current_task", category="memory", idempotent=True)
    register(
        f"{tools}:context_get_task_context", category="memory", read_only=True, idempotent=True
    )
    register(f"{tools}:context_create_task_snapshot", category="memory")
    register(f"{tools}:context_capture", category="memory")
    register(f"{tools}:context_restore", category="memory", read_only=True, idempotent=True)


@hookimpl
def register_commands(register: RegisterCommand) -> None:
    register(
        "cuedeck_memory.commands:memory",
        help="Context memory: capture segments, watch usage, collect garbage, stash, snapshot.",
    )


@hookimpl
def resolve_baseline(workspace: Workspace, since: str) -> Baseline | None:
    # `cue scene --since snap-...`: what changed in the task's files since its snapshot.
    from cuedeck_memory.touched import snapshot_baseline

    return snapshot_baseline(workspace, since)
