"""The CueDeck plugin of cuedeck-search (entry point ``cuedeck = search``).

Registers the ``[search]`` config section, the ``keyword``, ``semantic`` and ``hybrid``
searchers, the ``minilm``, ``minilm-float`` and ``onnx`` embedders, the per-workspace
``search`` service (the engine), the ``read_context`` tool, ``cue search``, the
``embedder`` check of ``cue doctor`` (the detached embedder's progress) and the detached
embedder in ``cue status``. Kept
import-light: ``cue --help`` loads every plugin module, so numpy, onnxruntime and
pydantic are imported inside the hooks and commands.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuedeck.hookspecs import hookimpl

if TYPE_CHECKING:
    from cuedeck.hookspecs import (
        Refreshed,
        RegisterCommand,
        RegisterNamed,
        RegisterSearcher,
        RegisterTool,
    )
    from cuedeck.models import BackgroundProcess, Problem
    from cuedeck.plugins.services import SearchService
    from cuedeck.workspace import Workspace


def _engine(workspace: Workspace) -> SearchService:
    # The engine keeps the contract other packages use (mypy checks it here).
    from cuedeck_search.service import ServedEngine

    return ServedEngine(workspace)


def _embedder_check(workspace: Workspace) -> list[Problem]:
    from cuedeck_search.detached import doctor_check

    return doctor_check(workspace)


@hookimpl
def cuedeck_after_refresh(workspace: Workspace, refreshed: Refreshed) -> None:
    # An engine this workspace built follows the index now, not at its next search (and
    # `cue index` leaves the postings warm); none is built here: a command that never
    # searches pays nothing. A refresh the engine's own sync made is followed by that
    # sync: its query stays inside search rather than re-entering it through core.
    from cuedeck.plugins.services import SearchService

    engine = workspace.built_service(SearchService)
    if engine is not None and not engine.refreshing:
        engine.sync(rebuild=refreshed.rebuilt)


@hookimpl
def register_checks(register: RegisterNamed) -> None:
    register("embedder", _embedder_check)


def _embedder_process(workspace: Workspace) -> list[BackgroundProcess]:
    from cuedeck_search.detached import listed

    return listed(workspace)


@hookimpl
def register_processes(register: RegisterNamed) -> None:
    register("embedder", _embedder_process)


@hookimpl
def register_searchers(register: RegisterSearcher) -> None:
    from cuedeck_search.searchers import factory
    from cuedeck_search.settings import MODES

    for mode in MODES:
        register(mode, factory(mode), default_setting="search.mode")


@hookimpl
def register_embedders(register: RegisterNamed) -> None:
    from cuedeck_search import embedders  # light: the model loads when an embedder is made

    register("minilm", embedders.minilm)
    register("minilm-float", embedders.minilm_float)
    register("onnx", embedders.onnx_export)


@hookimpl
def register_services(register: RegisterNamed) -> None:
    register("search", _engine)


@hookimpl
def register_settings(register: RegisterNamed) -> None:
    from cuedeck_search.settings import SearchSettings

    register("search", SearchSettings)


@hookimpl
def register_tools(register: RegisterTool) -> None:
    from cuedeck.settings import RateLimit

    register(
        "cuedeck_search.tool:read_context",
        category="search",
        read_only=True,
        idempotent=True,
        rate_limit=RateLimit(per_minute=10, burst=15),
    )


@hookimpl
def register_commands(register: RegisterCommand) -> None:
    register(
        "cuedeck_search.command:search",
        help="Search docs, cards, markdown and code: best files first, with the matching sections.",
    )


@hookimpl
def register_index_reports(register: RegisterNamed) -> None:
    from cuedeck_search.report import search_report

    register("search", search_report)
