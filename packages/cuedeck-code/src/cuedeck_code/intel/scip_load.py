"""Loading a SCIP index into the code graph: its edges replace the syntactic ones of the
files it indexed.

Each symbol the index defines in the workspace is matched to the graph's definition
at that place (the innermost one around the definition's line that has its name);
each reference to such a symbol becomes an edge from the definition it is written in,
labelled ``scip`` (``import`` when the index says so, ``call`` when the reference is
followed by ``(``, else ``reference``). A file the index holds is marked ``scip`` while
its content is the one the graph holds; when it changes, the next sync reads it
syntactically again. Symbols defined outside the workspace (libraries) make no edge.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from cuedeck_code.intel.scip_wire import DEFINITION, IMPORT, descriptor_name, read_index
from cuedeck_code.intel.store import COLUMN, RELATIONS

if TYPE_CHECKING:
    from pathlib import Path

    from cuedeck.workspace import Workspace
    from cuedeck_code.intel.scip_wire import Occurrence, ScipIndex


def load_index(workspace: Workspace, indexer: str, path: Path) -> dict[str, Any]:
    """Load the SCIP index at ``path`` (written by ``indexer``) into the workspace's
    graph; how many documents and edges it gave."""
    from cuedeck_code.intel.detached import build_lock

    intel = workspace.service("code_intel")
    store = intel.ready()
    index = read_index(path.read_bytes())
    # Under the build lock, as every writer of the graph: no sync of another process
    # writes between the names read here and the edges written.
    with build_lock(workspace.root):
        edges, files = scip_edges(workspace, store, index)
        _write(store, indexer, path, index, edges, files)
    intel.forget()  # the files' source changed on the graph's own connection
    return {"documents": len(files), "edges": len(edges)}


def _write(
    store: Any,
    indexer: str,
    path: Path,
    index: ScipIndex,
    edges: list[tuple[int, int, int, int]],
    files: list[tuple[int, str]],
) -> None:
    """Write the edges of ``index`` over those of the ``files`` it covers."""
    with store.transaction() as db:
        ids = [row[0] for row in files]
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            db.execute(
                f"DELETE FROM edges WHERE src IN (SELECT id FROM names WHERE file IN ({marks}))",
                chunk,
            )
            db.execute(f"UPDATE files SET source = 'scip' WHERE id IN ({marks})", chunk)
        db.executemany(
            "INSERT OR IGNORE INTO edges VALUES (?, ?, ?, ?, 1)",
            [(dst, src, position, relation) for src, dst, position, relation in edges],
        )
        db.execute(
            "INSERT OR REPLACE INTO scip VALUES (?, ?, ?, ?, ?, ?)",
            (
                indexer,
                str(path),
                time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                len(files),
                len(edges),
                f"{index.tool} {index.version}".strip(),
            ),
        )


def scip_edges(
    workspace: Workspace, store: Any, index: ScipIndex
) -> tuple[list[tuple[int, int, int, int]], list[tuple[int, str]]]:
    """The graph's edges from ``index`` and the ``(id, path)`` of the files it covers
    (those the graph holds, as they are now)."""
    held = {path: row for path, row in store.files().items()}
    by_file: dict[int, list[tuple[int, str, str, int, int]]] = {}
    for number, name, kind, file_id, line, end in store.query(
        "SELECT id, name, kind, file, line, end_line FROM names"
    ):
        short = name.rpartition(".")[2]
        by_file.setdefault(file_id, []).append(
            (number, name, short, line, end if kind != "module" else 1 << 30)
        )
    files: list[tuple[int, str]] = []
    definitions: dict[str, int] = {}
    for document in index.documents:
        row = held.get(document.path)
        if row is None:
            continue
        files.append((row[0], document.path))
        symbols = by_file.get(row[0], [])
        for occurrence in document.occurrences:
            if not occurrence.roles & DEFINITION or occurrence.symbol.startswith("local "):
                continue
            wanted = descriptor_name(occurrence.symbol)
            found = _innermost(symbols, occurrence.line + 1, wanted)
            if wanted and found is not None and found[2] == wanted:
                definitions.setdefault(occurrence.symbol, found[0])
    relation = {name: number for number, name in enumerate(RELATIONS)}
    edges: list[tuple[int, int, int, int]] = []
    for document in index.documents:
        row = held.get(document.path)
        if row is None:
            continue
        symbols = by_file.get(row[0], [])
        lines: list[str] | None = None
        for occurrence in document.occurrences:
            if occurrence.roles & DEFINITION:
                continue
            target = definitions.get(occurrence.symbol)
            if target is None:
                continue
            source = _innermost(symbols, occurrence.line + 1, None)
            if source is None:
                continue
            if occurrence.roles & IMPORT:
                kind = "import"
            else:
                if lines is None:
                    lines = _lines(workspace, document.path)
                kind = "call" if _called(lines, occurrence) else "reference"
            position = (occurrence.line + 1) * COLUMN + min(occurrence.column, COLUMN - 1)
            edges.append((source[0], target, position, relation[kind]))
    return edges, files


def _innermost(
    symbols: list[tuple[int, str, str, int, int]], line: int, name: str | None
) -> tuple[int, str, str, int, int] | None:
    """The smallest definition around ``line`` (named ``name``, when given, preferred)."""
    best = None
    for entry in symbols:
        if entry[3] <= line <= entry[4]:
            if name is not None and entry[2] != name:
                continue
            if best is None or entry[4] - entry[3] < best[4] - best[3]:
                best = entry
    if best is None and name is not None:
        return None
    return best


def _lines(workspace: Workspace, path: str) -> list[str]:
    try:
        return workspace.read_bytes(path).decode("utf-8", errors="replace").split("\n")
    except Exception:
        return []


def _called(lines: list[str], occurrence: Occurrence) -> bool:
    """Whether the code after the occurrence opens a call."""
    if occurrence.end_line >= len(lines):
        return False
    rest = str(lines[occurrence.end_line][occurrence.end_column :]).lstrip()
    return rest.startswith("(")
