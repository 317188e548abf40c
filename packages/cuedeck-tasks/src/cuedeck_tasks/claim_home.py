"""Where a workspace's claims live: one place every worktree of its repository sees.

Claims must outlive any one worktree's files and be shared by all of them, so they are
kept beside the repository's common git directory (what ``git rev-parse
--git-common-dir`` prints: the main ``.git`` folder, also for linked worktrees), in a
folder of CueDeck's own, ``<common dir>/cuedeck/claims.sqlite3``, which git neither reads
nor writes. A workspace in a subfolder of the repository is a ``scope`` of that file (its
path from the top of the working tree), so two workspaces of one repository never see
each other's claims. Outside git, claims live in the workspace's cache folder.

The repository is the one core's git runner finds by path
(:func:`cuedeck.system.git.find_repository`), and its common directory is read from the
``commondir`` file of a linked worktree's git directory: no git process runs on the way
to a claim.
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
    from cuedeck.system.git import find_repository

    real = os.path.realpath(root)
    repository = find_repository(real)
    if repository is None:
        return ClaimHome(Path(real) / CACHE_DIR / CLAIMS_FILE, "", None)
    common = common_dir(repository.git_dir)
    scope = os.path.relpath(real, repository.top).replace(os.sep, "/")
    return ClaimHome(
        Path(common) / GIT_FOLDER / CLAIMS_FILE, "" if scope == "." else scope, Path(common)
    )


def common_dir(git_dir: str) -> str:
    """A linked worktree's common git directory (its ``commondir``), else ``git_dir``."""
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as handle:
            named = handle.read().strip()
    except OSError:
        return git_dir
    return os.path.realpath(os.path.join(git_dir, named)) if named else git_dir
