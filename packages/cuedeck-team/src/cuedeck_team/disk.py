"""Disk work of team serving: what a folder costs, what removing it frees, and seeding a
working copy's cache from the shared repository's.

A working copy's git objects are hard links to the shared repository's, so its size on
disk is not what deleting it frees: :func:`footprint` counts a file as freed only when
every link to it lies inside the folder.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
from typing import TYPE_CHECKING

import attrs

from cuedeck.layout import CACHE_DIR

if TYPE_CHECKING:
    from pathlib import Path

#: Cache files a working copy must not inherit: locks, one person's tokens and scene.
_NOT_SEEDED = {"confirmations.json", "scene.json", "memory.sqlite3"}


@attrs.frozen
class Footprint:
    """Bytes a folder occupies on disk, split into what removing it frees and what it
    shares with other folders through hard links."""

    own: int
    shared: int
    files: int

    @property
    def total(self) -> int:
        """Everything the folder's files occupy."""
        return self.own + self.shared


def footprint(folder: Path) -> Footprint:
    """Allocated bytes (``st_blocks``) under ``folder``, each inode counted once; a file
    is ``own`` when all its links are inside the folder. Links are not followed."""
    inodes: dict[tuple[int, int], list[int]] = {}  # (dev, ino) -> [links seen, links, bytes]
    for current, folders, files in os.walk(folder):
        for name in (*files, *folders):
            try:
                st = os.lstat(os.path.join(current, name))
            except OSError:
                continue
            key = (st.st_dev, st.st_ino)
            entry = inodes.setdefault(key, [0, st.st_nlink, st.st_blocks * 512])
            entry[0] += 1
    own = shared = count = 0
    for seen, links, size in inodes.values():
        count += 1
        if seen >= links or links == 1:
            own += size
        else:
            shared += size
    return Footprint(own=own, shared=shared, files=count)


def seed_cache(source: Path, target: Path) -> list[str]:
    """Copy the index caches of the workspace at ``source`` into the one at ``target``
    (same files, same relative paths), so that ``target``'s first refresh parses only
    the files that differ. SQLite files are copied with SQLite's backup (a consistent
    copy while a server may write them). Returns the names copied."""
    origin, destination = source / CACHE_DIR, target / CACHE_DIR
    destination.mkdir(parents=True, exist_ok=True)
    copied: list[str] = []
    if not origin.is_dir():
        return copied
    for entry in sorted(origin.iterdir()):
        name = entry.name
        if not entry.is_file() or name in _NOT_SEEDED or name.endswith((".lock", ".pid")):
            continue
        if name.endswith(("-wal", "-shm", ".tmp")):
            continue
        if name.endswith(".sqlite3"):
            _backup(entry, destination / name)
        else:
            shutil.copyfile(entry, destination / name)
        copied.append(name)
    return copied


def _backup(source: Path, target: Path) -> None:
    with (
        contextlib.closing(sqlite3.connect(f"{source.as_uri()}?mode=ro", uri=True)) as src,
        contextlib.closing(sqlite3.connect(target)) as dst,
    ):
        src.backup(dst)


def remove_tree(folder: Path) -> None:
    """Delete ``folder`` and everything in it; a missing folder is fine. Folders made
    read-only inside it are made writable first (their files could not go otherwise)."""
    if not folder.exists() and not folder.is_symlink():
        return
    if not folder.is_symlink():
        for current, folders, _files in os.walk(folder):
            for name in folders:
                path = os.path.join(current, name)
                if not os.path.islink(path):
                    with contextlib.suppress(OSError):
                        os.chmod(path, 0o700)
    if folder.is_symlink():
        folder.unlink()
    else:
        shutil.rmtree(folder)
