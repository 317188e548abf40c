"""The in-memory table's copy on disk, so that a new process need not read every row.

An uncompressed numpy archive of the table's columns and of its references resolved
(so a new process need not resolve them again), stamped with the store's id and the
version the table was in step with. Segment ids and references are ``\\n``-joined
UTF-8 blocks (ids hold no line ends), a tenth of what an array of strings takes.
"""

from __future__ import annotations

import contextlib
import gc
import io
import json
import os
import tempfile
from typing import TYPE_CHECKING, Any

import numpy as np

from cuedeck_memory.table import Links, SegmentTable

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path


def dump(table: SegmentTable, store_id: str) -> Callable[[Path], None]:
    """``table`` as it is now, as a function that writes the copy at a path: the columns
    are copied here (under the table's lock), the writing left to whoever calls it."""
    with table.lock:
        alive = np.flatnonzero(table.alive)
        top = int(alive[-1]) + 1 if len(alive) else 0
        # Prefixed: numpy's savez has an argument named "file".
        arrays = {f"c_{name}": getattr(table, name)[:top].copy() for name, _ in table.NUMERIC}
        ids = table.ids[:top].tolist()
        links = table.links()  # a new process starts from them, not from every reference
        arrays["link_sources"], arrays["link_targets"] = links.sources, links.targets
        header = {
            "store_id": store_id,
            "version": table.version,
            "rows": top,
            "projects": list(table.projects.strings),
            "kinds": list(table.kinds.strings),
            "values": list(table.values.strings),
            "tagsets": list(table.tagsets.strings),
            "runs": {str(code): runs for code, runs in table.runs.items()},
            "cards": links.cards,
            "unresolved": sorted(table.unresolved),
        }
        refs = list(table.refs.items())

    def write(path: Path) -> None:
        arrays["ids"] = _joined(["" if i is None else i for i in ids])
        arrays["ref_rows"] = np.array([r for r, _ in refs], np.int64)
        arrays["ref_counts"] = np.array([len(named) for _, named in refs], np.int64)
        arrays["refs"] = _joined([ref for _, named in refs for ref in named])
        arrays["header"] = np.array(json.dumps(header))
        # Streamed into a file beside the copy, then renamed over it: the archive is
        # never whole in memory (10 MB at 100,000 rows). A rebuildable cache, so neither
        # the write path's lock nor an fsync: a torn copy fails to load and the table is
        # read from the store instead.
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=".memory-table-", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                np.savez(handle, **arrays)
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
            raise

    return write


def load(data: bytes, store_id: str, newest: int) -> SegmentTable | None:
    """A table from :func:`dump`'s bytes, or None when they are of another store, ahead
    of it (``newest``: its version), or unreadable (an older CueDeck's copy included)."""
    # Some 200,000 objects are made here, none in a cycle: the cyclic collector would
    # walk the whole heap several times over for nothing.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _load(data, store_id, newest)
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError):
        return None
    finally:
        if collecting:
            gc.enable()


def _load(data: bytes, store_id: str, newest: int) -> SegmentTable | None:
    with np.load(io.BytesIO(data), allow_pickle=False) as archive:
        header = json.loads(str(archive["header"]))
        if header["store_id"] != store_id or header["version"] > newest:
            return None
        top = int(header["rows"])
        table = SegmentTable()
        table.grow(top)
        for name, dtype in SegmentTable.NUMERIC:
            getattr(table, name)[:top] = archive[f"c_{name}"].astype(dtype, copy=False)
        ids = _split(archive["ids"], top)
        ref_rows = archive["ref_rows"].tolist()
        ends = np.cumsum(archive["ref_counts"]).tolist()
        named = _split(archive["refs"], ends[-1] if ends else 0)
        sources, targets = archive["link_sources"], archive["link_targets"]
    if ids is None or named is None:
        return None
    for interned, strings in (
        (table.projects, header["projects"]),
        (table.kinds, header["kinds"]),
        (table.values, header["values"]),
        (table.tagsets, header["tagsets"]),
    ):
        interned.strings = list(strings)
        interned.codes = {value: code for code, value in enumerate(strings)}
    starts = [0, *ends[:-1]] if ends else []
    table.refs = {row: tuple(named[a:b]) for row, a, b in zip(ref_rows, starts, ends, strict=True)}
    table.runs = {int(k): int(v) for k, v in header["runs"].items()}
    live = np.flatnonzero(table.alive[:top])
    table.ids[live] = np.array(ids, dtype=object)[live]
    table.version = int(header["version"])
    table.took_links(
        Links(sources, targets, [(int(r), str(c)) for r, c in header["cards"]]),
        {(int(p), str(i)) for p, i in header["unresolved"]},
    )
    return table


def _joined(strings: list[str]) -> np.ndarray[Any, Any]:
    """Strings as one UTF-8 block, a line each (none of them holds a line end)."""
    return np.frombuffer("\n".join(strings).encode("utf-8"), np.uint8)


def _split(block: np.ndarray[Any, Any], count: int) -> list[str] | None:
    """The ``count`` strings of a :func:`_joined` block, or None when it holds others."""
    found = block.tobytes().decode("utf-8").split("\n") if count else []
    return found if len(found) == count else None
