"""Small answers kept across processes in the user cache, valid while their key holds.

What every ``cue`` start would otherwise work out again (which plugins are installed, that
the tokenizer's data file has its published hash) is stored as JSON beside its key under
:func:`cuedeck.layout.user_cache_dir`. The key is whatever the answer depends on, stat
results of the files it was read from included: a different key reads as no answer.
"""

from __future__ import annotations

import json
import logging
import os
from typing import Any

log = logging.getLogger("cuedeck")


def _path(name: str) -> str:
    from cuedeck.layout import user_cache_dir

    return os.path.join(user_cache_dir(), name)


def recall(name: str, key: Any) -> Any:
    """The answer stored as ``name`` for ``key`` (JSON values), or None."""
    try:
        with open(_path(name), encoding="utf-8") as handle:
            stored = json.load(handle)
        # Compared as JSON reads it back: tuples in ``key`` are lists in the file.
        if stored["key"] == json.loads(json.dumps(key)):
            return stored["value"]
    except (OSError, ValueError, KeyError, TypeError):
        pass  # nothing stored yet, or a broken file: no answer
    return None


def remember(name: str, key: Any, value: Any) -> None:
    """Store ``value`` as ``name`` for ``key``: the whole file or nothing (a reader never
    sees half of one), and silently nothing where the cache cannot be written."""
    from pathlib import Path

    from cuedeck.errors import CueError
    from cuedeck.writes import atomic_write

    path = _path(name)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        atomic_write(Path(path), json.dumps({"key": key, "value": value}))
    except (OSError, CueError) as exc:  # a read-only home: work it out again next time
        log.debug("not remembered in %s: %s", path, exc)


def file_key(path: str) -> list[int] | None:
    """What changes when the file at ``path`` does (inode, size, modification and change
    times; the change time cannot be set back by hand), or None when it is missing."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def tree_keys(folder: str) -> list[list[Any]]:
    """Every Python file under ``folder`` (``__pycache__`` aside) with its
    :func:`file_key`, in a stable order: what a package's sources are keyed by."""
    found: list[list[Any]] = []
    for parent, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(parent, name)
                found.append([path, file_key(path)])
    return found
