"""The ``context`` service: the memory store, keeping core's
:class:`~cuedeck.plugins.services.MemoryService` contract for other packages (the board).

Each method runs the memory tool's function with its arguments validated as the tool
validates them (the same errors, 1004 for a bad project or segment id), without going
through the tool registry by name. The tools (and pydantic) load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cuedeck.plugins.tools import call_checked
from cuedeck_memory.store import MemoryStore

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence


def _project(project_id: str | None) -> dict[str, Any]:
    return {} if project_id is None else {"project_id": project_id}


class ServedMemory(MemoryStore):
    """The workspace's memory store, as the ``context`` service other packages use."""

    def usage(self, project_id: str | None = None) -> Mapping[str, Any]:
        """Usage, health and advice (``context_analyze_usage``)."""
        from cuedeck_memory.tools import context_analyze_usage

        found: Mapping[str, Any] = call_checked(
            self.workspace, context_analyze_usage, **_project(project_id)
        )
        return found

    def working_set(self, project_id: str | None = None) -> Mapping[str, Any]:
        """The current task's segments (``context_get_working_set``)."""
        from cuedeck_memory.tools import context_get_working_set

        found: Mapping[str, Any] = call_checked(
            self.workspace, context_get_working_set, **_project(project_id)
        )
        return found

    def pin(
        self, segment_ids: Sequence[str], pinned: bool, project_id: str | None = None
    ) -> Mapping[str, Any]:
        """Pin (or unpin) segments (``context_gc_pin`` / ``context_gc_unpin``)."""
        from cuedeck_memory.tools import context_gc_pin, context_gc_unpin

        tool = context_gc_pin if pinned else context_gc_unpin
        given = {**_project(project_id), "segment_ids": list(segment_ids)}
        found: Mapping[str, Any] = call_checked(self.workspace, tool, **given)
        return found
