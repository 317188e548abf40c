"""Keeping the index in step with the files between calls, without walking the tree.

A file watcher (watchfiles, the one ``cue watch`` uses) runs beside the server and
notes every file a registered parser reads (markdown, code, whatever plugins add)
that is created, changed, deleted or renamed. Before a call,
:meth:`Freshness.ensure` re-reads just those files (:meth:`Workspace.refresh_paths`);
with nothing reported it touches no file at all, however large the workspace. Only a
change that can move many files at once (a folder renamed or deleted, a .gitignore or
the config edited) costs a full refresh.

When the watcher cannot run (no inotify watches left, a file system without events),
the server falls back to stamps: it stats what the last refresh saw (every indexed file,
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
from typing import TYPE_CHECKING, Any

from cuedeck.layout import CACHE_DIR, CARDS_DIR, CONFIG_PATH, DOCS_DIR, WORKSPACE_DIR

if TYPE_CHECKING:
    from collections.abc import Callable

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
        self._ready = threading.Event()
        self._stop = threading.Event()
        self._failed = not watch
        self._thread: threading.Thread | None = None
        #: When the files were last brought in step (``time.time()``), or None.
        self.checked: float | None = None
        workspace.freshness = self  # replies say what they reflect (cuedeck.watch.reflects)
        if watch:
            # Not waited for here: the watch is put in place while the server starts.
            # The thread holds the watcher weakly: a server dropped by the code that built
            # it (a Python caller, a test) is collected, and its watch ends with it.
            self._thread = threading.Thread(
                target=_watch,
                args=(weakref.ref(self), str(workspace.root), self._stop, self._ready),
                name="cuedeck-watch",
                daemon=True,
            )
            self._thread.start()

    @property
    def watching(self) -> bool:
        """Whether changes come from the watcher (else from stamps); asked first, it waits
        until the watch is in place (or has failed)."""
        # The watch must be in place before the first read, or a change made meanwhile
        # would be missed.
        if self._thread is not None and not self._failed and not self._ready.wait(5.0):
            log.warning("the file watcher did not start in time; checking stamps instead")
            self._failed = True
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
        if self._thread is not None:
            self._thread.join(5.0)

    # -- the watcher -------------------------------------------------------------------

    def _note(self, paths: list[str]) -> None:
        root = self.workspace.root
        claim = self.workspace.parsers.claim  # a file no parser reads is never indexed
        with self._lock:
            for path in paths:
                rel = os.path.relpath(path, root).replace(os.sep, "/")
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


def _watch(
    owner: weakref.ref[Freshness], root: str, stop: threading.Event, ready: threading.Event
) -> None:
    """Report the files changed under ``root`` to ``owner`` until ``stop`` is set or the
    owner is gone (checked at every wake-up: at least every 50 ms)."""
    try:
        from watchfiles import watch

        for changes in watch(
            root,
            watch_filter=functools.partial(_wanted, root),
            stop_event=stop,
            step=20,
            # The first (empty) yield says the watch is in place, and the first call
            # waits for it: 50 ms, not the 200 it waited, for an idle loop of 20
            # wake-ups a second.
            rust_timeout=50,
            yield_on_timeout=True,
            raise_interrupt=False,
        ):
            ready.set()  # the first (empty) yield: the watch is in place
            freshness = owner()
            if freshness is None:
                return
            if changes:
                freshness._note([path for _, path in changes])
            del freshness
    except Exception as exc:  # no inotify watches left, an odd file system...
        log.warning("file watcher stopped (%s); checking stamps instead", exc)
    finally:
        freshness = owner()
        if freshness is not None and not stop.is_set():
            freshness._failed = True
        ready.set()


def _wanted(root: str, change: Any, path: str) -> bool:
    """Whether a change to ``path`` may matter to the index (not the cache, not a
    version-control or environment folder, not a hidden file but .gitignore)."""
    rel = os.path.relpath(path, root).replace(os.sep, "/")
    parts = rel.split("/")
    if rel.startswith((CACHE_DIR + "/", "../")) or any(p in _SKIPPED_DIRS for p in parts):
        return False
    return not parts[-1].startswith(".") or parts[-1] == ".gitignore"
