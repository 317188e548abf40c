"""Safe file writes and inter-process locks.

Every write CueDeck makes goes through :func:`atomic_write` (temp file in the same
directory, fsync, rename), so a crash or a racing reader never sees half a file.
:func:`locked` serialises writers across processes and names the holder on timeout.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from typing import TYPE_CHECKING

from cuedeck.errors import Conflict, LockError, PermissionDenied

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


def _denied(where: str, exc: OSError) -> PermissionDenied:
    return PermissionDenied(
        f"cannot write in {where}: {exc.strerror or 'permission denied'}",
        path=where,
        reason=exc.strerror or str(exc),
        help="make the folder writable (and not immutable) for this user",
    )


def sha256_bytes(data: bytes) -> str:
    """Hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def atomic_write(
    path: Path, data: bytes | str, *, expected_sha256: str | None = None, display: str | None = None
) -> str:
    """Replace ``path`` with ``data`` atomically; return the new content's sha256.

    With ``expected_sha256``, the current file must still have that hash (or not exist
    when it is the empty string), else :class:`Conflict` (1005) and nothing is written.
    Callers that race must hold a :func:`locked` lock around read-check-write.
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    if expected_sha256 is not None:
        current = sha256_bytes(path.read_bytes()) if path.exists() else ""
        if current != expected_sha256:
            raise Conflict(
                f"{display or path} changed since it was read",
                path=display or str(path),
                expected_hash=expected_sha256,
                current_hash=current,
                help="read it again and retry",
            )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except PermissionError as exc:
        raise _denied(display or str(path.parent), exc) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o777)
        else:
            os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return sha256_bytes(payload)


@contextlib.contextmanager
def locked(lock_path: Path, *, timeout: float = 30.0, display: str | None = None) -> Iterator[None]:
    """Hold an exclusive inter-process lock on ``lock_path``.

    Writes the holder's pid beside the lock so that a timeout (:class:`LockError`, 1007)
    can name it.
    """
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
    try:
        with contextlib.suppress(OSError):
            holder.write_text(str(os.getpid()))
        yield
    finally:
        lock.release()
