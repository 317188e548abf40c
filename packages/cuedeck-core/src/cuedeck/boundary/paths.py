"""The one decision on what a tool may reach: a workspace-relative path, normalised,
resolved and judged on both its spelling and its real path (:func:`locate`), and why a
walker may not read one it found (:func:`read_refusal`)."""

from __future__ import annotations

import os
import posixpath
from typing import TYPE_CHECKING

from cuedeck.errors import InvalidInput, Protected
from cuedeck.layout import Places, protection

if TYPE_CHECKING:
    from collections.abc import Callable


_WHY = {
    "git": "is inside a .git folder: git's own files (config, hooks) are never read or "
    "written by a tool",
    "git_directory": "is in, or would make, a git directory (HEAD with objects/ and "
    "refs/): git would take that folder as a repository and run what its config names",
    "private": "is CueDeck's private data (caches, locks, state, or a plugin's own): no "
    "tool reads or writes it",
    "control": "is a CueDeck control file (config.toml, or a plugin's own): tools may read "
    "it but never write it",
}


def _in_git_directory(root: str, rel: str, *, write: bool) -> bool:
    """Whether ``rel`` is inside a git directory (a bare repository's folder) or, for a
    write, would make one (see :func:`cuedeck.system.git.makes_git_directory`)."""
    from cuedeck.system import git

    return (git.makes_git_directory if write else git.inside_git_directory)(root, rel)


def _protected(normal: str, real_rel: str, reason: str, *, field: str, write: bool) -> Protected:
    via = f" (a link to {real_rel})" if real_rel != normal else ""
    return Protected(
        f"{normal}{via} {_WHY[reason]}",
        path=normal,
        field=field,
        reason="git" if reason == "git_directory" else reason,
        target=real_rel,
        access="write" if write else "read",
        help="edit CueDeck's settings and git's configuration by hand, outside the tools",
    )


def locate(
    root: str, places: Places, path: str, *, field: str = "path", write: bool = False
) -> tuple[str, str]:
    """``path`` as asked (normalised) and its resolved real path, both relative to
    ``root`` (the workspace's root, links resolved).

    The one decision on what a tool may reach: absolute paths, ``..`` escapes and
    links leaving the workspace are :class:`InvalidInput` (1004); anything inside a
    ``.git`` folder or CueDeck's private files, and for ``write`` its control files,
    is :class:`Protected` (1013), judged on both paths, so no link reaches them.
    """
    if "\x00" in path:
        raise InvalidInput(f"{path!r} contains a NUL byte", field=field)
    raw = path.replace("\\", "/").strip()
    if not raw or raw.startswith("/") or (len(raw) > 1 and raw[1] == ":"):
        raise InvalidInput(f"{path!r} must be a workspace-relative path", field=field)
    normal = posixpath.normpath(raw)
    parts = normal.split("/")
    if normal.startswith("..") or ".." in parts:
        raise InvalidInput(f"{path!r} leaves the workspace", field=field)
    # os.path, not pathlib: every read of every file passes here. realpath does not
    # fail on a loop or an over-long name; the read or write that follows names them.
    real = os.path.realpath(os.path.join(root, normal))
    if real != root and not real.startswith(root.rstrip(os.sep) + os.sep):
        raise InvalidInput(f"{path!r} resolves outside the workspace", field=field)
    real_rel = "." if real == root else os.path.relpath(real, root).replace(os.sep, "/")
    for candidate in dict.fromkeys((normal, real_rel)):
        reason = protection(candidate, write=write, places=places)
        if reason is not None:
            raise _protected(normal, real_rel, reason, field=field, write=write)
        if _in_git_directory(root, candidate, write=write):
            raise _protected(normal, real_rel, "git_directory", field=field, write=write)
    return normal, real_rel


def read_refusal(
    places: Places,
    denied: Callable[[str], bool],
    rel: str,
    *,
    real_rel: str | None = None,
    links: int = 1,
) -> str | None:
    """Why no tool may read the workspace-relative ``rel`` (reached at ``real_rel`` when
    it is a link; ``links``: its hard-link count; ``denied``: whether ``[files] deny``
    names a path), or None: the decision :func:`locate` and the file tools take, for
    walkers that know the path is inside (``git``, ``private``, ``deny``, ``shared``).
    Raises nothing, stats nothing."""
    for candidate in (rel, real_rel or rel):
        reason = protection(candidate, write=False, places=places)
        if reason is not None:
            return reason
        if denied(candidate):
            return "deny"
    return "shared" if links > 1 else None
