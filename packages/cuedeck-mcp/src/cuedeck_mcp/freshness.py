"""Keeping the index in step with the files between calls, without walking the tree.

A file watch (:class:`cuedeck.watch.files.FileWatch`, the one every watcher uses) runs
beside the server and
notes every file a registered parser reads (markdown, code, whatever plugins add)
that is created, changed, deleted or renamed. Before a call,
:meth:`Freshness.ensure` re-reads just those files (:meth:`Workspace.refresh_paths`);
with nothing reported it touches no file at all, however large the workspace. Only a
change that can move many files at once (a folder renamed or deleted, a .gitignore or
the config edited) costs a full refresh.

When the watch cannot use events (no inotify, no inotify instances left), the server falls
back to stamps: it stats what the last refresh saw (every indexed file,
their folders, the config and .gitignore files) and refreshes when one moved, with a
full refresh every ``full_every`` seconds for files appearing in folders it never saw.
"""

from __future__ import annotations

import functools
import logging
import os
import posixpath
import threading
import time
import weakref
from typing import TYPE_CHECKING

from cuedeck.layout import CARDS_DIR, CONFIG_PATH, DOCS_DIR, WORKSPACE_DIR

if TYPE_CHECKING:
    from collections.abc import Callable

    from cuedeck.watch.files import Changes, FileWatch
    from cuedeck.workspace import Workspace

log = logging.getLogger("cuedeck")
Stamp = tuple[int, int]  # (mtime_ns, size); (0, -1) for a path that does not exist
_SKIPPED_DIRS = {".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv"}


def _stamp(path: str) -> Stamp:
    try:
        st = os.stat(path)
    except OSError:
        return (0, -1)
    return (st.st_mtime_ns, st.st_size)


class Freshness:
    """Refreshes ``workspace`` with what changed since the last call."""

    def __init__(
        self,
        workspace: Workspace,
        *,
        watch: bool = True,
        full_every: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.workspace = workspace
        self.full_every = full_every
        self.clock = clock
        self._stamps: dict[str, Stamp] | None = None
        self._full_at = 0.0
        self._lock = threading.Lock()
        self._pending: set[str] = set()
        self._reported: set[str] = set()  # every path reported so far (for wait_for)
        self._structural = False
        self._refreshed = False
        self.reported = threading.Condition(self._lock)  # notified with every report
        self._stop = threading.Event()
        self._failed = not watch
        self._watch: FileWatch | None = None
        #: The thread that reports changes (ends when this object is collected), or None.
        self._thread: threading.Thread | None = None
        #: When the files were last brought in step (``time.time()``), or None.
        self.checked: float | None = None
        workspace.freshness = self  # replies say what they reflect (cuedeck.watch.reflects)
        if watch:
            from cuedeck.watch.files import FileWatch

            # 50 ms of quiet make a batch: a file's creation and its writes are one report.
            found = FileWatch(workspace.root, accept=_wanted, debounce=0.05)
            if found.method == "inotify":  # stamps are compared here, at each call
                self._watch = found
                # The watch's thread holds this object weakly: a server dropped by the
                # code that built it (a Python caller, a test) is collected, and its
                # watch ends with it.
                found.subscribe(functools.partial(_report, weakref.ref(self)))
                weakref.finalize(self, found.close)
                self._thread = found.thread
            else:
                found.close()
                self._failed = True

    @property
    def watching(self) -> bool:
        """Whether changes come from the watch (else from stamps)."""
        return not self._failed

    def ensure(self) -> bool:
        """Refresh the index if anything changed; whether it refreshed."""
        checked = time.time()
        try:
            if not self.watching:
                return self._ensure_by_stamps()
            with self._lock:
                pending, self._pending = self._pending, set()
                structural, self._structural = self._structural, False
                first = not self._refreshed
                self._refreshed = True
            if first or structural:
                self.workspace.refresh()
                return True
            if pending:
                self.workspace.refresh_paths(pending)
                return True
            return False
        finally:
            self.checked = checked

    def pending(self) -> list[str] | None:
        """Files reported changed since the last :meth:`ensure` began (not in a reply made
        now), sorted; None when the next one reads everything (a folder, .gitignore or the
        config changed)."""
        with self._lock:
            return None if self._structural else sorted(self._pending)

    def wait_for(self, rel: str, timeout: float = 10.0) -> bool:
        """Wait until the watcher has reported ``rel`` (workspace-relative); whether it did.

        A change reaches the watcher some milliseconds after it is made; code that writes
        a file and must see it in the next call (a test, a script) waits here.
        """
        if not self.watching:
            return True  # stamps see every change at the next call
        with self.reported:
            return self.reported.wait_for(lambda: rel in self._reported, timeout)

    def close(self) -> None:
        """Stop the watcher."""
        if self.workspace.freshness is self:
            self.workspace.freshness = None
        self._stop.set()
        if self._watch is not None:
            self._watch.close()

    # -- the watcher -------------------------------------------------------------------

    def _note(self, changes: Changes) -> None:
        root = self.workspace.root
        claim = self.workspace.parsers.claim  # a file no parser reads is never indexed
        with self._lock:
            if changes.unknown:
                self._structural = True  # a folder came or went
            for rel in changes.paths:
                path = os.path.join(root, rel)
                name = rel.rsplit("/", 1)[-1]
                self._reported.add(rel)
                if name == ".gitignore" or rel == CONFIG_PATH or os.path.isdir(path):
                    self._structural = True
                elif claim(rel) is not None:  # the index's own rules judge it at the call
                    self._pending.add(rel)
                elif "." not in name and not os.path.exists(path):
                    self._structural = True  # maybe a folder, renamed or deleted
            self.reported.notify_all()

    # -- the fallback: stamps ----------------------------------------------------------

    def _ensure_by_stamps(self) -> bool:
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


def _report(owner: weakref.ref[Freshness], changes: Changes) -> None:
    """Tell ``owner`` what changed, if it is still there."""
    freshness = owner()
    if freshness is not None:
        freshness._note(changes)


def _wanted(rel: str) -> bool:
    """Whether a change to ``rel`` may matter to the index (not a hidden file but
    .gitignore; the watch skips the cache and version-control folders itself)."""
    name = rel.rsplit("/", 1)[-1]
    return not name.startswith(".") or name == ".gitignore"
