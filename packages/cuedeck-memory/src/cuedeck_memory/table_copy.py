"""The in-memory table's copy on disk, so that a new process need not read every row.

An uncompressed numpy archive of the table's columns, stamped with the store's id and
the version the table was in step with. Segment ids are one ``\\n``-joined UTF-8 block
(ids hold no line ends), a tenth of what an array of strings takes.
"""

from __future__ import annotations

import io
import json
from typing import TYPE_CHECKING

import numpy as np

from cuedeck_memory.table import SegmentTable

if TYPE_CHECKING:
    from collections.abc import Callable


def dump(table: SegmentTable, store_id: str) -> Callable[[], bytes]:
    """``table`` as it is now, as a function that makes the copy's bytes: the columns
    are copied here (under the table's lock), the encoding left to whoever calls it."""
    with table.lock:
        alive = np.flatnonzero(table.alive)
        top = int(alive[-1]) + 1 if len(alive) else 0
        # Prefixed: numpy's savez has an argument named "file".
        arrays = {f"c_{name}": getattr(table, name)[:top].copy() for name, _ in table.NUMERIC}
        ids = table.ids[:top].tolist()
        header = {
            "store_id": store_id,
            "version": table.version,
            "rows": top,
            "projects": list(table.projects.strings),
            "kinds": list(table.kinds.strings),
            "values": list(table.values.strings),
            "tagsets": list(table.tagsets.strings),
            "runs": {str(code): runs for code, runs in table.runs.items()},
        }
        refs = dict(table.refs)

    def encode() -> bytes:
        joined = "\n".join("" if i is None else i for i in ids).encode("utf-8")
        arrays["ids"] = np.frombuffer(joined, np.uint8)
        header["refs"] = {str(k): v for k, v in refs.items()}
        arrays["header"] = np.array(json.dumps(header))
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        return buffer.getvalue()

    return encode


def load(data: bytes, store_id: str, newest: int) -> SegmentTable | None:
    """A table from :func:`dump`'s bytes, or None when they are of another store, ahead
    of it (``newest``: its version), or unreadable (an older CueDeck's copy included)."""
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as archive:
            header = json.loads(str(archive["header"]))
            if header["store_id"] != store_id or header["version"] > newest:
                return None
            top = int(header["rows"])
            table = SegmentTable()
            table.grow(top)
            for name, dtype in SegmentTable.NUMERIC:
                getattr(table, name)[:top] = archive[f"c_{name}"].astype(dtype, copy=False)
            ids = archive["ids"].tobytes().decode("utf-8").split("\n") if top else []
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError):
        return None
    if len(ids) != top:
        return None
    for interned, strings in (
        (table.projects, header["projects"]),
        (table.kinds, header["kinds"]),
        (table.values, header["values"]),
        (table.tagsets, header["tagsets"]),
    ):
        interned.strings = list(strings)
        interned.codes = {value: code for code, value in enumerate(strings)}
    table.refs = {int(k): tuple(v) for k, v in header["refs"].items()}
    table.runs = {int(k): int(v) for k, v in header["runs"].items()}
    live = np.flatnonzero(table.alive[:top])
    for code in np.unique(table.project[live]).tolist():
        rows = live[table.project[live] == code].tolist()
        table.by_id[code] = {ids[r]: r for r in rows}
        table.ids[rows] = [ids[r] for r in rows]
    table.version = int(header["version"])
    return table
