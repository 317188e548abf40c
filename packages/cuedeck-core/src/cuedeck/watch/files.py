"""Watching a workspace's files: the one recipe every watcher in CueDeck uses.

What it watches: every folder under the root (links not followed) but version-control
folders, ``__pycache__``, ``node_modules``, ``.venv`` and CueDeck's cache
(:func:`skipped`); a user narrows it with ``accept`` (a workspace-relative path, whether
it matters). How: inotify where the system has it (a watch per folder, folders created
later added as they appear), else the files' stamps compared every ``poll`` seconds. What
it reports: :class:`Changes`, the paths created, written, deleted or renamed (a folder
among them when it came or went), and ``unknown`` when a folder came or went or events
were lost (anything below may have changed). Changes within ``debounce`` seconds of each
other make one batch, delivered after the last of them (a storm that never pauses is
delivered every ten debounces).

One recipe, three ways to read it: :meth:`FileWatch.take` reads what is queued now (a
caller with its own loop, such as the watcher process), :meth:`FileWatch.subscribe`
calls back from the watch's thread, and :meth:`FileWatch.batches` (threads) or
:meth:`FileWatch.changes` (asyncio) iterate over the batches.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from cuedeck.layout import CACHE_DIR

if TYPE_CHECKING:
    import ctypes
    from collections.abc import AsyncIterator, Callable, Iterator

SKIPPED = frozenset({".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv"})

# inotify (linux/inotify.h)
_IN_MODIFY, _IN_ATTRIB, _IN_CLOSE_WRITE = 0x2, 0x4, 0x8
_IN_MOVED_FROM, _IN_MOVED_TO, _IN_CREATE, _IN_DELETE = 0x40, 0x80, 0x100, 0x200
_IN_DELETE_SELF, _IN_MOVE_SELF, _IN_Q_OVERFLOW, _IN_IGNORED = 0x400, 0x800, 0x4000, 0x8000
_IN_ONLYDIR, _IN_ISDIR = 0x01000000, 0x40000000
_IN_NONBLOCK, _IN_CLOEXEC = 0o4000, 0o2000000
_WATCHED = (
    _IN_MODIFY | _IN_ATTRIB | _IN_CLOSE_WRITE | _IN_MOVED_FROM | _IN_MOVED_TO | _IN_CREATE
    | _IN_DELETE | _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_ONLYDIR
)  # fmt: skip
_EVENT_SIZE = 16  # struct inotify_event without its name: int wd; uint32 mask, cookie, len


def skipped(rel: str) -> bool:
    """Whether the workspace-relative ``rel`` lies where no watcher looks."""
    parts = rel.split("/")
    return rel == CACHE_DIR or rel.startswith(CACHE_DIR + "/") or any(p in SKIPPED for p in parts)


def inotify_supported() -> bool:
    """Whether this system has inotify (Linux)."""
    return sys.platform.startswith("linux") and _libc() is not None


@dataclass(frozen=True)
class Changes:
    """What changed: workspace-relative ``paths`` (posix), and ``unknown`` when anything
    may have (a folder came or went, events were lost): read everything again."""

    paths: frozenset[str] = frozenset()
    unknown: bool = False

    def __bool__(self) -> bool:
        return self.unknown or bool(self.paths)

    def __or__(self, other: Changes) -> Changes:
        return Changes(self.paths | other.paths, self.unknown or other.unknown)


class _Source(Protocol):
    gone: bool

    def fileno(self) -> int | None: ...
    def read(self) -> Changes: ...
    def close(self) -> None: ...


def _libc() -> ctypes.CDLL | None:
    import ctypes

    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.inotify_init1  # noqa: B018 (present?)
    except (OSError, AttributeError):
        return None
    return libc


class _Inotify:
    """Folders watched with inotify; :meth:`read` drains the events queued so far."""

    def __init__(self, root: Path) -> None:
        libc = _libc()
        if libc is None:
            raise OSError("no inotify on this system")
        self.libc = libc
        self.root = root
        self.fd = libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if self.fd < 0:
            raise OSError("inotify_init1 failed")
        self.gone = False  # the root itself was deleted or moved
        self.folders: dict[int, str] = {}  # watch descriptor -> folder ("" for the root)
        self._paths: set[str] = set()
        self._unknown = False
        self._add_tree("")

    def fileno(self) -> int:
        return int(self.fd)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)

    def _add_tree(self, rel: str) -> None:
        for folder in _folders(self.root, rel):
            wd = self.libc.inotify_add_watch(
                self.fd, os.fsencode(self.root / folder if folder else self.root), _WATCHED
            )
            if wd >= 0:
                self.folders[wd] = folder

    def read(self) -> Changes:
        while True:
            try:
                data = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                break
            offset = 0
            while offset < len(data):
                wd, mask, size = _unpack(data, offset)
                raw = data[offset + _EVENT_SIZE : offset + _EVENT_SIZE + size]
                offset += _EVENT_SIZE + size
                self._event(wd, mask, raw.rstrip(b"\0").decode("utf-8", "surrogateescape"))
        found = Changes(frozenset(self._paths), self._unknown)
        self._paths, self._unknown = set(), False
        return found

    def _event(self, wd: int, mask: int, name: str) -> None:
        if mask & _IN_Q_OVERFLOW:
            self._unknown = True
            return
        if mask & _IN_IGNORED:
            self.folders.pop(wd, None)
            return
        folder = self.folders.get(wd)
        if folder is None:
            return
        if mask & (_IN_DELETE_SELF | _IN_MOVE_SELF):
            if not folder:  # the workspace itself went away
                self.gone = self._unknown = True
            return  # its parent reports it (a folder event: unknown)
        path = f"{folder}/{name}" if folder else name
        if skipped(path):
            return
        if mask & _IN_ISDIR:
            if mask & (_IN_CREATE | _IN_MOVED_TO):
                self._add_tree(path)
            if mask & (_IN_CREATE | _IN_MOVED_TO | _IN_MOVED_FROM | _IN_DELETE):
                self._unknown = True  # what the folder holds was never listed
                self._paths.add(path)
            return
        self._paths.add(path)


def _unpack(data: bytes, offset: int) -> tuple[int, int, int]:
    import struct

    wd, mask, _cookie, size = struct.unpack_from("iIII", data, offset)
    return int(wd), int(mask), int(size)


def _folders(root: Path, rel: str) -> Iterator[str]:
    """``rel`` and every folder below it that is watched (links not followed)."""
    yield rel
    try:
        entries = list(os.scandir(root / rel if rel else root))
    except OSError:
        return
    for entry in entries:
        child = f"{rel}/{entry.name}" if rel else entry.name
        if skipped(child):
            continue
        with contextlib.suppress(OSError):
            if entry.is_dir(follow_symlinks=False):
                yield from _folders(root, child)


class _Stamps:
    """Files' stamps compared at every :meth:`read` (where inotify is missing or failed)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.gone = False
        self._stamps = self._scan()

    def fileno(self) -> None:
        return None

    def close(self) -> None:
        pass

    def _scan(self) -> dict[str, tuple[int, int]]:
        found: dict[str, tuple[int, int]] = {}
        for folder in _folders(self.root, ""):
            with contextlib.suppress(OSError):
                for entry in os.scandir(self.root / folder if folder else self.root):
                    rel = f"{folder}/{entry.name}" if folder else entry.name
                    with contextlib.suppress(OSError):
                        if not entry.is_dir(follow_symlinks=False) and not skipped(rel):
                            st = entry.stat(follow_symlinks=False)
                            found[rel] = (st.st_mtime_ns, st.st_size)
        return found

    def read(self) -> Changes:
        if not self.root.is_dir():
            self.gone = True
            return Changes(unknown=True)
        now = self._scan()
        old, self._stamps = self._stamps, now
        changed = {rel for rel in now.keys() | old.keys() if now.get(rel) != old.get(rel)}
        return Changes(frozenset(changed))


class FileWatch:
    """The files under ``root`` watched (see the module): in place once built, so that no
    change made after the constructor returns is missed. Close it (or use ``with``)."""

    def __init__(
        self,
        root: os.PathLike[str] | str,
        *,
        accept: Callable[[str], bool] | None = None,
        debounce: float = 0.0,
        polling: bool = False,
        poll: float = 0.5,
    ) -> None:
        self.root = Path(os.path.realpath(root))
        self.debounce = max(debounce, 0.0)
        self.poll = poll
        self._accept = accept
        source: _Source | None = None
        if not polling and sys.platform.startswith("linux"):
            with contextlib.suppress(OSError):  # no inotify instances left: stamps
                source = _Inotify(self.root)
        self._source: _Source = source if source is not None else _Stamps(self.root)
        #: ``inotify`` or ``stamps``: how changes are learnt.
        self.method = "inotify" if isinstance(self._source, _Inotify) else "stamps"
        self._subscribers: list[Callable[[Changes], None]] = []
        self._on_end: list[Callable[[], None]] = []  # readers told the watch ended
        self._lock = threading.Lock()
        self._wake_r, self._wake_w = os.pipe()
        self._closed = False
        #: The thread that delivers batches to subscribers (started by the first).
        self.thread: threading.Thread | None = None

    @property
    def gone(self) -> bool:
        """Whether the watched folder itself was deleted or moved away."""
        return self._source.gone

    def fileno(self) -> int | None:
        """A descriptor readable when changes are queued, or None (stamps: poll)."""
        return self._source.fileno()

    def take(self) -> Changes:
        """What changed since the last :meth:`take` (nothing waits: what is queued now).

        With inotify, a write that returned before this call is in the answer.
        """
        with self._lock:
            found = self._source.read()
        accept = self._accept
        paths = frozenset(p for p in found.paths if accept is None or accept(p))
        return Changes(paths, found.unknown)

    def subscribe(self, callback: Callable[[Changes], None]) -> Callable[[], None]:
        """Call ``callback`` from the watch's thread with every batch; the function that
        unsubscribes it. A callback that raises is dropped (it would stop the others)."""
        with self._lock:
            self._subscribers.append(callback)
            if self.thread is None and not self._closed:
                thread = threading.Thread(target=self._run, name="cuedeck-watch", daemon=True)
                # Kept once started: a Ctrl-C may land while start() waits for the thread.
                thread.start()
                self.thread = thread

        def unsubscribe() -> None:
            with self._lock, contextlib.suppress(ValueError):
                self._subscribers.remove(callback)

        return unsubscribe

    def batches(self, tick: float | None = None) -> Iterator[Changes]:
        """The batches as they come, in this thread; an empty :class:`Changes` after
        ``tick`` seconds without one (None: wait). Ends when the watch is closed."""
        import queue

        inbox: queue.Queue[Changes | None] = queue.Queue()
        with self._delivering(inbox.put):
            while not self._closed:
                try:
                    got = inbox.get(timeout=tick)
                except queue.Empty:
                    got = Changes()
                if got is None:
                    return
                yield got

    async def changes(self, tick: float | None = None) -> AsyncIterator[Changes]:
        """The batches as they come, in asyncio; an empty :class:`Changes` after ``tick``
        seconds without one (None: wait)."""
        import asyncio

        loop = asyncio.get_running_loop()
        inbox: asyncio.Queue[Changes | None] = asyncio.Queue()

        def deliver(changes: Changes | None) -> None:
            with contextlib.suppress(RuntimeError):  # the loop closed first
                loop.call_soon_threadsafe(inbox.put_nowait, changes)

        with self._delivering(deliver):
            while not self._closed:
                try:
                    got = await asyncio.wait_for(inbox.get(), tick)
                except TimeoutError:
                    got = Changes()
                if got is None:
                    return
                yield got

    @contextlib.contextmanager
    def _delivering(self, deliver: Callable[[Changes | None], None]) -> Iterator[None]:
        """``deliver`` gets every batch while the block runs, and None when the watch ends."""
        end = functools.partial(deliver, None)
        self._on_end.append(end)
        unsubscribe = self.subscribe(deliver)
        try:
            yield
        finally:
            unsubscribe()
            with contextlib.suppress(ValueError):
                self._on_end.remove(end)

    def close(self) -> None:
        """Stop watching (the thread ends, the descriptors are released)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._ended()
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"x")
        thread = self.thread
        if (
            thread is not None
            and thread.ident is not None
            and thread is not threading.current_thread()
        ):
            thread.join(5.0)
        self._source.close()
        for fd in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)

    def __enter__(self) -> FileWatch:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _ended(self) -> None:
        with self._lock:
            ends, self._on_end = self._on_end, []
        for end in ends:
            end()

    def _run(self) -> None:
        try:
            self._watch()
        finally:
            self._ended()

    def _watch(self) -> None:
        from cuedeck.system.readable import readable

        fd = self.fileno()
        pending, first, last = Changes(), 0.0, 0.0
        while not self._closed:
            timeout: float | None = self.poll if fd is None else None
            if pending:
                now = time.monotonic()
                due = min(last + self.debounce, first + 10 * max(self.debounce, 0.1))
                timeout = max(0.0, due - now if timeout is None else min(timeout, due - now))
            ready = readable([self._wake_r] if fd is None else [fd, self._wake_r], timeout)
            if self._wake_r in ready or self._closed:
                return
            got = self.take()
            now = time.monotonic()
            if got:
                first = first if pending else now
                pending, last = pending | got, now
            quiet = now - last >= self.debounce
            if pending and (quiet or now - first >= 10 * max(self.debounce, 0.1)):
                self._deliver(pending)
                pending = Changes()
            if self.gone:
                return

    def _deliver(self, changes: Changes) -> None:
        with self._lock:
            subscribers = list(self._subscribers)
        for callback in subscribers:
            try:
                callback(changes)
            except Exception:  # a subscriber's failure is its own: the others go on
                import logging

                logging.getLogger("cuedeck").exception("a file-watch subscriber failed")
                with self._lock, contextlib.suppress(ValueError):
                    self._subscribers.remove(callback)
