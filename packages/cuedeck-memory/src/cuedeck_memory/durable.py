"""Files written atomically and durably, a batch at a time.

A batch is written as temporary files in the target folder, made durable together
(their fsyncs run side by side, so the file system commits them in a few journal
transactions rather than one per file), renamed into place, and the folder made durable
once: a crash leaves every file whole or absent, never half written.
"""

from __future__ import annotations

import contextlib
import os
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

#: Temporary files a batch keeps open at once (well under the usual limit of 1,024).
_OPEN_AT_ONCE = 256
#: Threads that fsync a batch's files side by side.
_SYNC_THREADS = 16
_TEMP_FLAGS = (
    os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
)


def write_batch(folder: Path, files: Sequence[tuple[str, bytes]]) -> list[os.stat_result]:
    """Write ``(name, data)`` files into ``folder`` (which exists) atomically and durably;
    their stats, in order. The caller holds the folder's lock: temporary names are fixed."""
    staged: list[tuple[str, str]] = []
    stats: list[os.stat_result] = []
    pool = ThreadPoolExecutor(max_workers=_SYNC_THREADS) if len(files) > 2 else None
    try:
        for start in range(0, len(files), _OPEN_AT_ONCE):
            descriptors: list[int] = []
            try:
                for name, data in files[start : start + _OPEN_AT_ONCE]:
                    # The lock makes the name ours; a leftover of a crash is overwritten.
                    tmp = os.path.join(folder, f".{name}.tmp")
                    fd = os.open(tmp, _TEMP_FLAGS, 0o644)
                    descriptors.append(fd)
                    staged.append((tmp, os.path.join(folder, name)))
                    _write_all(fd, data)
                _sync_all(descriptors, pool)
                # A rename keeps the mtime and size, so the stat the index keeps is this.
                stats.extend(os.fstat(fd) for fd in descriptors)
            finally:
                for fd in descriptors:
                    os.close(fd)
        for tmp, final in staged:
            os.replace(tmp, final)
    except BaseException:
        for tmp, _ in staged:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        raise
    finally:
        if pool is not None:
            pool.shutdown()
    _sync_dir(folder)
    return stats


def read_text(path: Path) -> str:
    """A segment file's text with its line ends as written."""
    with open(path, encoding="utf-8", newline="") as handle:
        return handle.read()


def _write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` (os.write may write less than asked)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _sync_all(descriptors: Sequence[int], pool: ThreadPoolExecutor | None) -> None:
    """fsync open files side by side (fsync releases the GIL; the journal commits them
    together), each of the pool's threads taking a share rather than one task per file."""
    if pool is None or len(descriptors) <= 2:
        for fd in descriptors:
            os.fsync(fd)
        return
    workers = min(_SYNC_THREADS, len(descriptors))
    shares = [descriptors[n::workers] for n in range(workers)]

    def sync(share: Sequence[int]) -> None:
        for fd in share:
            os.fsync(fd)

    list(pool.map(sync, shares))


def _sync_dir(folder: Path) -> None:
    """Make renames in ``folder`` durable (where the platform allows opening a folder)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
