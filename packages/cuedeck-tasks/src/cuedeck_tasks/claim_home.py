"""Where a workspace's claims live: one place every worktree of its repository sees.

Claims must outlive any one worktree's files and be shared by all of them, so they are
kept beside the repository's common git directory (what ``git rev-parse
--git-common-dir`` prints: the main ``.git`` folder, also for linked worktrees), in a
folder of CueDeck's own, ``<common dir>/cuedeck/claims.sqlite3``, which git neither reads
nor writes. A workspace in a subfolder of the repository is a ``scope`` of that file (its
path from the top of the working tree), so two workspaces of one repository never see
each other's claims. Outside git, claims live in the workspace's cache folder.

The repository is found by reading files, as git does (``.git`` is a folder, or a file
``gitdir: PATH`` whose folder holds ``commondir`` for a linked worktree): no git process
runs on the way to a claim.
"""

from __future__ import annotations

import os
from pathlib import Path

import attrs

from cuedeck.layout import CACHE_DIR

#: CueDeck's folder in the common git directory, and the claims file in it.
GIT_FOLDER = "cuedeck"
CLAIMS_FILE = "claims.sqlite3"


@attrs.frozen
class ClaimHome:
    """The claims file of a workspace and its scope in it (``""`` at the top)."""

    path: Path
    scope: str
    #: The common git directory, or None outside git.
    common_dir: Path | None


def claim_home(root: Path) -> ClaimHome:
    """Where the claims of the workspace at ``root`` live (see the module docstring)."""
    real = os.path.realpath(root)
    here = real
    while True:
        git_dir = _git_dir(here)
        if git_dir is not None:
            common = _common_dir(git_dir)
            scope = os.path.relpath(real, here).replace(os.sep, "/")
            return ClaimHome(
                Path(common) / GIT_FOLDER / CLAIMS_FILE, "" if scope == "." else scope, Path(common)
            )
        parent = os.path.dirname(here)
        if parent == here:
            return ClaimHome(Path(real) / CACHE_DIR / CLAIMS_FILE, "", None)
        here = parent


def _git_dir(folder: str) -> str | None:
    """The git directory of the working tree at ``folder``, or None when it has none."""
    entry = os.path.join(folder, ".git")
    if os.path.isdir(entry):
        return os.path.realpath(entry) if _is_git_dir(entry) else None
    try:
        with open(entry, encoding="utf-8", errors="replace") as handle:
            line = handle.readline(4096).strip()
    except OSError:
        return None
    if not line.startswith("gitdir:"):
        return None
    target = os.path.realpath(os.path.join(folder, line[len("gitdir:") :].strip()))
    return target if _is_git_dir(target) else None


def _is_git_dir(folder: str) -> bool:
    return os.path.isfile(os.path.join(folder, "HEAD"))


def _common_dir(git_dir: str) -> str:
    """A linked worktree's ``commondir`` (relative to its git directory), else itself."""
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as handle:
            named = handle.read().strip()
    except OSError:
        return git_dir
    return os.path.realpath(os.path.join(git_dir, named)) if named else git_dir
