"""Keeping the index in step with the files between calls, cheaply.

A full incremental refresh walks the whole tree and matches every path against the
include, exclude and .gitignore rules: milliseconds per call on a few hundred files,
more than a tool call itself. Between calls, :class:`Freshness` instead stats what the
last refresh saw: every indexed file, every directory holding one (and their parents),
``.cuedeck/cards``, ``.cuedeck/docs``, the config and the .gitignore files there. An
edited file changes its own mtime or size; a created, deleted or renamed one changes
its directory's mtime. Only then is the index refreshed. Files that appear in
directories the index has never seen (a new subtree inside a folder holding no markdown)
change nothing watched, so a full refresh also runs every ``full_every`` seconds.
"""

from __future__ import annotations

import os
import posixpath
import time
from typing import TYPE_CHECKING

from cuedeck.layout import CARDS_DIR, CONFIG_PATH, DOCS_DIR, WORKSPACE_DIR

if TYPE_CHECKING:
    from collections.abc import Callable

    from cuedeck.workspace import Workspace

Stamp = tuple[int, int]  # (mtime_ns, size); (0, -1) for a path that does not exist


def _stamp(path: str) -> Stamp:
    try:
        st = os.stat(path)
    except OSError:
        return (0, -1)
    return (st.st_mtime_ns, st.st_size)


class Freshness:
    """Refreshes ``workspace`` when something the index covers may have changed."""

    def __init__(
        self,
        workspace: Workspace,
        *,
        full_every: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.workspace = workspace
        self.full_every = full_every
        self.clock = clock
        self._stamps: dict[str, Stamp] | None = None
        self._full_at = 0.0

    def ensure(self) -> bool:
        """Refresh the index if anything may have changed; whether it refreshed."""
        if (
            self._stamps is not None
            and self.clock() - self._full_at < self.full_every
            and not self._changed()
        ):
            return False
        self.workspace.refresh()
        self._full_at = self.clock()
        self._stamps = self._snapshot()
        return True

    def _watched(self) -> set[str]:
        root = str(self.workspace.root)
        folders = {"", WORKSPACE_DIR, CARDS_DIR, DOCS_DIR}
        files = {CONFIG_PATH, ".gitignore"}
        for path in self.workspace.index.paths:
            files.add(path)
            folder = posixpath.dirname(path)
            while folder and folder not in folders:
                folders.add(folder)
                files.add(folder + "/.gitignore")
                folder = posixpath.dirname(folder)
        return {os.path.join(root, rel) for rel in folders | files}

    def _snapshot(self) -> dict[str, Stamp]:
        return {path: _stamp(path) for path in self._watched()}

    def _changed(self) -> bool:
        assert self._stamps is not None
        return any(_stamp(path) != stamp for path, stamp in self._stamps.items())
