"""Embedding in the background: a search never waits for the model.

A hybrid or semantic search answers from the vectors that exist (keyword alone at first)
and reports its ``semantic_coverage``; the sections it found missing are embedded here,
on a thread of their own, while the server or ``cue watch`` waits for the next call.
Each batch is committed to the cache as it is done, so a process that stops leaves its
work for the next one.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cuedeck_search.engine import SearchEngine

log = logging.getLogger("cuedeck")
#: Sections taken per round: edits made meanwhile are picked up at the next round.
ROUND = 256


class BackgroundEmbedder:
    """Embeds ``engine``'s missing sections on one daemon thread, one round at a time."""

    def __init__(self, engine: SearchEngine) -> None:
        self.engine = engine
        self._thread: threading.Thread | None = None
        self._guard = threading.Lock()
        self.idle = threading.Event()
        self.idle.set()

    @property
    def running(self) -> bool:
        """Whether the thread is embedding now."""
        return not self.idle.is_set()

    def start(self) -> None:
        """Start embedding what is missing, unless that is already under way."""
        with self._guard:
            if self.running:
                return
            self.idle.clear()
            self._thread = threading.Thread(target=self._run, name="cuedeck-embed", daemon=True)
            self._thread.start()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until everything known is embedded; whether it finished in time."""
        return self.idle.wait(timeout)

    def _run(self) -> None:
        done = 0
        try:
            while True:
                missing = self.engine.missing_sections()
                if not missing:
                    break
                self.engine.embed_sections(missing[:ROUND])
                done += min(len(missing), ROUND)
            if done:
                log.info("embedded %d sections in the background", done)
                self.engine.trim_cache()
        except Exception as exc:  # a failure here must not reach the caller's thread
            log.warning("background embedding stopped: %s", exc)
        finally:
            self.idle.set()
