"""The files a claim names: how they are written, and when two of them overlap.

A claim names workspace-relative files or folders (``src/auth``: everything under it),
or symbols in a file (``src/cart.py#Cart.add``, ``code/src/cart.py#Cart.add``). Writes
are guarded per file: a claim on one symbol of a file holds the whole file against other
agents' writes, and two claims on one file overlap whatever their symbols.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuedeck.errors import InvalidInput
from cuedeck.plugins.claims import WHOLE_WORKSPACE

if TYPE_CHECKING:
    from collections.abc import Iterable

    from cuedeck.workspace import Workspace

#: The most paths one claim may name.
MAX_PATHS = 200


def claim_path(workspace: Workspace, spec: str, *, field: str = "paths") -> str:
    """``spec`` as a claim keeps it: the workspace-relative path, ``#Symbol`` kept; a path
    outside the workspace or one no tool may write is refused (1004, 1013)."""
    text = spec.strip().removeprefix("@").removeprefix("code/")
    where, hash_sign, symbol = text.partition("#")
    if not where.strip():
        raise InvalidInput(f"{spec!r} names no file", field=field)
    if hash_sign and not symbol.strip():
        raise InvalidInput(f"{spec!r}: a '#' must be followed by a symbol", field=field)
    rel = workspace.relative_path(where, field=field, write=True)
    return f"{rel}#{symbol.strip()}" if hash_sign else rel


def claim_paths(workspace: Workspace, specs: Iterable[str]) -> tuple[str, ...]:
    """Every spec as :func:`claim_path` keeps it, each once, in order."""
    found = list(dict.fromkeys(claim_path(workspace, spec) for spec in specs))
    if len(found) > MAX_PATHS:
        raise InvalidInput(f"a claim names at most {MAX_PATHS} paths", field="paths")
    return tuple(found)


def file_of(path: str) -> str:
    """The file or folder part of a claim path (``src/cart.py`` of ``src/cart.py#Cart``)."""
    return path.partition("#")[0]


def overlaps(first: str, second: str) -> bool:
    """Whether two paths (claim paths or written paths) reach a common file: the same
    file, or one a folder holding the other; ``"."`` holds everything."""
    a, b = file_of(first), file_of(second)
    if WHOLE_WORKSPACE in (a, b) or a == b:
        return True
    return a.startswith(b + "/") or b.startswith(a + "/")


def overlapping(held: Iterable[str], wanted: Iterable[str]) -> list[str]:
    """The paths of ``held`` that overlap any of ``wanted``, in order."""
    wanted = list(wanted)
    return [path for path in held if any(overlaps(path, other) for other in wanted)]
