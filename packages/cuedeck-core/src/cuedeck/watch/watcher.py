"""Knowing what changed without a stat of every file: a watcher process per workspace.

A short-lived command (``cue search``) must see every edit, creation, deletion and rename
made since the last one, but stat-ing 40,000 files costs half a second. On Linux a small
process per workspace (``python -m cuedeck.watch.watcher ROOT``) watches the files
(:mod:`cuedeck.watch.files`, inotify) and logs the paths that changed, numbered. A command
asks it, over a local socket, what changed since the number it last saw (kept in
``.cuedeck/.cache/freshness.json``), and re-reads just those paths
(:meth:`cuedeck.index.parsed.Index.refresh_paths`). The watcher drains its inotify queue
before it answers: the kernel queues an event when the write returns, so an edit that
finished before the question is in the answer. Edits in place are seen
(``IN_CLOSE_WRITE``, ``IN_MODIFY``), and so are files created, deleted or renamed; a
folder created, removed or renamed, a lost event (queue overflow), or a number the watcher
no longer knows makes the answer "unknown", and the command walks the whole tree as
before.

The watcher holds ``.cuedeck/.cache/freshness.lock`` (one per workspace), exits after
``[watch] watcher_idle_seconds`` (:data:`IDLE_SECONDS`) without a question, and is
started by the first command that walks (only where inotify exists; elsewhere every
command walks). It answers ``status`` too (its pid, age and idle limit, for ``cue
status``), which does not keep it alive. Nothing here is imported by a command that does
not use it.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from cuedeck.layout import CACHE_DIR

# The watch, socket and subprocess are imported where used: the index imports this module
# for its stamp, and most commands never ask a watcher.

#: A watcher exits after this long without a question (the default of ``[watch]
#: watcher_idle_seconds``).
IDLE_SECONDS = 900
STAMP = f"{CACHE_DIR}/freshness.json"
LOCK = f"{CACHE_DIR}/freshness.lock"
LOG = f"{CACHE_DIR}/freshness.log"
MAX_LOG = 20_000  # changes remembered; a question from before them is "unknown"
ANSWER_TIMEOUT = 2.0


def supported() -> bool:
    """Whether this system has inotify (Linux): elsewhere no watcher process starts."""
    return sys.platform.startswith("linux")  # the watch finds inotify in libc


def address(root: Path) -> str:
    """The watcher's socket: an abstract Unix socket named after the root (no file,
    no path-length limit)."""
    import hashlib

    digest = hashlib.sha256(os.fsencode(os.path.realpath(root))).hexdigest()[:32]
    return f"\0cuedeck-freshness-{digest}"


# -- the command's side ----------------------------------------------------------------------


def ask(root: Path, stamp: tuple[str, int] | None) -> tuple[str, int, list[str] | None] | None:
    """What changed under ``root`` since ``stamp`` (a watcher id and change number):
    ``(watcher id, number, paths)`` (paths None when unknown: walk), or None when no
    watcher answers."""
    question = f"changes {stamp[0] if stamp else '-'} {stamp[1] if stamp else -1}"
    reply = _question(root, question)
    try:
        return str(reply["id"]), int(reply["seq"]), reply["paths"]
    except (KeyError, TypeError, ValueError):
        return None


def status(root: Path) -> dict[str, Any] | None:
    """The running watcher of ``root`` (``pid``, ``started``: a Unix time, ``idle``: its
    limit, ``quiet``: seconds since its last question), or None when none answers."""
    reply = _question(root, "status")
    return reply if reply is not None and "pid" in reply else None


def _question(root: Path, question: str) -> Any:
    """The watcher's answer to ``question`` (decoded JSON), or None."""
    import socket

    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(ANSWER_TIMEOUT)
            connection.connect(address(root))
            if not same_user(connection):  # an abstract socket has no file permissions
                return None
            connection.sendall(question.encode() + b"\n")
            data = b""
            while not data.endswith(b"\n"):
                chunk = connection.recv(65536)
                if not chunk:
                    break
                data += chunk
        reply = json.loads(data)
    except (OSError, ValueError):
        return None
    return reply if isinstance(reply, dict) else None


def changes_seen(
    root: Path, idle: float = IDLE_SECONDS
) -> tuple[str, int, list[str] | None] | None:
    """What the workspace's watcher saw change since the stamp (see :func:`ask`); None
    where there is no watcher, and then one is started for the next command (to leave
    after ``idle`` seconds without a question)."""
    if not supported():
        return None
    found = ask(root, read_stamp(root))
    if found is None:
        start(root, idle)
    return found


def same_user(connection: Any) -> bool:
    """Whether the process at the other end of a Unix socket runs as this user."""
    import socket
    import struct

    credentials = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
    _pid, uid, _gid = struct.unpack("3i", credentials)
    return bool(uid == os.getuid())


def read_stamp(root: Path) -> tuple[str, int] | None:
    """The watcher id and change number the index was last brought in step with."""
    try:
        data = json.loads((root / STAMP).read_text(encoding="utf-8"))
        return str(data["id"]), int(data["seq"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_stamp(root: Path, watcher: str, seq: int) -> None:
    """Record that the index is in step with change ``seq`` of ``watcher``."""
    if read_stamp(root) == (watcher, seq):
        return  # nothing changed since: no synced write for a search that found it so
    from cuedeck.writes import atomic_write

    with contextlib.suppress(Exception):  # only a cache: the next command walks
        atomic_write(root / STAMP, json.dumps({"id": watcher, "seq": seq}).encode())


def start(root: Path, idle: float = IDLE_SECONDS) -> int:
    """Start the workspace's watcher in the background (it exits at once if one runs),
    to leave after ``idle`` seconds without a question; its pid."""
    from cuedeck.system.spawn import start_detached

    log = root / LOG
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:
        return start_detached("cuedeck.watch.watcher", str(root), str(idle), stdout=out, stderr=out)


# -- the watcher -----------------------------------------------------------------------------


class Watcher:
    """The workspace's files watched (:class:`~cuedeck.watch.files.FileWatch`, inotify),
    and the numbered log of paths that changed."""

    def __init__(self, root: Path) -> None:
        import uuid

        from cuedeck.watch.files import FileWatch

        self.watch = FileWatch(root)
        if self.watch.method != "inotify":
            self.watch.close()
            raise OSError("no inotify on this system")
        self.id = uuid.uuid4().hex
        self.seq = 0
        self.unknown_until = 0  # a question from before this number gets "unknown"
        self.log: list[tuple[int, str]] = []

    def drain(self) -> None:
        """Read every change queued so far into the log."""
        changes = self.watch.take()
        if self.watch.gone:
            raise SystemExit(0)  # the workspace itself went away
        for path in sorted(changes.paths):
            if changes.unknown and os.path.isdir(self.watch.root / path):
                continue  # the folder's report: "unknown" below says it
            self.seq += 1
            self.log.append((self.seq, path))
        if len(self.log) > MAX_LOG:
            del self.log[: MAX_LOG // 2]
            self.unknown_until = self.log[0][0] - 1
        if changes.unknown:
            self.seq += 1
            self.unknown_until = self.seq

    def answer(self, question: str) -> dict[str, object]:
        """The reply to ``changes ID SEQ``: the paths changed after SEQ, or None."""
        self.drain()
        parts = question.split()
        known = len(parts) == 3 and parts[0] == "changes" and parts[1] == self.id
        since = int(parts[2]) if known and parts[2].lstrip("-").isdigit() else -1
        paths: list[str] | None = None
        if known and since >= self.unknown_until:
            paths = sorted({path for seq, path in self.log if seq > since})
        return {"id": self.id, "seq": self.seq, "paths": paths}


def serve(root: Path, idle: float = IDLE_SECONDS) -> int:
    """Watch ``root`` and answer questions until idle for ``idle`` seconds (a ``status``
    question does not count: it only looks)."""
    from cuedeck.writes import holding

    with holding(root / LOCK) as mine:
        return _serve(root, idle) if mine else 0  # one watcher per workspace


def _serve(root: Path, idle: float) -> int:
    import socket
    import time

    from cuedeck.system.readable import readable

    watcher = Watcher(root)
    events = watcher.watch.fileno()
    assert events is not None  # inotify's descriptor
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(address(root))
    except OSError:  # another watcher of the same folder answers already
        return 0
    server.listen(16)
    print(f"watching {root} (pid {os.getpid()})", flush=True)
    started, last = time.time(), time.monotonic()
    while (left := idle - (time.monotonic() - last)) > 0:
        ready = readable([events, server.fileno()], left)
        if events in ready:
            watcher.drain()
        if server.fileno() not in ready:
            continue
        connection, _ = server.accept()
        with connection, contextlib.suppress(OSError, ValueError):
            connection.settimeout(ANSWER_TIMEOUT)
            if not same_user(connection):
                continue
            question = connection.recv(4096).decode()
            if question.strip() == "status":
                quiet = time.monotonic() - last
                answer: dict[str, object] = {
                    "pid": os.getpid(), "started": started, "idle": idle, "quiet": quiet
                }  # fmt: skip
            else:
                answer, last = watcher.answer(question), time.monotonic()
            connection.sendall(json.dumps(answer).encode() + b"\n")
    return 0


if __name__ == "__main__":  # pragma: no cover (run as a process by the tests)
    sys.exit(serve(Path(sys.argv[1]), float(sys.argv[2]) if len(sys.argv) > 2 else IDLE_SECONDS))
