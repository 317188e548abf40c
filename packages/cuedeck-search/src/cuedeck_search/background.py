"""Embedding on a thread of a long-lived process: a search never waits for the model.

A hybrid or semantic search answers from the vectors that exist and reports its
``semantic_coverage``; the sections it found missing are embedded here, on a thread of
their own, while the MCP server or ``cue watch`` waits for the next call. Each chunk is
committed to the cache as it is done, so a process that stops leaves its work for the
next one.

When the interpreter exits, the thread is stopped after the chunk under way and joined
(a thread still inside onnxruntime while the interpreter tears down aborts the process,
"terminate called without an active exception", exit 134), and what it had not embedded
yet is handed to the workspace's detached embedder (:mod:`cuedeck_search.detached`), a
process of its own that ``cue status`` lists: a script that searched and exits finishes
at once, prints nothing, and its sections still get their vectors. The stop runs among
the interpreter's first exit steps, before the thread pools the embedding uses are shut
down, so the chunk under way completes instead of failing.
"""

from __future__ import annotations

import atexit
import logging
import threading
import weakref
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from cuedeck.workspace import Workspace
    from cuedeck_search.sections import Section

log = logging.getLogger("cuedeck")
#: Sections taken per round: edits made meanwhile are picked up at the next round.
ROUND = 256
_RUNNING: weakref.WeakSet[BackgroundEmbedder] = weakref.WeakSet()


class Embedding(Protocol):
    """What the thread asks of the search engine that owns it (see
    :class:`cuedeck_search.engine.SearchEngine`)."""

    def missing_sections(self) -> list[Section]: ...

    def embed_sections(
        self, sections: Sequence[Section], stop: Callable[[], bool] | None = None
    ) -> int: ...

    def trim_cache(self) -> int: ...

    @property
    def workspace(self) -> Workspace: ...


class BackgroundEmbedder:
    """Embeds ``engine``'s missing sections on one daemon thread, one round at a time."""

    def __init__(self, engine: Embedding) -> None:
        self.engine = engine
        self._thread: threading.Thread | None = None
        self._guard = threading.Lock()
        self._stop = threading.Event()
        self.idle = threading.Event()
        self.idle.set()
        #: Whether the last run stopped with sections left (they are handed off at exit).
        self.unfinished = False

    @property
    def running(self) -> bool:
        """Whether the thread is embedding now."""
        return not self.idle.is_set()

    def start(self) -> None:
        """Start embedding what is missing, unless that is already under way."""
        with self._guard:
            if self.running or self._stop.is_set():
                return
            _stop_at_exit()
            self.idle.clear()
            self.unfinished = True
            self._thread = threading.Thread(target=self._run, name="cuedeck-embed", daemon=True)
            _RUNNING.add(self)
            self._thread.start()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until everything known is embedded; whether it finished in time."""
        return self.idle.wait(timeout)

    def stop(self) -> None:
        """Stop after the chunk under way and wait for the thread (no new start)."""
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def hand_off(self) -> int | None:
        """Start the workspace's detached embedder for what the thread left (unless one
        runs); its pid, or None when nothing was left or one runs already."""
        if not self.unfinished:
            return None
        from cuedeck_search import detached

        try:
            return detached.start(self.engine.workspace.root)
        except OSError as exc:  # the workspace went away: nothing to hand over
            log.debug("no hand-off to the detached embedder: %s", exc)
            return None

    def _run(self) -> None:
        done = 0
        try:
            while not self._stop.is_set():
                missing = self.engine.missing_sections()
                if not missing:
                    self.unfinished = False
                    break
                done += self.engine.embed_sections(missing[:ROUND], self._stop.is_set)
            if done:
                log.info("embedded %d sections in the background", done)
                self.engine.trim_cache()
        except Exception as exc:  # a failure here must not reach the caller's thread
            if not self._stop.is_set():  # at exit the rest is handed off, quietly
                log.warning("background embedding stopped: %s", exc)
        finally:
            self.idle.set()


def _stop_all() -> None:
    """At exit: stop every embedding thread after its chunk, then hand what is left to
    the detached embedder."""
    running = list(_RUNNING)
    for embedder in running:
        embedder.stop()
    for embedder in running:
        embedder.hand_off()


_STOPPING: list[bool] = []  # whether _stop_all is registered


def _stop_at_exit() -> None:
    """Register :func:`_stop_all` among the interpreter's first exit steps, once.

    ``threading``'s exit hooks run before ``atexit``'s, last registered first; the
    thread pools' own hook (which refuses new work from then on) is registered when
    ``concurrent.futures.thread`` is first imported, so it is imported here, first: the
    chunk under way then completes before the pools shut down.
    """
    if _STOPPING:
        return
    import concurrent.futures.thread  # noqa: F401 (its exit hook goes first: see above)

    register = getattr(threading, "_register_atexit", None)
    try:
        if register is not None:
            register(_stop_all)
        else:  # another interpreter: the stop still comes before the end
            atexit.register(_stop_all)
    except RuntimeError:  # already exiting: nothing runs after this anyway
        return
    _STOPPING.append(True)
