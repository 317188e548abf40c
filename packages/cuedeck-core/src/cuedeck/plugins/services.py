"""The services one package offers another, as typed contracts.

A plugin registers a service under a name (``register_services``); another package that
uses it asks the workspace for the contract, ``workspace.service(SearchService)``, and
gets it typed, so a type checker follows every call across the package boundary. The
providing plugin's factory returns the contract type, so mypy checks its class keeps it.
A service only its own package uses needs no contract: it is asked for by name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from contextlib import AbstractContextManager


class SearchService(Protocol):
    """The search engine over the workspace's index: its keyword postings, its section
    vectors and its catalog of sections."""

    #: Whether a semantic search may start embedding in the background (an index
    #: command doing the work itself turns it off).
    background: bool
    #: Whether the engine is refreshing the index itself, within :meth:`sync`: the
    #: after-refresh event of that refresh is its own work, not to be done again.
    refreshing: bool

    def sync(self, *, rebuild: bool = False) -> None:
        """Bring the catalog and the keyword postings up to date with the index."""
        ...

    def embed_all(self, stop: Callable[[], bool] | None = None) -> int:
        """Embed every section not embedded yet (until ``stop()``); how many were."""
        ...

    def estimate(self, sections: int) -> Any:
        """How long embedding ``sections`` more sections would take, roughly."""
        ...

    def held(self) -> AbstractContextManager[Any]:
        """The catalog (section keys, live sections, each section's document), held
        unchanged while the block runs."""
        ...

    def section_scores(self, query: str, mode: str) -> Any:
        """Every section's keyword and semantic score for ``query`` in ``mode``."""
        ...

    def context(self, query: str, limit: int) -> Any:
        """The ``limit`` best sections for ``query`` as ``read_context`` replies (the
        hits, which side ranked them, what is still embedding)."""
        ...


class CardService(Protocol):
    """The task cards of the workspace. Reads answer as ``list_tasks`` and
    ``validate_task_graph`` reply, writes as ``create_task`` and ``update_task`` (their
    arguments validated alike, the same errors and replies)."""

    def activate(self, card_id: str) -> Any:
        """Make ``card_id`` the active card; the card (its ``id``)."""
        ...

    def summaries(self) -> list[Any]:
        """Every card of every status as ``list_tasks`` lists it (its claim included)."""
        ...

    def graph_report(self) -> Mapping[str, Any]:
        """The dependency graph's cycles and missing cards (``validate_task_graph``)."""
        ...

    def create_card(self, fields: Mapping[str, Any]) -> Mapping[str, Any]:
        """A new card of ``fields`` (``create_task``'s arguments); what it replies."""
        ...

    def update_card(
        self, card_id: str, updates: Mapping[str, Any], content_hash: str | None = None
    ) -> Mapping[str, Any]:
        """Change ``card_id`` (``update_task``: refused, 1005, if its file no longer has
        ``content_hash``; 1500 when another agent's claim holds it); what it replies."""
        ...


class MemoryService(Protocol):
    """A project's context memory, as the memory tools report and change it (``None``
    for a project: the workspace's own)."""

    def usage(self, project_id: str | None = None) -> Mapping[str, Any]:
        """Usage, health and advice (``context_analyze_usage``)."""
        ...

    def working_set(self, project_id: str | None = None) -> Mapping[str, Any]:
        """The current task's segments (``context_get_working_set``)."""
        ...

    def pin(
        self, segment_ids: Sequence[str], pinned: bool, project_id: str | None = None
    ) -> Mapping[str, Any]:
        """Pin (or unpin) segments (``context_gc_pin`` / ``context_gc_unpin``)."""
        ...


#: The name each contract's service is registered under.
SERVICE_NAMES: dict[type[Any], str] = {
    SearchService: "search",
    CardService: "cards",
    MemoryService: "context",
}
