"""Where memory lives under ``.cuedeck/``: one person's session context, so git-ignored
(docs/memory.md says why), and written by the memory tools only (registered with
``register_paths`` as a control place: tools may read it, never write it)."""

from __future__ import annotations

from cuedeck.layout import CACHE_DIR, WORKSPACE_DIR

#: The entry under ``.cuedeck/`` the plugin registers (``register_paths``).
PLACE = "memory"
#: The store ``MEMORY_DIR/memory.sqlite3`` and the exports live here.
MEMORY_DIR = f"{WORKSPACE_DIR}/{PLACE}"
#: The index an older memory plugin kept beside its segment files (read once, for the
#: GC counters, when those files move into the store).
LEGACY_INDEX = f"{CACHE_DIR}/memory.sqlite3"
