"""How destructive git tools name what they would destroy.

The two-step flow itself is core's (:func:`cuedeck.serving.confirmation.confirm`): the first
call answers ``requires_confirmation`` with a token and a warning, the second call, with
that token, acts; the token is bound to the tool, every argument of the call, what they
resolve to and a digest of the repository's state
(:func:`~cuedeck_git.status.state_digest`). What is here helps the warning say it, and
refuses what no git tool may write: CueDeck's control files and private folders.
"""

from __future__ import annotations

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


def refuse_protected(operation: str, paths: Iterable[str], places: Places) -> None:
    """Protected (1013) when ``operation`` would write any of ``paths`` (repository- or
    workspace-relative) that no tool may write by ``places`` (the workspace's: core's and
    its plugins'): a ``.cuedeck/config.toml``, state or cache, in history or on another
    branch."""
    hit = sorted({path for path in paths if protection(path, write=True, places=places)})
    if hit:
        raise Protected(
            f"{operation} would write {listing(hit)}: CueDeck's control files are never "
            "written by a tool, whatever branch or commit brings them",
            path=hit[0],
            paths=hit,
            reason=protection(hit[0], write=True, places=places),
            help="run it in a shell, where you see what changes",
        )
