"""What a reply reflects: the indexed files, git's HEAD, and the edits not read yet.

Search, scene and code replies carry one small ``reflects`` block (:func:`reflects`), so
that an agent can tell "nothing matched" from "not indexed yet":

- ``tree``: a digest of every indexed path and content hash (equal digests, same files);
- ``head``: the commit git's HEAD named when the reply was made (None outside git);
- ``checked``: when the files were last compared with the index (UTC);
- ``watch``: how edits made after ``checked`` reach the index: ``watcher`` (a file
  watcher reports them as they happen), ``stamps`` (the indexed files' stamps are
  compared before each call) or ``none`` (they do not: the index is as of ``checked``);
- ``pending``: files the watcher reported changed that the reply does not reflect yet
  (the next call reads them), or None when that is not known (no watcher, or so much
  changed that the next call reads everything).

:func:`reflects_line` says the same in one short line for a model. docs/freshness.md
describes both.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast

from typing_extensions import TypedDict  # pydantic needs it for TypedDicts on 3.11

from cuedeck.text import counted

if TYPE_CHECKING:
    from pathlib import Path

#: Pending paths named in a block at most; more is "unknown" (None).
MAX_PENDING = 20
#: Hex digits of the tree digest and the HEAD commit (enough to tell them apart).
SHORT = 12


class Reflects(TypedDict):
    """The state of the files a reply was made from."""

    tree: str
    head: str | None
    checked: str
    watch: Literal["watcher", "stamps", "none"]
    pending: list[str] | None


class ChangeFeed(Protocol):
    """What keeps a long-lived process's workspace in step with its files (the MCP
    server's file watcher sets itself as ``workspace.freshness``)."""

    @property
    def watching(self) -> bool:
        """Whether edits are reported as they happen (else stamps are compared)."""
        ...

    def ensure(self) -> bool:
        """Read what changed since the last call; whether anything did."""
        ...

    @property
    def checked(self) -> float | None:
        """When the files were last brought in step (``time.time()``), or None."""
        ...

    def pending(self) -> list[str] | None:
        """Files reported changed and not read yet, sorted; None when unknown."""
        ...


class _Tree(Protocol):
    def tree(self) -> str: ...


class Reflected(Protocol):
    """What :func:`reflects` reads of a workspace (:class:`~cuedeck.workspace.Workspace`
    is one; a protocol, since the workspace sits above this room)."""

    @property
    def root(self) -> Path: ...
    @property
    def index(self) -> _Tree: ...
    @property
    def freshness(self) -> ChangeFeed | None: ...
    @property
    def checked(self) -> float | None: ...
    @property
    def watched(self) -> bool: ...


def reflects(workspace: Reflected) -> Reflects:
    """The ``reflects`` block of a reply made from ``workspace`` now."""
    index = workspace.index
    feed = workspace.freshness
    checked = workspace.checked
    # Rows in step with the workspace's watcher process: it told every edit up to then.
    watch: Literal["watcher", "stamps", "none"] = "watcher" if workspace.watched else "none"
    pending: list[str] | None = [] if workspace.watched else None
    if feed is not None:
        checked = feed.checked or checked
        watch = "watcher" if feed.watching else "stamps"
        pending = feed.pending() if feed.watching else None
        if pending is not None and len(pending) > MAX_PENDING:
            pending = None
    return Reflects(
        tree=index.tree(),
        head=head_commit(workspace.root),
        checked=_utc(checked),
        watch=watch,
        pending=pending,
    )


def reflects_line(block: Reflects) -> str:
    """``block`` in one short line: ``reflects index 3f2a9c1b0d4e at HEAD 9e1d2c4a5b6f,
    watched, nothing pending``."""
    head = f" at HEAD {block['head']}" if block["head"] else " (no git HEAD)"
    pending = block["pending"]
    if block["watch"] == "none":
        state = f"files as of {block['checked']}, not watched: later edits are not seen"
    elif block["watch"] == "stamps":
        state = f"files checked by their stamps at {block['checked']}"
    elif pending is None:
        state = "watched, many files changed: the next call reads them all"
    elif pending:
        shown = ", ".join(pending[:3]) + (f" and {len(pending) - 3} more" if pending[3:] else "")
        state = f"watched, {counted(len(pending), 'changed file')} not read yet: {shown}"
    else:
        state = "watched, nothing pending"
    return f"reflects index {block['tree']}{head}; {state}"


def reply_line(value: Any) -> str | None:
    """The :func:`reflects_line` of a reply that carries a ``reflects`` block, else None:
    what a server sends a model as text beside the reply's structured content."""
    block = value.get("reflects") if isinstance(value, dict) else None
    if not isinstance(block, dict) or not {"tree", "head", "checked", "watch"} <= block.keys():
        return None
    return reflects_line(cast("Reflects", block))


def _utc(stamp: float | None) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(stamp if stamp is not None else 0))


# -- git's HEAD, read from its files (no git process for every reply) ------------------------


def head_commit(root: os.PathLike[str] | str) -> str | None:
    """The commit HEAD names in the repository holding ``root`` (short), or None: not a
    repository, no commit yet, or files this reader does not follow."""
    git_dir = _git_dir(os.fspath(root))
    if git_dir is None:
        return None
    head = _read(os.path.join(git_dir, "HEAD"))
    if head is None:
        return None
    if not head.startswith("ref: "):
        return _commit(head)
    ref = head[5:].strip()
    common = _read(os.path.join(git_dir, "commondir"))  # a linked worktree's shared refs
    shared = os.path.normpath(os.path.join(git_dir, common)) if common else git_dir
    for folder in dict.fromkeys((git_dir, shared)):
        found = _read(os.path.join(folder, *ref.split("/")))
        if found is not None:
            return _commit(found)
    packed = _read(os.path.join(shared, "packed-refs")) or ""
    for line in packed.splitlines():
        commit, _, name = line.partition(" ")
        if name == ref:
            return _commit(commit)
    return None


def _git_dir(root: str) -> str | None:
    """The git folder of the repository holding ``root`` (a ``.git`` folder, or the one a
    ``.git`` file names), looking upwards."""
    folder = os.path.realpath(root)
    while True:
        dot_git = os.path.join(folder, ".git")
        if os.path.isdir(dot_git):
            return dot_git
        if os.path.isfile(dot_git):
            pointer = _read(dot_git) or ""
            if pointer.startswith("gitdir: "):
                return os.path.normpath(os.path.join(folder, pointer[8:].strip()))
            return None
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read(4096).strip()
    except OSError:
        return None


def _commit(text: str) -> str | None:
    text = text.strip()
    if len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text):
        return text[:SHORT]
    return None
