"""The searchers cuedeck-search registers, and the answer its command and tool give.

Each mode (``keyword``, ``semantic``, ``hybrid``) is an :class:`EngineSearcher`: a view
of the workspace's one :class:`~cuedeck_search.engine.SearchEngine` (the ``search``
service), made once per workspace by :func:`factory`. The engine checks every request
(:meth:`~cuedeck_search.engine.SearchEngine.answer`), so nothing here does.
Light to import: the engine (numpy) loads when a searcher is made.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuedeck_search.settings import MODES, SearchSettings

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from cuedeck.models import SearchFilters, SearchResult
    from cuedeck.workspace import Workspace
    from cuedeck_search.engine import SearchEngine
    from cuedeck_search.results import Answer


class EngineSearcher:
    """The :class:`~cuedeck.hookspecs.Searcher` of one mode of a workspace's engine."""

    def __init__(self, engine: SearchEngine, mode: str) -> None:
        self.engine = engine
        self.mode = mode

    def __repr__(self) -> str:
        return f"EngineSearcher({self.mode!r})"

    def search(
        self, query: str, *, limit: int | None, filters: SearchFilters
    ) -> list[SearchResult]:
        """Up to ``limit`` files for ``query`` (None: ``[search] limit``), best first."""
        return self.engine.search(query, mode=self.mode, limit=limit, filters=filters)

    def rank_texts(self, query: str, texts: Sequence[str]) -> list[float]:
        """Similarity in meaning of ``query`` to each text (texts that are no files, such
        as memory's segments); every mode ranks texts by meaning."""
        from cuedeck_search.texts import rank_texts

        return rank_texts(self.engine, query, texts)


def factory(mode: str) -> Callable[[Workspace], EngineSearcher]:
    """What ``register_searchers`` registers for ``mode``: ``factory(workspace)``."""

    def make(workspace: Workspace) -> EngineSearcher:
        from cuedeck_search.engine import SearchEngine

        return EngineSearcher(workspace.service("search", SearchEngine), mode)

    make.__qualname__ = f"factory({mode!r})"
    return make


def answer(
    workspace: Workspace,
    query: str,
    *,
    mode: str | None,
    limit: int | None,
    filters: SearchFilters,
) -> Answer:
    """The answer of ``cue search`` and ``read_context``: the engine's for its modes;
    when ``[search] mode`` names another plugin's searcher, that searcher's results."""
    from cuedeck_search.results import Answer

    if (mode or workspace.config.section("search", SearchSettings).mode) in MODES:
        engine: SearchEngine = workspace.service("search")
        return engine.answer(query, mode=mode, limit=limit, filters=filters)
    # A configured mode that no plugin registers is an error at its config line.
    chosen = mode or workspace.default_search_mode()
    found = workspace.search(query, mode=chosen, limit=limit, filters=filters)
    return Answer(found, chosen, chosen, None)
