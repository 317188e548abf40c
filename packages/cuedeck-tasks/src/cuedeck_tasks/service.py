"""The ``cards`` service: the card store, keeping core's
:class:`~cuedeck.plugins.services.CardService` contract for other packages (the board).

Reads and writes answer as the task tools reply: each method runs the tool's function
with its arguments validated as the tool validates them (the same errors, 1004 for a
bad argument), without going through the tool registry by name. The tools (and
pydantic) load when a method is first called: activating a card needs neither.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cuedeck.errors import InvalidInput
from cuedeck.plugins.tools import call_checked
from cuedeck_tasks.cards import STATUSES
from cuedeck_tasks.store import CardStore

if TYPE_CHECKING:
    from collections.abc import Mapping

    from cuedeck.workspace import Workspace


class ServedCards(CardStore):
    """The workspace's card store, as the ``cards`` service other packages use."""

    def _served(self) -> Workspace:
        if self.workspace is None:  # a store of a bare folder: never a service
            raise InvalidInput("a card store of a bare folder runs no task tool")
        return self.workspace

    def summaries(self) -> list[Any]:
        """Every card of every status as ``list_tasks`` lists it (its claim included)."""
        from cuedeck_tasks.tools import list_tasks

        found: list[Any] = call_checked(self._served(), list_tasks, status=list(STATUSES))
        return found

    def graph_report(self) -> Mapping[str, Any]:
        """The dependency graph's cycles and missing cards (``validate_task_graph``)."""
        from cuedeck_tasks.tools import validate_task_graph

        found: Mapping[str, Any] = call_checked(self._served(), validate_task_graph)
        return found

    def create_card(self, fields: Mapping[str, Any]) -> Mapping[str, Any]:
        """A new card of ``fields`` (``create_task``'s arguments); what it replies."""
        from cuedeck_tasks.tools import create_task

        created: Mapping[str, Any] = call_checked(self._served(), create_task, **fields)
        return created

    def update_card(
        self, card_id: str, updates: Mapping[str, Any], content_hash: str | None = None
    ) -> Mapping[str, Any]:
        """Change ``card_id`` as ``update_task`` does (its hash and claim checks
        included); what it replies."""
        from cuedeck_tasks.tools import update_task

        given: dict[str, Any] = {"id": card_id, "updates": updates}
        if content_hash is not None:
            given["content_hash"] = content_hash
        updated: Mapping[str, Any] = call_checked(self._served(), update_task, **given)
        return updated
