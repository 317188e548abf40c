"""CueDeck tasks: task cards, their dependency graph and the task commands and tools.

Registered with CueDeck through the ``cuedeck`` entry-point group (``tasks =
cuedeck_tasks.plugin``); ``CardStore.of(workspace)`` is the
:class:`CardStore`. The names below load on first use, so that loading the plugin
(``cue --help``) stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cuedeck_tasks.cards import Card
    from cuedeck_tasks.filters import CardFilter
    from cuedeck_tasks.graph import TaskGraph
    from cuedeck_tasks.store import CardChanges, CardStore

__all__ = ["Card", "CardChanges", "CardFilter", "CardStore", "TaskGraph"]

_HOMES = {
    "Card": "cuedeck_tasks.cards",
    "CardChanges": "cuedeck_tasks.store",
    "CardFilter": "cuedeck_tasks.filters",
    "CardStore": "cuedeck_tasks.store",
    "TaskGraph": "cuedeck_tasks.graph",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'cuedeck_tasks' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
