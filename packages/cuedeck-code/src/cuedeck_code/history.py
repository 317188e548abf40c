"""Recent changes from git: which lines of which files the last commits touched.

``git log -U0`` over the last :data:`COMMITS` commits (merges left out) gives, per
commit, the line ranges each file has after the change. They are mapped onto the
definitions of the code graph as they stand now: a commit ``i`` commits back from
``HEAD`` adds ``0.5 ** (i / HALF_LIFE)`` to every definition whose lines overlap one of
its hunks, so a definition changed often and lately scores highest (recency and
frequency in one sum). Line numbers drift as later commits add lines above; a hunk is
placed where its own commit put it, which is close enough to tell the busy parts of a
file from the quiet ones. Read once per ``HEAD`` and kept beside the index.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import re
from typing import TYPE_CHECKING

import numpy as np

from cuedeck.layout import CACHE_DIR

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from cuedeck.workspace import Workspace
    from cuedeck_code.codegraph import CodeGraph

log = logging.getLogger("cuedeck")

HISTORY_FILE = f"{CACHE_DIR}/code-history.json"
#: Commits read back from HEAD.
COMMITS = 300
#: Commits after which a change counts half.
HALF_LIFE = 30.0
#: Seconds ``git log`` may take (a huge history is read no further: no recency then).
GIT_TIMEOUT = 20
SCHEMA = 1
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")

#: path -> [(commit number back from HEAD, first line, last line)]
Changes = dict[str, list[tuple[int, int, int]]]


def _git(root: str, *args: str) -> str | None:
    """``git args`` read-only in the repository found for ``root`` (core's runner), its
    output; None outside git or when it fails."""
    from cuedeck.system.git import Git, GitTimedOut, find_repository

    found = find_repository(root)
    if found is None:
        return None
    try:
        done = Git(found, cwd=root, read_only=True).run(args, timeout=GIT_TIMEOUT)
    except (OSError, GitTimedOut) as exc:
        log.debug("git %s failed: %s", args[0], exc)
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", errors="replace")


def head(root: str) -> str | None:
    """The commit ``HEAD`` names, or None outside git (or before the first commit)."""
    found = _git(root, "rev-parse", "--verify", "--quiet", "HEAD")
    return found.strip() if found else None


def parse_log(text: str) -> Changes:
    """The hunks of ``git log -U0 --format=%x00`` output, per path (see :data:`Changes`)."""
    changes: Changes = {}
    commit = -1
    path: str | None = None
    for line in text.split("\n"):
        if line.startswith("\0"):
            commit += 1
            path = None
        elif line.startswith("+++ "):
            target = line[4:]
            path = target[2:] if target.startswith("b/") else None
        elif path is not None and line.startswith("@@"):
            match = _HUNK.match(line)
            if match is None:
                continue
            first, count = int(match.group(1)), int(match.group(2) or 1)
            if count == 0:  # lines removed only: the change sits between two lines
                count, first = 1, max(first, 1)
            changes.setdefault(path, []).append((commit, first, first + count - 1))
    return changes


def read_changes(workspace: Workspace) -> tuple[str, Changes] | None:
    """``(HEAD, changes)`` of the workspace's repository, cached per ``HEAD``; None
    outside git."""
    root = str(workspace.root)
    commit = head(root)
    if commit is None:
        return None
    return commit, _cached(root, commit)


@functools.lru_cache(maxsize=8)
def _cached(root: str, commit: str) -> Changes:
    path = os.path.join(root, HISTORY_FILE)
    try:
        with open(path, encoding="utf-8") as handle:
            saved = json.load(handle)
        if saved.get("head") == commit and saved.get("schema") == SCHEMA:
            return {p: [tuple(h) for h in hunks] for p, hunks in saved["changes"].items()}
    except (OSError, ValueError, KeyError, TypeError):
        pass
    text = _git(
        root,
        "log",
        "--no-merges",
        f"-n{COMMITS}",
        "--format=%x00",
        "--unified=0",
        "--no-renames",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--relative",
        "--diff-filter=AM",
        "--",
        ".",
    )
    changes = parse_log(text) if text else {}
    try:
        from pathlib import Path

        from cuedeck.writes import atomic_write

        payload = {"schema": SCHEMA, "head": commit, "changes": changes}
        atomic_write(Path(path), json.dumps(payload, separators=(",", ":")), display=HISTORY_FILE)
    except OSError as exc:
        log.debug("history not saved: %s", exc)
    return changes


def recency(
    graph: CodeGraph, changes: Changes, half_life: float = HALF_LIFE
) -> NDArray[np.float64]:
    """Per symbol of ``graph``: the sum of ``0.5 ** (commit / half_life)`` over the
    commits whose hunks overlap its lines (see the module docstring)."""
    scores = np.zeros(len(graph.names), dtype=np.float64)
    files = graph.file_index
    for path, hunks in changes.items():
        number = files.get(path)
        if number is None:
            continue
        symbols = graph.by_file[number]
        if not len(symbols):
            continue
        starts, ends = graph.lines[symbols], graph.ends[symbols]
        for commit, first, last in hunks:
            touched = symbols[(starts <= last) & (ends >= first)]
            scores[touched] += 0.5 ** (commit / half_life)
    return scores
