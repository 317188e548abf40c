"""Reading files into the code graph's facts, in forked workers when there are many.

Each file read gives its facts (from the extractor of its language), the digests of its
definitions (:func:`.owners.owner_digests`: which of them a refresh may keep) and its
interface (:func:`.extract.interface`: what other files see of it), the last two made in
the worker that read it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from cuedeck_code.intel.owners import owner_digests
from cuedeck_code.intel.rows import file_size

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

    from cuedeck.hookspecs import GraphExtractor
    from cuedeck_code.intel.facts import Facts

log = logging.getLogger("cuedeck")
#: A file read: its path, facts, owner digests and interface (None: not read).
Read = tuple[str, "Facts | None", "dict[str, int] | None", "str | None"]


def read_facts(
    root: Path,
    paths: Sequence[str],
    languages: dict[str, str],
    every: frozenset[str],
    extractors: dict[str, GraphExtractor],
    progress: Callable[[int, int], None] | None,
    digests: dict[str, dict[str, int]],
    faces: dict[str, str],
) -> dict[str, Facts | None]:
    """The facts of ``paths`` (below ``root``), read in forked workers when there are many; their
    definitions' digests (:func:`.owners.owner_digests`) kept in ``digests``, their
    interfaces (:func:`.extract.interface`) in ``faces``, both made there too."""
    if not paths:
        return {}
    from cuedeck.system.parallel import map_chunks
    from cuedeck_code.intel.extract import interface

    def job(chunk: Sequence[str], tick: Callable[[int], None]) -> list[Read]:
        out: list[Read] = []
        for done, path in enumerate(chunk, start=1):
            extractor = extractors.get(languages.get(path, ""))
            found = None
            if extractor is not None:
                try:
                    found = extractor.facts(path, (root / path).read_bytes(), every)
                except (OSError, ValueError, RecursionError) as exc:
                    log.debug("code graph: %s not read: %s", path, exc)
            if found is None:
                out.append((path, None, None, None))
            else:
                out.append((path, found, owner_digests(found), interface(found)))
            tick(done)
        return out

    if len(paths) == 1:  # a refresh's one file: no workers to weigh
        return _fill(job(paths, _no_tick), digests, faces)
    size = sum(file_size(root / p) for p in paths[:200]) * max(1, len(paths) // 200)
    found: dict[str, Facts | None] = {}
    for chunk in map_chunks(
        job, list(paths), message="Reading the code graph", progress=progress, size=size
    ):
        found.update(_fill(chunk, digests, faces))
    return found


def _no_tick(done: int) -> None:
    """Progress of a refresh's one file: not told."""


def _fill(
    read: list[Read], digests: dict[str, dict[str, int]], faces: dict[str, str]
) -> dict[str, Facts | None]:
    """The facts of what was ``read``, its digests kept in ``digests``, its interfaces
    in ``faces``."""
    for path, _, digest, face in read:
        if digest is not None and face is not None:
            digests[path] = digest
            faces[path] = face
    return {path: found for path, found, _, _ in read}
