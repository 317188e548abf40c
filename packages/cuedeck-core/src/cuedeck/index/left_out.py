"""What the walk leaves out with a warning, and why: links leaving the workspace or into
protected places, hard-linked, unreadable and binary files (warnings for ``cue doctor``,
never errors for the command that walked)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from cuedeck.layout import CORE_PLACES, Places, protection
from cuedeck.models import Problem

if TYPE_CHECKING:
    from pathlib import Path


#: Problem code of a path left out of the index (NotIndexed), and of one that cannot be
#: read (PermissionDenied); see docs/errors.md.
NOT_INDEXED = 1011


UNREADABLE = 1010


#: Problem code of a file left out for its hard links (SharedFile).
SHARED = 1014


def link_problem(root: Path, path: str, child: str, places: Places = CORE_PLACES) -> Problem | None:
    """Why the link at ``path`` is left out (its real path leaves the workspace, or is
    inside ``.git`` or CueDeck's private files), or None when it may be followed."""
    real, base = os.path.realpath(path), os.path.realpath(root)
    if not (real == base or real.startswith(base.rstrip(os.sep) + os.sep)):
        return excluded_link(child, real)
    rel = os.path.relpath(real, base).replace(os.sep, "/")
    if protection(rel, write=False, places=places) is not None:
        return Problem(
            "warning",
            NOT_INDEXED,
            child,
            None,
            f"not indexed: a symlink to {rel}, which no tool reads (.git or CueDeck's "
            "private files)",
            "remove the link",
        )
    return None


def shared_file(child: str) -> Problem:
    """The warning for a file with several hard links (its content may live outside)."""
    return Problem(
        "warning",
        SHARED,
        child,
        None,
        "not indexed: the file has several hard links, so its content may be a file "
        "outside the workspace",
        "replace the hard link with a copy",
    )


def excluded_link(child: str, target: str) -> Problem:
    """The warning for a symlink whose real path leaves the workspace."""
    return Problem(
        "warning",
        NOT_INDEXED,
        child,
        None,
        f"not indexed: a symlink to {target}, outside the workspace",
        "CueDeck reads only files whose real path is inside the workspace; "
        "copy the file in, or remove the link",
    )


def unreadable(child: str, error: OSError) -> Problem:
    """The warning for a folder or file that cannot be read."""
    return Problem(
        "warning",
        UNREADABLE,
        child or ".",
        None,
        f"not indexed: cannot read it ({error.strerror or error})",
        "check its permissions",
    )


def binary(data: bytes) -> bool:
    """Whether ``data`` is not text: a NUL byte, or mostly bytes that are not UTF-8."""
    if b"\x00" in data:
        return True
    sample = data[:65536]
    text = sample.decode("utf-8", errors="replace")
    return len(sample) > 0 and text.count("\ufffd") > len(text) * 0.3


def binary_file(child: str) -> Problem:
    """The warning for a file named like text (markdown, say) that holds binary data."""
    return Problem(
        "warning",
        NOT_INDEXED,
        child,
        None,
        "not indexed: binary content (NUL bytes or mostly undecodable) in a text file",
        "rename it if it is not text, or re-save it as UTF-8",
    )


#: Words of each warning above and the reason ``cue index`` counts it under.
_LEFT_OUT = (
    ("outside the workspace", "outside the workspace"),
    ("which no tool reads", "protected"),
    ("binary content", "binary"),
    ("failed on it", "parser failed"),
)


def left_out_reason(problem: Problem) -> str:
    """The reason a file left out with a warning is counted under (``binary``...)."""
    if problem.code == SHARED:
        return "hard-linked"
    if problem.code == UNREADABLE:
        return "unreadable"
    return next((reason for words, reason in _LEFT_OUT if words in problem.message), "left out")
