"""CueDeck memory: context segments, usage and health, garbage collection, stash, snapshots.

Registered with CueDeck through the ``cuedeck`` entry-point group (``memory =
cuedeck_memory.plugin``); ``workspace.service("context")`` is the :class:`MemoryStore`.
The names below load on first use, so that loading the plugin (``cue --help``) stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cuedeck_memory.segments import Segment
    from cuedeck_memory.store import MemoryStore

__all__ = ["MemoryStore", "Segment"]

_HOMES = {"MemoryStore": "cuedeck_memory.store", "Segment": "cuedeck_memory.segments"}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'cuedeck_memory' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
