"""The code-intelligence tools, under the code-indexer specification's names.

``scip_definition``, ``scip_references``, ``scip_dependencies``, ``scip_dependents``,
``scip_impact``, ``scip_callchain``, ``scip_context`` and ``scip_call_graph`` answer
from the code graph (:mod:`.service`): SCIP edges where an indexer ran on the file as
it is, syntactic ones elsewhere; each result says which (``source``). Every reply has
``text``, one compact line per result for a model (``module/Class#method()
(path:line)``), beside the structured results for programs. ``scip_status`` says what
the graph holds and ``scip_generate`` runs the SCIP indexers in the background.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from typing_extensions import TypedDict  # pydantic needs it for TypedDicts on 3.11

from cuedeck.errors import FileNotFound
from cuedeck.watch.reflects import Reflects, reflects
from cuedeck_code.intel.store import RELATIONS

if TYPE_CHECKING:
    import pydantic

    from cuedeck.workspace import Workspace
    from cuedeck_code.intel.queries import Graph, Symbol
else:
    from cuedeck.plugins.tools import lazy_pydantic as pydantic

SymbolName = Annotated[
    str,
    pydantic.Field(
        description="A name (send), qualified (Client.send), path#Name or mod/Class#method()",
        min_length=1,
        max_length=500,
    ),
]
Exact = Annotated[bool, pydantic.Field(description="Only this exact name, not names holding it")]
Limit = Annotated[int, pydantic.Field(description="Most results in this page", ge=1, le=500)]
Offset = Annotated[int, pydantic.Field(description="Results to skip (next_offset)", ge=0)]


class Location(TypedDict):
    """A definition: its symbol, file and lines."""

    symbol: str
    name: str
    kind: str
    file_path: str
    line: int
    end_line: int
    column: int


class Definitions(TypedDict):
    """What ``scip_definition`` returns."""

    symbol: str
    total_results: int
    results: list[Location]
    has_more: bool
    next_offset: int | None
    text: str
    reflects: Reflects


class ReferenceSite(TypedDict):
    """One place that references a symbol."""

    symbol: str
    file_path: str
    line: int
    column: int
    kind: str
    relationship: str
    context: str
    from_symbol: str
    source: str


class References(TypedDict):
    """What ``scip_references`` returns."""

    symbol: str
    matched: list[str]
    total_results: int
    results: list[ReferenceSite]
    has_more: bool
    next_offset: int | None
    text: str
    reflects: Reflects


class Related(TypedDict):
    """A symbol related to the one asked about."""

    symbol: str
    name: str
    kind: str
    file_path: str
    line: int
    column: int
    relationship: str
    depth: int
    source: str


class RelatedSymbols(TypedDict):
    """What ``scip_dependencies`` and ``scip_dependents`` return."""

    symbol: str
    matched: list[str]
    total_results: int
    results: list[Related]
    has_more: bool
    next_offset: int | None
    text: str
    reflects: Reflects


class Affected(TypedDict):
    """A symbol an impact analysis reached."""

    symbol: str
    file_path: str
    line: int
    column: int
    depth: int
    relationship: str
    chain: list[str]


class AffectedFile(TypedDict):
    """One file's share of an impact."""

    path: str
    affected_symbol_count: int
    min_depth: int
    max_depth: int


class Impact(TypedDict):
    """What ``scip_impact`` returns."""

    target_symbol: str
    matched: list[str]
    depth_analyzed: int
    total_affected: int
    truncated: bool
    affected_symbols: list[Affected]
    affected_files: list[AffectedFile]
    text: str
    reflects: Reflects


class Step(TypedDict):
    """One step of a call chain."""

    symbol: str
    file_path: str
    line: int
    column: int
    call_type: str


class Chain(TypedDict):
    """One call chain."""

    length: int
    path: list[Step]


class CallChains(TypedDict):
    """What ``scip_callchain`` returns."""

    from_symbol: str
    to_symbol: str
    total_chains_found: int
    truncated: bool
    max_depth_reached: bool
    chains: list[Chain]
    text: str
    reflects: Reflects


class ContextSymbol(TypedDict):
    """A symbol of a file of ``scip_context``."""

    name: str
    kind: str
    relationship: str
    line: int
    column: int
    relevance: float


class ContextFile(TypedDict):
    """A file worth reading to understand a symbol."""

    path: str
    relevance_score: float
    read_priority: int
    symbols: list[ContextSymbol]


class Context(TypedDict):
    """What ``scip_context`` returns."""

    target_symbol: str
    summary: str
    total_files: int
    total_symbols: int
    avg_relevance: float
    files: list[ContextFile]
    text: str
    reflects: Reflects


class CallNode(TypedDict):
    """A symbol of a call graph, with its own callers or callees below it."""

    symbol: str
    file_path: str
    line: int
    children: list[CallNode]


class CallGraph(TypedDict):
    """What ``scip_call_graph`` returns."""

    symbol: str
    matched: list[str]
    depth: int
    callers: list[CallNode]
    callees: list[CallNode]
    truncated: bool
    text: str
    reflects: Reflects


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

    Each result is a file, line and column, how it is used (relationship), the line's
    code (context) and the symbol it is written in (from_symbol).
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
        "matched": [t.display for t in targets],
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
        "matched": [t.display for t in targets],
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
        "matched": [t.display for t in targets],
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


def scip_context(
    workspace: Workspace,
    symbol: SymbolName,
    limit: Annotated[int, pydantic.Field(description="Most files", ge=1, le=100)] = 20,
    exact: Exact = False,
) -> Context:
    """Get the files to read to understand a symbol: where it is defined, what uses it
    and what it uses, ranked by relevance."""
    graph = _graph(workspace)
    targets = _matches(graph, symbol, exact)
    ids = [t.id for t in targets]
    rows: list[tuple[int, str, float]] = [(t.id, "definition", 1.0) for t in targets]
    seen = set(ids)
    for src, *_rest in graph.references(ids):
        if src not in seen:
            seen.add(src)
            rows.append((src, "dependent", 0.8))
    for _src, dst, *_rest in graph.outgoing(ids):
        if dst not in seen:
            seen.add(dst)
            rows.append((dst, "dependency", 0.6))
    symbols = graph.symbols([r[0] for r in rows])
    files: dict[str, list[ContextSymbol]] = {}
    for number, relationship, relevance in rows:
        s = symbols.get(number)
        if s is None:
            continue
        files.setdefault(s.path, []).append(
            {
                "name": s.name or s.display,
                "kind": s.kind,
                "relationship": relationship,
                "line": s.line,
                "column": 0,
                "relevance": relevance,
            }
        )
    ranked: list[ContextFile] = []
    for path, found in files.items():
        score = min(1.0, max(f["relevance"] for f in found) + 0.02 * (len(found) - 1))
        priority = 1 if score >= 0.95 else 2 if score >= 0.75 else 3
        ranked.append(
            {
                "path": path,
                "relevance_score": round(score, 3),
                "read_priority": priority,
                "symbols": sorted(found, key=lambda f: f["line"]),
            }
        )
    ranked.sort(key=lambda f: (-f["relevance_score"], f["path"]))
    ranked = ranked[:limit]
    total = sum(len(f["symbols"]) for f in ranked)
    average = round(sum(f["relevance_score"] for f in ranked) / len(ranked), 3) if ranked else 0.0
    summary = (
        f"{targets[0].display}: defined in {targets[0].path}:{targets[0].line}; "
        f"{len(ranked)} files, {total} related symbols"
    )
    text = [summary] + [
        f"P{f['read_priority']} {f['path']} ({f['relevance_score']}): "
        + ", ".join(f"{s['name']} [{s['relationship']}]" for s in f["symbols"][:8])
        for f in ranked
    ]
    return {
        "target_symbol": targets[0].display,
        "summary": summary,
        "total_files": len(ranked),
        "total_symbols": total,
        "avg_relevance": average,
        "files": ranked,
        "text": "\n".join(text),
        "reflects": reflects(workspace),
    }


def scip_call_graph(
    workspace: Workspace,
    symbol: SymbolName,
    depth: Annotated[int, pydantic.Field(description="Levels each way", ge=1, le=5)] = 2,
    direction: Literal["both", "callers", "callees"] = "both",
    exact: Exact = False,
    limit: Annotated[int, pydantic.Field(description="Most symbols per level", ge=1, le=200)] = 25,
) -> CallGraph:
    """Show a symbol's call graph: who calls it and what it calls, a few levels deep."""
    from cuedeck_code.intel.queries import CHAIN_RELATIONS

    graph = _graph(workspace)
    targets = _matches(graph, symbol, exact)
    root = targets[0]
    truncated = False

    def tree(ids: list[int], incoming: bool, level: int, seen: set[int]) -> list[CallNode]:
        nonlocal truncated
        if level > depth or not ids:
            return []
        step = graph.neighbours(set(ids), incoming=incoming, relations=CHAIN_RELATIONS)
        nodes: list[CallNode] = []
        for number in ids:
            nexts = sorted(step.get(number, set()) - seen)
            if len(nexts) > limit:
                truncated = True
                nexts = nexts[:limit]
            symbols = graph.symbols(nexts)
            for nxt in nexts:
                s = symbols.get(nxt)
                if s is None:
                    continue
                children = tree([nxt], incoming, level + 1, seen | {nxt})
                nodes.append(
                    {"symbol": s.display, "file_path": s.path, "line": s.line, "children": children}
                )
        return nodes

    callers = tree([root.id], True, 1, {root.id}) if direction != "callees" else []
    callees = tree([root.id], False, 1, {root.id}) if direction != "callers" else []
    text = [root.compact()]
    _draw(text, callers, "<- ", 1)
    _draw(text, callees, "-> ", 1)
    return {
        "symbol": root.display,
        "matched": [t.display for t in targets],
        "depth": depth,
        "callers": callers,
        "callees": callees,
        "truncated": truncated,
        "text": "\n".join(text),
        "reflects": reflects(workspace),
    }


def _draw(out: list[str], nodes: list[CallNode], arrow: str, level: int) -> None:
    for node in nodes:
        out.append(f"{'  ' * level}{arrow}{node['symbol']} ({node['file_path']}:{node['line']})")
        _draw(out, node["children"], arrow, level + 1)


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


class GraphStatus(TypedDict):
    """What ``scip_status`` returns."""

    files: int
    symbols: int
    edges: dict[str, int]
    by_language: dict[str, int]
    precise_files: int
    indexers: list[dict[str, Any]]
    run: dict[str, Any]
    text: str
    reflects: Reflects


def scip_status(workspace: Workspace) -> GraphStatus:
    """Say what the code graph holds: files, symbols, edges by source, SCIP indexes."""
    from cuedeck_code.intel.scip_run import read_status, scip_indexers

    store = workspace.service("code_intel").ready()
    files = store.query("SELECT language, COUNT(*) FROM files GROUP BY language")
    symbols = store.query(
        "SELECT COUNT(*) FROM names WHERE target_ns IS NULL AND kind NOT IN "
        "('import', 'var', 'module')"
    )[0][0]
    edges = dict(
        store.query(
            "SELECT CASE source WHEN 1 THEN 'scip' ELSE 'syntactic' END, "
            "COUNT(*) FROM edges GROUP BY source"
        )
    )
    precise = store.query("SELECT COUNT(*) FROM files WHERE source = 'scip'")[0][0]
    loaded = {row[0]: row for row in store.query("SELECT * FROM scip")}
    indexers = []
    for name, indexer in sorted(scip_indexers(workspace).items()):
        output = workspace.root / ".cuedeck/.cache/scip/x"
        installed = indexer.command(workspace.root, output) is not None
        row = loaded.get(name)
        indexers.append(
            {
                "name": name,
                "languages": sorted(indexer.languages),
                "installed": installed,
                "install": indexer.install,
                "loaded": row[2] if row else None,
                "documents": row[3] if row else 0,
                "edges": row[4] if row else 0,
            }
        )
    run = read_status(workspace.root)
    total = sum(n for _, n in files)
    text = [
        f"{total} files, {symbols} symbols; edges: "
        + ", ".join(f"{k} {v}" for k, v in sorted(edges.items()))
        + f"; {precise} files "
        "answered by SCIP"
    ]
    for entry in indexers:
        state = (
            "loaded " + str(entry["loaded"])
            if entry["loaded"]
            else ("installed" if entry["installed"] else f"not installed ({entry['install']})")
        )
        text.append(f"{entry['name']}: {state}")
    if run:
        text.append(f"last run: {run.get('state')}")
    return {
        "files": total,
        "symbols": symbols,
        "edges": {"syntactic": edges.get("syntactic", 0), "scip": edges.get("scip", 0)},
        "by_language": {lang: n for lang, n in files},
        "precise_files": precise,
        "indexers": indexers,
        "run": run,
        "text": "\n".join(text),
        "reflects": reflects(workspace),
    }


class GenerateStatus(TypedDict):
    """What ``scip_generate`` returns."""

    state: str
    indexers: list[dict[str, Any]]
    text: str


def scip_generate(
    workspace: Workspace,
    wait: Annotated[bool, pydantic.Field(description="Wait until the indexers end")] = False,
) -> GenerateStatus:
    """Run the installed SCIP indexers (scip-python, scip-typescript...) in the background.

    Their precise edges replace the syntactic ones of the files they index; a missing
    indexer is a note with how to install it. scip_status follows the run.
    """
    from cuedeck_code.intel.scip_run import start

    workspace.service("code_intel").ready()
    status = start(workspace, wait=wait)
    text = [f"SCIP indexing {status.get('state')}"]
    for entry in status.get("indexers", []):
        note = f": {entry['note']}" if entry.get("note") else ""
        text.append(f"{entry['name']}: {entry['state']}{note}")
    return {
        "state": str(status.get("state")),
        "indexers": list(status.get("indexers", [])),
        "text": "\n".join(text),
    }
