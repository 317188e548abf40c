"""Bulk work on every core: a list cut into chunks, each handled by a forked worker.

A cold start reads, parses and tokenises thousands of files, one at a time, in Python:
on a machine with several cores that work splits cleanly. Workers are forked, so they
start with every module and object of this process (the index, the token counter)
and the job needs no pickling; only each chunk's result travels back.

Forking is only safe in a process that runs no other thread (a lock held elsewhere
stays held in the child), so the work runs here, in order, whenever that is not so,
the platform is not Linux, there is one core, the list is short, or
``CUEDECK_WORKERS=1``. The result is the same either way.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from cuedeck.progress import report

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

log = logging.getLogger("cuedeck")

T = TypeVar("T")
R = TypeVar("R")
#: What a job calls after each item it finished: ``tick(done)``.
Tick = Callable[[int], None]

#: Below this many items, forking costs more than it saves...
MIN_ITEMS = 1_000
#: ...unless their files hold this many bytes: a hundred source files parse for about a
#: second, where forking two workers costs a few hundredths (fastapi's English docs,
#: 155 files and 1.5 MB, index faster forked; 80 of them, 0.4 MB, slower).
MIN_BYTES = 1_000_000
#: Chunks per worker: enough for even shares and steady progress, few enough that each
#: result is worth sending back.
CHUNKS_PER_WORKER = 4

# The running job, set before the workers fork so that they inherit it.
_job: tuple[Callable[..., Any], Sequence[Any]] | None = None


def workers() -> int:
    """How many processes bulk work may use: ``CUEDECK_WORKERS``, else the usable cores."""
    chosen = os.environ.get("CUEDECK_WORKERS", "").strip()
    if chosen.isdigit() and int(chosen) > 0:
        return int(chosen)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def forking_is_safe() -> bool:
    """Whether workers may be forked now: Linux, and no other thread in this process."""
    return sys.platform == "linux" and threading.active_count() == 1


def map_chunks(
    job: Callable[[Sequence[T], Tick], R],
    items: Sequence[T],
    *,
    message: str,
    progress: Callable[[int, int], None] | None = None,
    min_items: int | None = None,
    size: int = 0,
) -> list[R]:
    """``job(chunk, tick)`` of consecutive chunks of ``items``, in order: in forked
    workers when that pays and is safe, otherwise ``job(items, tick)`` here. It pays
    with ``min_items`` items (:data:`MIN_ITEMS`), or fewer whose files hold ``size``
    bytes, at least :data:`MIN_BYTES`.

    The job calls ``tick(done)`` after each of its items; progress is told in this
    process only, to ``progress(done, total)`` and to :func:`cuedeck.progress.report`
    with ``message``. An exception raised by ``job`` reaches the caller; a worker that
    dies (killed, out of memory) makes the whole job run again here.
    """
    total = len(items)

    def told(done: int) -> None:
        if progress is not None:
            progress(done, total)
        report(done, total, message)

    count = workers()
    least = MIN_ITEMS if min_items is None else min_items
    if size >= MIN_BYTES:
        least = min(least, 2)
    if count < 2 or total < max(least, 2) or not forking_is_safe():
        return [job(items, told)]
    try:
        return list(_forked(job, items, count, told))
    except _WorkerDied as exc:
        log.info("a worker died (%s); doing the work in this process", exc)
        return [job(items, told)]


class _WorkerDied(Exception):
    pass


def _forked(
    job: Callable[[Sequence[T], Tick], R],
    items: Sequence[T],
    count: int,
    told: Tick,
) -> Iterator[R]:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    global _job
    size = -(-len(items) // (count * CHUNKS_PER_WORKER))
    bounds = [(start, min(start + size, len(items))) for start in range(0, len(items), size)]
    _job = (job, items)
    try:
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=count, mp_context=context) as pool:
            for (_, end), result in zip(bounds, pool.map(_run_chunk, bounds), strict=True):
                told(end)
                yield result
    except BrokenProcessPool as exc:
        raise _WorkerDied(str(exc)) from exc
    finally:
        _job = None


def _ignore(done: int) -> None:
    """A worker's tick: progress is told by the parent, chunk by chunk."""


def _run_chunk(bounds: tuple[int, int]) -> Any:
    """In a worker: the inherited job on its chunk, telling no one of its progress."""
    from cuedeck.progress import reporting_to

    if _job is None:
        raise RuntimeError("a chunk runs only in a worker of map_chunks")
    job, items = _job
    with reporting_to(None):
        return job(items[bounds[0] : bounds[1]], _ignore)
