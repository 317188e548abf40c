"""Which files differ from the saved keyword postings, without reading every stored key.

The saved postings (``keyword.postings``) were tokenised from the files as they were
when saved; since then files were added, changed or removed. ``keyword.changes`` keeps
those differences, as of a point of the index's journal
(:meth:`cuedeck.index.parsed.Index.stored_changes`), for the postings file it was made for
(device, inode, size, mtime: the file is replaced whole when saved again). A query
brings it up to date from the journal entries written since, which costs the paths
they name: with nothing changed, one read of the journal's last number. Without a
usable record (none yet, other postings, another index database, or a journal that no
longer reaches back) the stored keys of every file are compared once, and recorded.

The record is a cache: damaged or missing, it is made again; written atomically, so
two commands at once leave one whole record or the other, each true of its own point.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from typing import TYPE_CHECKING, Protocol

from cuedeck.layout import CACHE_DIR
from cuedeck.writes import atomic_write

if TYPE_CHECKING:
    from pathlib import Path

    from cuedeck.index.parsed import Index
    from cuedeck.index.store import Version

CHANGES_FILE = f"{CACHE_DIR}/keyword.changes"

#: A path whose saved postings differ from the index: ``(saved document or None,
#: sha256 now or None)``. A saved document is dead; a sha256 is a file to tokenise.
Changed = dict[str, tuple[int | None, str | None]]


class SavedKeys(Protocol):
    """The saved postings' documents, read one at a time."""

    documents: int

    def find(self, path: str) -> int | None: ...

    def sha(self, doc: int) -> str: ...

    def path(self, doc: int) -> str: ...


def changed_files(index: Index, saved: SavedKeys, identity: list[int]) -> Changed | None:
    """Each path whose saved postings (the file ``identity`` names) differ from ``index``
    now, as :data:`Changed` says; None when the index cannot be read (the engine then
    answers, and reports why)."""
    try:
        return _changed(index, saved, identity)
    except sqlite3.Error:
        return None


def _changed(index: Index, saved: SavedKeys, identity: list[int]) -> Changed:
    root = index.root
    recorded = _read(root)
    if recorded is not None and recorded[0] == identity:
        version, found = index.stored_changes(recorded[1])
        if found is not None:
            changed = recorded[2]
            for path, sha in found.items():
                doc = saved.find(path)
                if (saved.sha(doc) if doc is not None else None) == sha:
                    changed.pop(path, None)
                else:
                    changed[path] = (doc, sha)
            if version != recorded[1]:
                _write(root, identity, version, changed)
            return changed
    version, keys = index.stored_keys()
    changed = _compare(saved, dict(keys))
    _write(root, identity, version, changed)
    return changed


def _compare(saved: SavedKeys, live: dict[str, str]) -> Changed:
    """Every difference between the saved documents and ``live`` (path -> sha256)."""
    changed: Changed = {}
    for doc in range(saved.documents):
        path = saved.path(doc)
        sha = live.pop(path, None)
        if sha != saved.sha(doc):
            changed[path] = (doc, sha)
    for path, sha in live.items():
        changed[path] = (None, sha)
    return changed


def _read(root: Path) -> tuple[list[int], Version, Changed] | None:
    try:
        data = json.loads((root / CHANGES_FILE).read_bytes())
        identity = [int(n) for n in data["postings"]]
        version = (str(data["index"][0]), int(data["index"][1]))
        changed: Changed = {
            str(path): (None if doc is None else int(doc), None if sha is None else str(sha))
            for path, (doc, sha) in data["changed"].items()
        }
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None
    return identity, version, changed


def _write(root: Path, identity: list[int], version: Version, changed: Changed) -> None:
    record = {"postings": identity, "index": list(version), "changed": changed}
    with contextlib.suppress(Exception):  # only a cache: the next query compares again
        atomic_write(root / CHANGES_FILE, json.dumps(record).encode())
