"""The code-intelligence tools, under the code-indexer specification's names.

``scip_definition``, ``scip_references``, ``scip_dependencies``, ``scip_dependents``,
``scip_impact`` and ``scip_callchain`` answer from the code graph (:mod:`.service`):
SCIP edges where an indexer ran on the file as it is, syntactic ones elsewhere; each
result says which (``source``). Every reply has ``text``, one compact line per result
for a model (``module/Class#method() (path:line)``), beside the structured results for
programs. :mod:`.overview` has the rest (context, call graph, status, generate).
"""

# The tools' annotations are read at run time (their schemas): imported, not type-only.
# ruff: noqa: TC001

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from cuedeck.errors import FileNotFound
from cuedeck.watch.reflects import reflects
from cuedeck_code.intel.shapes import (
    Affected,
    AffectedFile,
    CallChains,
    Chain,
    Definitions,
    Exact,
    Impact,
    Limit,
    Location,
    Offset,
    References,
    ReferenceSite,
    Related,
    RelatedSymbols,
    Step,
    SymbolName,
)
from cuedeck_code.intel.store import RELATIONS

if TYPE_CHECKING:
    import pydantic

    from cuedeck.workspace import Workspace
    from cuedeck_code.intel.queries import Graph, Symbol
else:
    from cuedeck.plugins.tools import lazy_pydantic as pydantic


def _graph(workspace: Workspace) -> Graph:
    from cuedeck_code.intel.queries import Graph

    return Graph(workspace.service("code_intel").ready())


def _matches(graph: Graph, symbol: str, exact: bool) -> list[Symbol]:
    found = graph.find(symbol, exact=exact)
    if not found:
        near = graph.find(symbol.rpartition(".")[2][:4], exact=False) if len(symbol) > 3 else []
        raise FileNotFound(
            f"no definition named {symbol!r} in the code graph",
            symbol=symbol,
            suggestions=[s.display for s in near[:5]],
            help="scip_definition with exact=false finds names holding it; "
            "scip_status says what the graph holds",
        )
    if exact:
        return found
    named = [s for s in found if s.name == symbol.strip() or s.name.endswith("." + symbol.strip())]
    return named or found


def _page(total: int, offset: int, shown: int) -> tuple[bool, int | None]:
    more = offset + shown < total
    return more, offset + shown if more else None


def scip_definition(
    workspace: Workspace,
    symbol: SymbolName,
    exact: Exact = False,
    limit: Limit = 20,
    offset: Offset = 0,
) -> Definitions:
    """Find where a symbol (class, function, method) is defined, from the code graph.

    A plain name matches the definitions of that name, else (exact=false) the names
    holding it; each result is a symbol, its file and lines.
    """
    graph = _graph(workspace)
    found = graph.find(symbol, exact=exact)
    page = found[offset : offset + limit]
    more, after = _page(len(found), offset, len(page))
    results: list[Location] = [_location(s) for s in page]
    lines = [f"{s.kind} {s.compact()}" for s in page] or [f"no definition named {symbol!r}"]
    return {
        "symbol": symbol,
        "total_results": len(found),
        "results": results,
        "has_more": more,
        "next_offset": after,
        "text": "\n".join(lines),
        "reflects": reflects(workspace),
    }


def scip_references(
    workspace: Workspace,
    symbol: SymbolName,
    exact: Exact = False,
    limit: Limit = 100,
    offset: Offset = 0,
) -> References:
    """Find every place a symbol is used: calls, imports, type uses, subclasses.

    Each result is a file, line (1-based) and column (0-based, in UTF-16 code units as
    SCIP and editors count them), how it is used (relationship), the line's code
    (context) and the symbol it is written in (from_symbol).
    """
    graph = _graph(workspace)
    targets = _matches(graph, symbol, exact)
    edges = graph.references([t.id for t in targets])
    origins = graph.symbols([e[0] for e in edges])
    edges.sort(
        key=lambda e: (
            e[0] not in origins,
            origins[e[0]].path if e[0] in origins else "",
            e[2],
            e[3],
        )
    )
    page = edges[offset : offset + limit]
    more, after = _page(len(edges), offset, len(page))
    symbols = graph.symbols([e[0] for e in page] + [t.id for t in targets])
    lines_of = _Lines(workspace)
    results: list[ReferenceSite] = []
    text = []
    for src, dst, line, column, relation, source in page:
        origin, target = symbols.get(src), symbols.get(dst)
        if origin is None or target is None:
            continue
        context = lines_of.line(origin.path, line)
        results.append(
            {
                "symbol": target.display,
                "file_path": origin.path,
                "line": line,
                "column": column,
                "kind": "reference",
                "relationship": RELATIONS[relation],
                "context": context,
                "from_symbol": origin.display,
                "source": source,
            }
        )
        text.append(
            f"{origin.path}:{line}:{column} {RELATIONS[relation]} in {origin.display}: {context}"
        )
    return {
        "symbol": symbol,
        "matched": list(dict.fromkeys(t.display for t in targets)),  # overloads: one each
        "total_results": len(edges),
        "results": results,
        "has_more": more,
        "next_offset": after,
        "text": "\n".join(text) or f"no reference to {symbol!r}",
        "reflects": reflects(workspace),
    }


def scip_dependencies(
    workspace: Workspace,
    symbol: SymbolName,
    depth: Annotated[int, pydantic.Field(description="Steps to follow", ge=1, le=10)] = 1,
    exact: Exact = False,
    limit: Limit = 100,
    offset: Offset = 0,
) -> RelatedSymbols:
    """Find what a symbol depends on: what it calls, imports, inherits and names."""
    return _related(workspace, symbol, depth, exact, limit, offset, incoming=False)


def scip_dependents(
    workspace: Workspace,
    symbol: SymbolName,
    depth: Annotated[int, pydantic.Field(description="Steps to follow", ge=1, le=10)] = 1,
    exact: Exact = False,
    limit: Limit = 100,
    offset: Offset = 0,
) -> RelatedSymbols:
    """Find what depends on a symbol: the definitions that call, import or name it."""
    return _related(workspace, symbol, depth, exact, limit, offset, incoming=True)


def _related(
    workspace: Workspace,
    symbol: str,
    depth: int,
    exact: bool,
    limit: int,
    offset: int,
    *,
    incoming: bool,
) -> RelatedSymbols:
    graph = _graph(workspace)
    targets = _matches(graph, symbol, exact)
    seen: dict[int, tuple[int, str, str]] = {t.id: (0, "", "") for t in targets}
    frontier = [t.id for t in targets]
    for level in range(1, depth + 1):
        edges = graph.references(frontier) if incoming else graph.outgoing(frontier)
        frontier = []
        for src, dst, _line, _column, relation, source in edges:
            other = src if incoming else dst
            if other not in seen:
                seen[other] = (level, RELATIONS[relation], source)
                frontier.append(other)
        if not frontier:
            break
    found = [i for i, v in seen.items() if v[0] > 0]
    symbols = graph.symbols(found)
    ordered = sorted(
        (symbols[i] for i in found if i in symbols), key=lambda s: (seen[s.id][0], s.path, s.line)
    )
    page = ordered[offset : offset + limit]
    more, after = _page(len(ordered), offset, len(page))
    results: list[Related] = [
        {
            "symbol": s.display,
            "name": s.name,
            "kind": s.kind,
            "file_path": s.path,
            "line": s.line,
            "column": 0,
            "relationship": seen[s.id][1],
            "depth": seen[s.id][0],
            "source": seen[s.id][2],
        }
        for s in page
    ]
    text = [
        f"{seen[s.id][1]} {s.compact()}" + (f" depth {seen[s.id][0]}" if depth > 1 else "")
        for s in page
    ]
    return {
        "symbol": symbol,
        "matched": list(dict.fromkeys(t.display for t in targets)),  # overloads: one each
        "total_results": len(ordered),
        "results": results,
        "has_more": more,
        "next_offset": after,
        "text": "\n".join(text) or "none",
        "reflects": reflects(workspace),
    }


def scip_impact(
    workspace: Workspace,
    symbol: SymbolName,
    depth: Annotated[int, pydantic.Field(description="Steps of dependents", ge=1, le=10)] = 3,
    exact: Exact = False,
    limit: Annotated[int, pydantic.Field(description="Most symbols listed", ge=1, le=2000)] = 200,
) -> Impact:
    """Analyse the impact of changing a symbol: its dependents, theirs, to a depth.

    Each affected symbol comes with its depth and the chain from the target; the files
    are summarised with how many symbols each holds and at which depths.
    """
    graph = _graph(workspace)
    targets = _matches(graph, symbol, exact)
    reached, truncated = graph.impact([t.id for t in targets], depth)
    symbols = graph.symbols([i for v in reached.values() for i in v[1]])
    rows = [(symbols[i], v) for i, v in reached.items() if i in symbols]
    rows.sort(key=lambda r: (r[1][0], r[0].path, r[0].line))
    files: dict[str, list[int]] = {}
    for found, (level, _chain) in rows:
        files.setdefault(found.path, []).append(level)
    affected: list[Affected] = [
        {
            "symbol": s.display,
            "file_path": s.path,
            "line": s.line,
            "column": 0,
            "depth": level,
            "relationship": "depends",
            "chain": [symbols[i].display for i in chain if i in symbols],
        }
        for s, (level, chain) in rows[:limit]
    ]
    summary: list[AffectedFile] = sorted(
        (
            {
                "path": path,
                "affected_symbol_count": len(levels),
                "min_depth": min(levels),
                "max_depth": max(levels),
            }
            for path, levels in files.items()
        ),
        key=lambda f: (f["min_depth"], -f["affected_symbol_count"], f["path"]),
    )
    text = [
        f"{len(rows)} symbols in {len(files)} files depend on "
        f"{', '.join(t.display for t in targets[:3])} within {depth} steps"
    ]
    text += [
        f"{f['path']}: {f['affected_symbol_count']} (depth {f['min_depth']}"
        f"{'-' + str(f['max_depth']) if f['max_depth'] != f['min_depth'] else ''})"
        for f in summary[:50]
    ]
    return {
        "target_symbol": targets[0].display,
        "matched": list(dict.fromkeys(t.display for t in targets)),  # overloads: one each
        "depth_analyzed": depth,
        "total_affected": len(rows),
        "truncated": truncated or len(rows) > limit,
        "affected_symbols": affected,
        "affected_files": summary,
        "text": "\n".join(text),
        "reflects": reflects(workspace),
    }


def scip_callchain(
    workspace: Workspace,
    from_symbol: Annotated[
        str, pydantic.Field(description="Where the chain starts", min_length=1, max_length=500)
    ],
    to_symbol: Annotated[
        str, pydantic.Field(description="Where it should arrive", min_length=1, max_length=500)
    ],
    max_depth: Annotated[int, pydantic.Field(description="Most steps", ge=1, le=10)] = 10,
    limit: Annotated[int, pydantic.Field(description="Most chains", ge=1, le=50)] = 5,
    exact: Exact = False,
) -> CallChains:
    """Trace how execution gets from one symbol to another: the shortest call chains.

    Searched from both ends at once along calls and references, at most max_depth steps.
    """
    graph = _graph(workspace)
    sources = _matches(graph, from_symbol, exact)
    targets = _matches(graph, to_symbol, exact)
    found, reached = graph.chains(
        [s.id for s in sources], [t.id for t in targets], max_depth, limit
    )
    symbols = graph.symbols([i for chain in found for i in chain])
    chains: list[Chain] = []
    text = []
    for chain in found:
        steps: list[Step] = []
        for position, number in enumerate(chain):
            s = symbols[number]
            steps.append(
                {
                    "symbol": s.display,
                    "file_path": s.path,
                    "line": s.line,
                    "column": 0,
                    "call_type": "start" if position == 0 else "call",
                }
            )
        chains.append({"length": len(chain) - 1, "path": steps})
        text.append(" -> ".join(symbols[i].compact() for i in chain))
    if not text:
        text.append(f"no chain from {from_symbol!r} to {to_symbol!r} within {max_depth} steps")
    return {
        "from_symbol": from_symbol,
        "to_symbol": to_symbol,
        "total_chains_found": len(chains),
        "truncated": len(chains) >= limit,
        "max_depth_reached": reached,
        "chains": chains,
        "text": "\n".join(text),
        "reflects": reflects(workspace),
    }


def _location(s: Symbol) -> Location:
    return {
        "symbol": s.display,
        "name": s.name,
        "kind": s.kind,
        "file_path": s.path,
        "line": s.line,
        "end_line": s.end_line,
        "column": 0,
    }


class _Lines:
    """Lines of workspace files, each file read once."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self.files: dict[str, list[str]] = {}

    def line(self, path: str, number: int) -> str:
        lines = self.files.get(path)
        if lines is None:
            try:
                text = self.workspace.read_bytes(path).decode("utf-8", errors="replace")
            except Exception:
                text = ""
            lines = self.files[path] = text.split("\n")
        text = lines[number - 1].strip() if 0 < number <= len(lines) else ""
        return text if len(text) <= 200 else text[:199] + "…"
