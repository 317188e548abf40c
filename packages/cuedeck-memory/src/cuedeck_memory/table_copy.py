"""The in-memory table's copy on disk, so that a new process need not read every row.

One file: a line naming the format, the length of a JSON header, the header (the
store's id and the version the table was in step with, its interned strings, GC runs,
cards and unresolved references, and where each array lies), then the arrays' raw
bytes: the columns, the references resolved to links (a new process need not resolve
them again), segment ids and references as blocks of lines (ids hold no line ends).
Reading it is a read of the file and a copy of each column; ids become strings when
first needed.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import tempfile
from typing import TYPE_CHECKING, Any

import numpy as np

from cuedeck_memory.table import Links, SegmentTable

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

#: The first line of a copy: its format (an older copy is not read, only replaced).
MAGIC = b"cuedeck-memory-table 2\n"
_ALIGN = 8


def dump(table: SegmentTable, store_id: str) -> Callable[[Path], None]:
    """``table`` as it is now, as a function that writes the copy at a path: the columns
    are copied here (under the table's lock), the writing left to whoever calls it."""
    with table.lock:
        alive = np.flatnonzero(table.alive)
        top = int(alive[-1]) + 1 if len(alive) else 0
        arrays = {f"c_{name}": getattr(table, name)[:top].copy() for name, _ in table.NUMERIC}
        ids = table.ids[:top].tolist()
        links = table.links()  # a new process starts from them, not from every reference
        arrays["link_sources"], arrays["link_targets"] = links.sources, links.targets
        header: dict[str, Any] = {
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
        arrays["ids"] = _lines(["" if i is None else i for i in ids])
        arrays["ref_rows"] = np.array([r for r, _ in refs], np.int64)
        arrays["ref_counts"] = np.array([len(named) for _, named in refs], np.int64)
        arrays["refs"] = _lines([ref for _, named in refs for ref in named])
        placed: dict[str, list[Any]] = {}
        offset = 0
        for name, array in arrays.items():
            placed[name] = [array.dtype.str, offset, len(array)]
            offset += -(-array.nbytes // _ALIGN) * _ALIGN
        header["arrays"] = placed
        encoded = json.dumps(header).encode("utf-8")
        # Written into a file beside the copy, then renamed over it: a rebuildable cache,
        # so neither the write path's lock nor an fsync (a torn copy fails to load and
        # the table is read from the store instead).
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=".memory-table-", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(MAGIC + len(encoded).to_bytes(8, "little") + encoded)
                handle.write(b"\0" * (-handle.tell() % _ALIGN))
                for array in arrays.values():
                    np.ascontiguousarray(array).tofile(handle)
                    handle.write(b"\0" * (-array.nbytes % _ALIGN))
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
            raise

    return write


def load(data: bytes, store_id: str, newest: int) -> SegmentTable | None:
    """A table from a copy's bytes, or None when they are of another store, ahead of it
    (``newest``: its version), or unreadable (an older CueDeck's copy included)."""
    # Tens of thousands of objects are made here, none in a cycle: the cyclic collector
    # would walk the whole heap several times over for nothing.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _load(data, store_id, newest)
    except (ValueError, KeyError, TypeError, IndexError, UnicodeDecodeError):
        return None
    finally:
        if collecting:
            gc.enable()


def _load(data: bytes, store_id: str, newest: int) -> SegmentTable | None:
    if not data.startswith(MAGIC):
        return None
    start = len(MAGIC) + 8
    size = int.from_bytes(data[len(MAGIC) : start], "little")
    header = json.loads(data[start : start + size])
    if header["store_id"] != store_id or header["version"] > newest:
        return None
    base = start + size + (-(start + size) % _ALIGN)

    def array(name: str) -> np.ndarray[Any, Any]:
        dtype, offset, count = header["arrays"][name]
        return np.frombuffer(data, np.dtype(dtype), count, base + offset)

    def block(name: str) -> bytes:
        _, offset, count = header["arrays"][name]
        return data[base + offset : base + offset + count]

    top = int(header["rows"])
    table = SegmentTable()
    table.grow(top)
    for name, dtype in SegmentTable.NUMERIC:
        getattr(table, name)[:top] = array(f"c_{name}").astype(dtype, copy=False)
    table.took_id_block(block("ids"), top)
    for interned, strings in (
        (table.projects, header["projects"]),
        (table.kinds, header["kinds"]),
        (table.values, header["values"]),
        (table.tagsets, header["tagsets"]),
    ):
        interned.strings = list(strings)
        interned.codes = {value: code for code, value in enumerate(strings)}
    ends = np.cumsum(array("ref_counts")).tolist()
    named = block("refs").decode("utf-8").split("\n") if ends and ends[-1] else []
    if len(named) != (ends[-1] if ends else 0):
        return None
    table.refs = {
        row: tuple(named[a:b])
        for row, a, b in zip(array("ref_rows").tolist(), [0, *ends[:-1]], ends, strict=True)
    }
    table.runs = {int(k): int(v) for k, v in header["runs"].items()}
    table.version = int(header["version"])
    table.took_links(
        Links(
            array("link_sources").copy(),
            array("link_targets").copy(),
            [(int(r), str(c)) for r, c in header["cards"]],
        ),
        {(int(p), str(i)) for p, i in header["unresolved"]},
    )
    return table


def _lines(strings: list[str]) -> np.ndarray[Any, Any]:
    """Strings as one UTF-8 block, a line each (none of them holds a line end)."""
    return np.frombuffer("\n".join(strings).encode("utf-8"), np.uint8)
