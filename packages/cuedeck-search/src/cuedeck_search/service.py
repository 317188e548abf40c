"""The search service other packages use (:class:`cuedeck.plugins.services.SearchService`):
the engine, and what ``read_context`` replies for a page that shows search (the board).

Apart from the engine's module so the engine does not import the tools (which import it).
"""

from __future__ import annotations

from typing import Any

from cuedeck_search.engine import SearchEngine


class ServedEngine(SearchEngine):
    """The search engine as a service: the engine, and :meth:`context`."""

    def context(self, query: str, limit: int) -> Any:
        """What ``read_context`` replies for ``query`` (its own function, validated as the
        tool validates it), without the tool registry."""
        from cuedeck.plugins.tools import call_checked
        from cuedeck_search.tool import read_context

        return call_checked(self.workspace, read_context, query=query, limit=limit)
