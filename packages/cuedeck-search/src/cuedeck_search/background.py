"""Embedding on a thread of a long-lived process: a search never waits for the model.

A hybrid or semantic search answers from the vectors that exist and reports its
``semantic_coverage``; the sections it found missing are embedded here, on a thread of
their own, while the MCP server or ``cue watch`` waits for the next call. Each chunk is
committed to the cache as it is done, so a process that stops leaves its work for the
next one.

The thread is stopped and joined when the interpreter exits (between two chunks, well
under a second): a thread still inside onnxruntime while the interpreter tears down
aborts the process ("terminate called without an active exception", exit 134).
"""

from __future__ import annotations

import atexit
import logging
import threading
import weakref
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

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


class BackgroundEmbedder:
    """Embeds ``engine``'s missing sections on one daemon thread, one round at a time."""

    def __init__(self, engine: Embedding) -> None:
        self.engine = engine
        self._thread: threading.Thread | None = None
        self._guard = threading.Lock()
        self._stop = threading.Event()
        self.idle = threading.Event()
        self.idle.set()

    @property
    def running(self) -> bool:
        """Whether the thread is embedding now."""
        return not self.idle.is_set()

    def start(self) -> None:
        """Start embedding what is missing, unless that is already under way."""
        with self._guard:
            if self.running or self._stop.is_set():
                return
            self.idle.clear()
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

    def _run(self) -> None:
        done = 0
        try:
            while not self._stop.is_set():
                missing = self.engine.missing_sections()
                if not missing:
                    break
                done += self.engine.embed_sections(missing[:ROUND], self._stop.is_set)
            if done:
                log.info("embedded %d sections in the background", done)
                self.engine.trim_cache()
        except Exception as exc:  # a failure here must not reach the caller's thread
            log.warning("background embedding stopped: %s", exc)
        finally:
            self.idle.set()


@atexit.register
def _stop_all() -> None:
    for embedder in list(_RUNNING):
        embedder.stop()
