"""The one write path of CueDeck, and inter-process locks.

Every file a workspace holds is written through :func:`rewrite_file` (or its shorthands
:func:`write_file` and :func:`remove_file`, and :func:`write_files` for a batch of one
folder): a lock keyed by the file's resolved real
path, the content hash the writer last saw checked inside it, a temporary file in the
same folder, fsync, an atomic rename and the folder made durable, all before the lock is
released. Two writers of one file (a card's ``update_task`` and an ``edit_file``,
through whatever path or link) therefore queue, and the second one sees the first's
bytes: a stale hash is :class:`~cuedeck.errors.Conflict` (1005) with the current one.

:func:`locked` serialises larger operations across processes (a card's dependencies,
the confirmation store) and names the holder on timeout; the write path's lock is always
the innermost one, so taking it inside another never deadlocks.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cuedeck.errors import Conflict, CueError, InvalidInput, LockError, PermissionDenied

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

#: Lock files of the write path (``write-xx.lock`` under the workspace's locks folder):
#: a fixed set, so the folder never fills up; two files that share one merely queue.
WRITE_STRIPES = 256

#: Files :func:`write_files` keeps open, and locked, at once.
_BATCH_FILES = 256

#: What a ``change`` passed to :func:`rewrite_file` returns: new content, or None to
#: leave the file as it is.
Content = bytes | str | None


def sha256_bytes(data: bytes) -> str:
    """Hex sha256 of ``data``: the content hash every read reports and every write checks."""
    return hashlib.sha256(data).hexdigest()


def _denied(where: str, exc: OSError) -> PermissionDenied:
    return PermissionDenied(
        f"cannot write in {where}: {exc.strerror or 'permission denied'}",
        path=where,
        reason=exc.strerror or str(exc),
        help="make the folder writable (and not immutable) for this user",
    )


def os_failure(where: str, exc: OSError, *, field: str = "file_path") -> CueError:
    """The CueDeck error for a failed read or write of ``where``: the causes a person can
    name (a name too long, a link loop, a folder, a missing folder, no permission) as
    such, anything else as a plain 1000 naming the system's message."""
    code = exc.errno
    if isinstance(exc, PermissionError) or code in (errno.EACCES, errno.EPERM, errno.EROFS):
        return _denied(where, exc)
    why = {
        errno.ENAMETOOLONG: "a name in it is longer than the file system allows",
        errno.ELOOP: "it goes through a loop of symbolic links",
        errno.EISDIR: "it is a folder, not a file",
        errno.ENOTDIR: "a part of it is a file, not a folder",
    }.get(code or 0)
    if why is not None:
        return InvalidInput(f"{where}: {why}", field=field, path=where, reason=exc.strerror)
    return CueError(
        f"{where}: {exc.strerror or exc}",
        path=where,
        reason=exc.strerror or str(exc),
        help="check the disk (free space, permissions) and retry",
    )


def _stripe(root: Path, real: str) -> Path:
    from cuedeck.layout import LOCKS_DIR

    digest = sha256_bytes(os.fsencode(real))
    stripe = int(digest[:8], 16) % WRITE_STRIPES
    return root / LOCKS_DIR / f"write-{stripe:02x}.lock"


def read_regular(path: str | os.PathLike[str], display: str) -> tuple[bytes, os.stat_result]:
    """The bytes of the regular file at ``path`` and its stat, taken from one open file.

    Opened without blocking, so that a named pipe or a device never hangs the caller:
    anything but a regular file is 1004 naming it. FileNotFoundError passes through; other
    failures are :func:`os_failure`.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise os_failure(display, exc) from None
    try:
        status = os.fstat(fd)
        if stat.S_ISDIR(status.st_mode):
            raise InvalidInput(
                f"{display}: it is a folder, not a file", field="file_path", path=display
            )
        if not stat.S_ISREG(status.st_mode):
            raise InvalidInput(
                f"{display}: it is not a regular file (a pipe, socket or device)",
                field="file_path",
                path=display,
            )
        handle = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with handle:
        try:
            return handle.read(), status
        except OSError as exc:
            raise os_failure(display, exc) from None


def _read(path: str, display: str) -> bytes | None:
    try:
        return read_regular(path, display)[0]
    except FileNotFoundError:
        return None


def _check(current: bytes | None, expected: str | None, display: str) -> None:
    if expected is None:
        return
    now = "" if current is None else sha256_bytes(current)
    if now != expected:
        raise Conflict(
            f"{display} already exists"
            if expected == ""
            else f"{display} changed since it was read",
            path=display,
            expected_hash=expected,
            current_hash=now,
            current_content_hash=now,
            help="read it again and retry",
        )


def _fsync_folder(folder: str) -> None:
    """Make a rename in ``folder`` durable (a no-op where folders cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # some file systems refuse fsync on a folder; the rename stands
        pass
    finally:
        os.close(fd)


def _commit(real: str, payload: bytes, display: str, mode: int | None) -> None:
    """Temp file beside ``real``, fsync, rename over it, fsync the folder."""
    import tempfile  # here: most commands write nothing, and importing it is not free

    folder = os.path.dirname(real)
    try:
        os.makedirs(folder, exist_ok=True)
        # A short fixed prefix: a target whose name is near the limit still has a temp.
        fd, tmp = tempfile.mkstemp(prefix=".cuedeck-", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise os_failure(display, exc) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644 if mode is None else mode)
        os.replace(tmp, real)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise os_failure(display, exc) from None
        raise
    _fsync_folder(folder)


def rewrite_file(
    root: Path,
    path: Path | str,
    change: Callable[[bytes | None], Content],
    *,
    expected_sha256: str | None = None,
    display: str | None = None,
    timeout: float = 30.0,
) -> str | None:
    """The write path: replace the file at ``path`` with ``change(current bytes)``.

    ``root`` is the workspace (its locks folder holds the lock); ``path`` is absolute or
    relative to it and is written at its resolved real path (a link's target, never the
    link replaced by a copy). Under the lock of that real path: read the current bytes
    (None when missing), check ``expected_sha256`` (``""``: the file must not exist;
    else :class:`Conflict`, 1005, with ``current_hash``), call ``change`` (which may
    raise to abort, must not write files itself, and returns the new content or None to
    leave the file alone), then write atomically and durably. Returns the new content's
    sha256, or None when nothing was written.
    """
    target = Path(path) if Path(path).is_absolute() else Path(root) / path
    real = os.path.realpath(target)
    shown = display or str(path)
    with locked(_stripe(Path(root), real), timeout=timeout, display=shown):
        current = _read(real, shown)
        _check(current, expected_sha256, shown)
        new = change(current)
        if new is None:
            return None
        payload = new.encode("utf-8") if isinstance(new, str) else new
        mode = None
        if current is not None:
            with contextlib.suppress(OSError):
                mode = os.stat(real).st_mode & 0o777
        _commit(real, payload, shown, mode)
        return sha256_bytes(payload)


def write_file(
    root: Path,
    path: Path | str,
    data: bytes | str,
    *,
    expected_sha256: str | None = None,
    display: str | None = None,
) -> str:
    """:func:`rewrite_file` with fixed content: write ``data`` and return its sha256."""
    digest = rewrite_file(
        root, path, lambda _current: data, expected_sha256=expected_sha256, display=display
    )
    assert digest is not None  # fixed content is always written
    return digest


def write_files(
    root: Path, folder: Path | str, files: Sequence[tuple[str, bytes]], *, timeout: float = 30.0
) -> None:
    """The write path for a batch of files in one folder (an export): ``(name, bytes)``
    each written under its lock, atomically and durably as :func:`write_file` writes,
    the files' fsyncs side by side and the folder's once.

    A name is a file name, not a path; a link in its place is replaced by the file, never
    followed, so the batch writes nothing outside ``folder``. Nothing is hash-checked:
    the batch overwrites what is there.
    """
    from concurrent.futures import ThreadPoolExecutor

    base = Path(folder) if Path(folder).is_absolute() else Path(root) / folder
    real_folder = os.path.realpath(base)
    try:
        os.makedirs(real_folder, exist_ok=True)
    except OSError as exc:
        raise os_failure(str(base), exc) from None
    for start in range(0, len(files), _BATCH_FILES):
        chunk = files[start : start + _BATCH_FILES]
        targets = [os.path.join(real_folder, name) for name, _ in chunk]
        if any(os.path.dirname(t) != real_folder for t in targets):
            raise InvalidInput(f"{base}: a batch names files, not paths", field="files")
        stripes = sorted({_stripe(Path(root), target) for target in targets})
        import tempfile

        with contextlib.ExitStack() as held:
            # Sorted, so two batches never wait on each other's stripes in a circle.
            for stripe in stripes:
                held.enter_context(locked(stripe, timeout=timeout, display=str(base)))
            opened: list[int] = []
            staged: list[tuple[str, str]] = []
            try:
                for (_name, data), target in zip(chunk, targets, strict=True):
                    fd, tmp = tempfile.mkstemp(prefix=".cuedeck-", suffix=".tmp", dir=real_folder)
                    opened.append(fd)
                    staged.append((tmp, target))
                    view = memoryview(data)
                    while view:  # os.write may write less than asked
                        view = view[os.write(fd, view) :]
                    os.chmod(tmp, 0o644)
                with ThreadPoolExecutor(max_workers=min(16, len(opened))) as pool:
                    # fsync releases the GIL: the file system commits them together.
                    list(pool.map(os.fsync, opened))
                while opened:
                    os.close(opened.pop())
                while staged:
                    tmp, target = staged[0]
                    os.replace(tmp, target)
                    staged.pop(0)
            except OSError as exc:
                raise os_failure(str(base), exc) from None
            finally:
                for fd in opened:
                    with contextlib.suppress(OSError):
                        os.close(fd)
                for tmp, _ in staged:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(tmp)
            _fsync_folder(real_folder)


def remove_file(
    root: Path,
    path: Path | str,
    *,
    expected_sha256: str | None = None,
    display: str | None = None,
) -> bool:
    """Delete the file at ``path`` under the write path's lock, after the same hash check
    as :func:`rewrite_file`; a link is removed itself, not its target. Whether it existed."""
    target = Path(path) if Path(path).is_absolute() else Path(root) / path
    entry = os.path.join(os.path.realpath(target.parent), target.name)
    shown = display or str(path)
    with locked(_stripe(Path(root), os.path.realpath(entry)), display=shown):
        current = _read(entry, shown)
        _check(current, expected_sha256, shown)
        try:
            os.unlink(entry)
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise os_failure(shown, exc) from None
        _fsync_folder(os.path.dirname(entry))
        return True


def atomic_write(
    path: Path, data: bytes | str, *, expected_sha256: str | None = None, display: str | None = None
) -> str:
    """Replace ``path`` atomically and durably, without the write path's lock.

    Only for files outside any workspace (the user cache) and for writers that already
    serialise on a lock of their own; files of a workspace go through
    :func:`rewrite_file`. ``expected_sha256`` is checked, but not atomically with the
    rename.
    """
    shown = display or str(path)
    real = os.path.realpath(path)
    current = _read(real, shown) if expected_sha256 is not None else None
    _check(current, expected_sha256, shown)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    mode = None
    with contextlib.suppress(OSError):
        mode = os.stat(real).st_mode & 0o777
    _commit(real, payload, shown, mode)
    return sha256_bytes(payload)


@contextlib.contextmanager
def locked(lock_path: Path, *, timeout: float = 30.0, display: str | None = None) -> Iterator[None]:
    """Hold an exclusive inter-process lock on ``lock_path``, waiting up to ``timeout``
    seconds for it (:class:`LockError`, 1007, naming the holder's pid, after that).

    CueDeck's one lock: every file lock of every package is taken here or by
    :func:`holding`.
    """
    lock = _acquire(lock_path, timeout, display)
    try:
        yield
    finally:
        lock.release()


@contextlib.contextmanager
def holding(lock_path: Path) -> Iterator[bool]:
    """Try to hold ``lock_path`` without waiting: True, and held for the block, when this
    process got it; False when another process holds it. For what runs once per
    workspace (the watcher process, the detached embedder)."""
    try:
        lock = _acquire(lock_path, 0, None)
    except LockError:
        yield False
        return
    try:
        yield True
    finally:
        lock.release()


def is_locked(lock_path: Path) -> bool:
    """Whether another process holds ``lock_path`` now."""
    with holding(lock_path) as got:
        return not got


def _acquire(lock_path: Path, timeout: float, display: str | None) -> Any:
    """The acquired lock of ``lock_path``, the holder's pid written beside it."""
    import filelock  # here: a process that only reads never takes a lock

    holder = lock_path.with_name(lock_path.name + ".pid")
    lock = filelock.FileLock(str(lock_path), timeout=timeout)
    try:
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        lock.acquire()
    except PermissionError as exc:
        raise _denied(str(lock_path.parent), exc) from None
    except filelock.Timeout:
        try:
            pid: int | None = int(holder.read_text().strip())
        except (OSError, ValueError):
            pid = None
        raise LockError(
            f"could not lock {display or lock_path} within {timeout:g}s",
            lock_file=display or str(lock_path),
            holder_pid=pid,
            suggestion="Close other CueDeck instances or remove a stale lock",
        ) from None
    with contextlib.suppress(OSError):
        holder.write_text(str(os.getpid()))
    return lock
