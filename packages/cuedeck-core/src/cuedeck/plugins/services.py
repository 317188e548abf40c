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
    from collections.abc import Callable
    from contextlib import AbstractContextManager


class SearchService(Protocol):
    """The search engine over the workspace's index: its keyword postings, its section
    vectors and its catalog of sections."""

    #: Whether a semantic search may start embedding in the background (an index
    #: command doing the work itself turns it off).
    background: bool

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


class CardService(Protocol):
    """The task cards of the workspace."""

    def activate(self, card_id: str) -> Any:
        """Make ``card_id`` the active card; the card (its ``id``)."""
        ...


#: The name each contract's service is registered under.
SERVICE_NAMES: dict[type[Any], str] = {SearchService: "search", CardService: "cards"}
