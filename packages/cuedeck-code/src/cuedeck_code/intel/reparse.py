"""Parsing a file again from its last tree: tree-sitter's incremental parse.

A server refreshes the graph each time an agent edits a file, and an agent edits the
same few files again and again. The last trees parsed in this process are kept (a
handful, by path); when a file comes back with other bytes, the one edit that turns
the old bytes into the new (their common prefix and suffix kept) is applied to the old
tree and the parser reuses what the edit did not touch. The tree is the one a fresh
parse gives; only the work differs.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from typing import Any

#: How many trees are kept: the files an agent is working on, not the repository.
KEPT = 16


class RecentTrees:
    """The last trees parsed, by key, for parsing their files again incrementally."""

    def __init__(self, kept: int = KEPT) -> None:
        self.kept = kept
        self._forked()

    def _forked(self) -> None:
        """Start empty with a new lock (also in a forked worker, where the parent's
        lock may have been copied held by a thread the child does not have)."""
        self._pid = os.getpid()
        self._trees: OrderedDict[tuple[str, str], tuple[bytes, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def parse(self, parser: Any, key: tuple[str, str], data: bytes) -> Any:
        """``data``'s tree from ``parser``, starting from the tree last kept under
        ``key`` when there is one; the new tree is kept in its place."""
        if self._pid != os.getpid():
            self._forked()
        with self._lock:  # taken out while it is edited: no other thread sees it
            last = self._trees.pop(key, None)
        if last is None:
            tree = parser.parse(data)
        elif last[0] == data:
            tree = last[1].copy()
        else:
            old, tree = last
            tree.edit(**edit_between(old, data))
            tree = parser.parse(data, tree)
        with self._lock:  # a copy: the caller's tree is never edited under it
            self._trees[key] = (data, tree.copy())
            while len(self._trees) > self.kept:
                self._trees.popitem(last=False)
        return tree


def edit_between(old: bytes, new: bytes) -> dict[str, Any]:
    """The one edit (as ``Tree.edit`` takes it) that turns ``old`` into ``new``: what
    lies between their common prefix and their common suffix is replaced."""
    start = _common_prefix(old, new)
    tail = _common_suffix(old[start:], new[start:])
    old_end, new_end = len(old) - tail, len(new) - tail
    return {
        "start_byte": start,
        "old_end_byte": old_end,
        "new_end_byte": new_end,
        "start_point": _point(old, start),
        "old_end_point": _point(old, old_end),
        "new_end_point": _point(new, new_end),
    }


def _common_prefix(a: bytes, b: bytes) -> int:
    """The length of the longest common prefix (slices compared in C, halving)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _common_suffix(a: bytes, b: bytes) -> int:
    """The length of the longest common suffix."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[len(a) - middle : len(a) - low] == b[len(b) - middle : len(b) - low]:
            low = middle
        else:
            high = middle - 1
    return low


def _point(data: bytes, offset: int) -> tuple[int, int]:
    """(row, column in bytes) of ``offset``, as tree-sitter counts them."""
    row = data.count(b"\n", 0, offset)
    return row, offset - (data.rfind(b"\n", 0, offset) + 1)
