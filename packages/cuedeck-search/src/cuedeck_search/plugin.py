"""The CueDeck plugin of cuedeck-search (entry point ``cuedeck = search``).

Registers the ``[search]`` config section, the ``keyword``, ``semantic`` and ``hybrid``
searchers, the ``minilm``, ``minilm-float`` and ``onnx`` embedders, the per-workspace
``search`` service (the engine), the ``read_context`` tool, ``cue search`` and the
``embedder`` check of ``cue doctor`` (the detached embedder's progress). Kept
import-light: ``cue --help`` loads every plugin module, so numpy, onnxruntime and
pydantic are imported inside the hooks and commands.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cuedeck.hookspecs import hookimpl

if TYPE_CHECKING:
    from collections.abc import Sequence

    from cuedeck.hookspecs import RegisterCommand, RegisterNamed, RegisterTool
    from cuedeck.models import Problem, SearchFilters, SearchResult
    from cuedeck.workspace import Workspace


class ModeSearcher:
    """A :class:`~cuedeck.hookspecs.Searcher` running one mode of the workspace's engine."""

    def __init__(self, mode: str) -> None:
        self.mode = mode

    def __repr__(self) -> str:
        return f"ModeSearcher({self.mode!r})"

    def search(
        self, workspace: Workspace, query: str, *, limit: int, filters: SearchFilters
    ) -> list[SearchResult]:
        """Up to ``limit`` files for ``query``, best first."""
        engine = workspace.service("search")
        results: list[SearchResult] = engine.search(
            query, mode=self.mode, limit=limit, filters=filters
        )
        return results

    def rank_texts(self, workspace: Workspace, query: str, texts: Sequence[str]) -> list[float]:
        """Semantic similarity of ``query`` to each text (for texts that are no files,
        such as memory segments); every mode ranks texts by meaning."""
        engine = workspace.service("search")
        from cuedeck_search.texts import rank_texts

        scores: list[float] = rank_texts(engine, query, texts)
        return scores


def _engine(workspace: Workspace) -> Any:
    from cuedeck_search.engine import SearchEngine

    return SearchEngine(workspace)


def _embedder_check(workspace: Workspace) -> list[Problem]:
    from cuedeck_search.detached import doctor_check

    return doctor_check(workspace)


@hookimpl
def register_checks(register: RegisterNamed) -> None:
    register("embedder", _embedder_check)


@hookimpl
def register_searchers(register: RegisterNamed) -> None:
    for mode in ("keyword", "semantic", "hybrid"):
        register(mode, ModeSearcher(mode))


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
        help="Search docs, cards and markdown files: best files first, with the matching sections.",
    )
