"""How destructive git tools name what they would destroy.

The two-step flow itself is core's (:func:`cuedeck.serving.confirmation.confirm`): the first
call answers ``requires_confirmation`` with a token and a warning, the second call, with
that token, acts; the token is bound to the tool, every argument of the call, what they
resolve to and a digest of the repository's state
(:func:`~cuedeck_git.status.state_digest`). What is here helps the warning say it, and
refuses what no git tool may write: CueDeck's control files and private folders.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from cuedeck.errors import Protected
from cuedeck.layout import protection

if TYPE_CHECKING:
    from collections.abc import Iterable

    from cuedeck.layout import Places


def listing(items: list[str], *, limit: int = 10) -> str:
    """``a, b, c`` for at most ``limit`` items, then ``and N more``."""
    shown = ", ".join(items[:limit])
    return f"{shown} and {len(items) - limit} more" if len(items) > limit else shown


def refuse_protected(
    operation: str, paths: Iterable[str], places: Places, *, top: str | os.PathLike[str]
) -> None:
    """Protected (1013) when ``operation`` would write any of ``paths`` (relative to the
    folder ``top``: the repository's or the workspace's) that no tool may write by
    ``places`` (the workspace's: core's and its plugins'): a ``.cuedeck/config.toml``,
    state or cache, in history or on another branch, or the files of a git directory
    (``HEAD``, ``objects/``, ``refs/``)."""
    from cuedeck.system.git import git_directories_written

    paths = list(paths)
    hit = sorted({path for path in paths if protection(path, write=True, places=places)})
    reason = protection(hit[0], write=True, places=places) if hit else None
    if not hit:
        hit = sorted(git_directories_written(os.fspath(top), paths))
        reason = "git"
    if hit:
        raise Protected(
            f"{operation} would write {listing(hit)}: CueDeck's control files and git's own "
            "files are never written by a tool, whatever branch or commit brings them",
            path=hit[0],
            paths=hit,
            reason=reason,
            help="run it in a shell, where you see what changes",
        )
