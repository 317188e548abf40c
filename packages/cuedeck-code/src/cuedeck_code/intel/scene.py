"""The code graph in scenes and maps.

:func:`graph_neighbours` is a scene source (``register_scene_sources``, switched by
``[code] scene_graph``): for the definitions a card cites, their callers and callees,
and for the frames of a traceback in the card, the callers of each frame's
definition; each an item with its reason as its role in the manifest (``caller of
Cart.add``). :func:`call_rank` ranks definitions by the call graph (a random walk
along the edges, towards what is called), which ``repo_map`` uses when it exists.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from cuedeck.models import SceneExtra

if TYPE_CHECKING:
    from collections.abc import Iterable

    from cuedeck.workspace import Workspace
    from cuedeck_code.intel.queries import Graph, Symbol

#: Callers (and callees) of one cited definition, at most.
PER_SYMBOL = 3
#: Items this source adds to one scene, at most.
MOST = 8
#: Frames of a traceback whose callers are added.
FRAMES = 3
#: Longest text of one item, in lines.
LINES = 60
#: Where the items come among the scene's levels: after the card's direct and indirect
#: references, before the ranked related code (22).
PRIORITY = 23


def graph_neighbours(workspace: Workspace, card_id: str) -> Iterable[SceneExtra]:
    """Scene source: callers and callees of the card's cited code, callers of its
    traceback's frames (see the module docstring)."""
    from cuedeck.scene import find_card
    from cuedeck.scene.related import card_query
    from cuedeck_code.frames import frames, paths_by_name, resolve
    from cuedeck_code.intel.queries import CHAIN_RELATIONS, Graph

    card = find_card(workspace, card_id)
    query = card_query(workspace, card)
    graph = Graph(workspace.service("code_intel").ready())
    cited: list[Symbol] = []
    for path, anchor in query.cited:
        if anchor:
            cited.extend(graph.find(f"{path}#{anchor}", exact=True)[:1])
    wanted: list[tuple[Symbol, str]] = []  # (symbol, reason)
    taken = {s.id for s in cited}
    for symbol in cited:
        callers = graph.neighbours({symbol.id}, incoming=True, relations=CHAIN_RELATIONS)
        callees = graph.neighbours({symbol.id}, incoming=False, relations=CHAIN_RELATIONS)
        for ids, reason in ((callers, "caller"), (callees, "callee")):
            found = graph.symbols(sorted(ids.get(symbol.id, set())))
            for other in sorted(found.values(), key=lambda s: (s.kind == "module", s.path, s.line))[
                :PER_SYMBOL
            ]:
                if other.id not in taken:
                    taken.add(other.id)
                    wanted.append((other, f"{reason} of {symbol.name}"))
    paths = graph.paths()
    by_name = paths_by_name(sorted(paths))
    files = {p: number for number, p in enumerate(sorted(paths))}
    for frame in frames(f"{query.stack}\n{query.text}")[:FRAMES]:
        where = resolve(frame, files, by_name)
        if where is None:
            continue
        inside = _innermost(graph, where, frame.line)
        if inside is None:
            continue
        callers = graph.neighbours({inside.id}, incoming=True, relations=CHAIN_RELATIONS)
        found = graph.symbols(sorted(callers.get(inside.id, set())))
        for other in sorted(found.values(), key=lambda s: (s.path, s.line))[:PER_SYMBOL]:
            if other.id not in taken:
                taken.add(other.id)
                wanted.append((other, f"caller of frame {inside.name or where}"))
    return [_extra(workspace, symbol, reason) for symbol, reason in wanted[:MOST]]


def _innermost(graph: Graph, path: str, line: int) -> Symbol | None:
    rows = graph.store.query(
        "SELECT n.id FROM names n JOIN files f ON f.id = n.file WHERE f.path = ? AND "
        "n.line <= ? AND n.end_line >= ? AND n.kind IN ('function', 'method') "
        "ORDER BY n.end_line - n.line LIMIT 1",
        (path, line, line),
    )
    return graph.symbols([rows[0][0]]).get(rows[0][0]) if rows else None


def _extra(workspace: Workspace, symbol: Symbol, reason: str) -> SceneExtra:
    from cuedeck_code.languages import language_of

    try:
        text = workspace.read_bytes(symbol.path).decode("utf-8", errors="replace")
    except Exception:
        text = ""
    lines = text.split("\n")[symbol.line - 1 : symbol.end_line]
    if symbol.kind == "module":
        lines = lines[:0]
    cut = len(lines) > LINES
    body = "\n".join(lines[:LINES]) + ("\n..." if cut else "")
    language = language_of(symbol.path)
    fence = "```"
    while fence in body:
        fence += "`"
    shown = f"{fence}{language.name if language else ''}\n{body}\n{fence}"
    digest = hashlib.sha256(shown.encode()).hexdigest()
    name = symbol.name or symbol.path
    return SceneExtra(
        path=f"{symbol.path}#{name}",
        title=f"{symbol.path}#{name} · L{symbol.line}-{symbol.end_line} · {reason}",
        text=shown,
        sha256=digest,
        priority=PRIORITY,
        role=reason,
    )


def call_rank(workspace: Workspace) -> dict[tuple[str, str], float]:
    """``(path, name)`` -> share of a random walk along the call graph's edges (damping
    0.85), towards what is called; empty when the graph has no edge."""
    import numpy as np

    store = workspace.service("code_intel").ready()
    edges = store.query("SELECT src, dst FROM edges")
    if not edges:
        return {}
    rows = store.query("SELECT n.id, f.path, n.name FROM names n JOIN files f ON f.id = n.file")
    number = {row[0]: position for position, row in enumerate(rows)}
    pairs = np.array([(number[s], number[d]) for s, d in edges if s in number and d in number])
    if not len(pairs):
        return {}
    size = len(rows)
    out = np.bincount(pairs[:, 0], minlength=size).astype(np.float64)
    rank = np.full(size, 1.0 / size)
    for _ in range(30):
        share = rank[pairs[:, 0]] / out[pairs[:, 0]]
        moved = np.bincount(pairs[:, 1], weights=share, minlength=size)
        lost = rank[out == 0].sum()
        rank = 0.15 / size + 0.85 * (moved + lost / size)
    top = float(rank.max()) or 1.0
    return {(row[1], row[2]): float(rank[position] / top) for position, row in enumerate(rows)}
