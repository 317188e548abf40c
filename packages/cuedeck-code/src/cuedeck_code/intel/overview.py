"""The code-intelligence tools that look around a symbol or at the graph itself:
``scip_context`` (the files to read), ``scip_call_graph`` (callers and callees, a few
levels), ``scip_status`` (what the graph holds) and ``scip_generate`` (run the SCIP
indexers in the background)."""

# The tools' annotations are read at run time (their schemas): imported, not type-only.
# ruff: noqa: TC001

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from cuedeck.watch.reflects import reflects
from cuedeck_code.intel.shapes import (
    CallGraph,
    CallNode,
    Context,
    ContextFile,
    ContextSymbol,
    Exact,
    GenerateStatus,
    GraphStatus,
    SymbolName,
)
from cuedeck_code.intel.tools import _graph, _matches

if TYPE_CHECKING:
    import pydantic

    from cuedeck.workspace import Workspace
else:
    from cuedeck.plugins.tools import lazy_pydantic as pydantic


def scip_context(
    workspace: Workspace,
    symbol: SymbolName,
    limit: Annotated[int, pydantic.Field(description="Most files", ge=1, le=100)] = 20,
    exact: Exact = False,
) -> Context:
    """Get the files to read to understand a symbol, ranked by relevance.

    Where it is defined, what uses it and what it uses."""
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


def scip_status(workspace: Workspace) -> GraphStatus:
    """Say what the code graph holds: files, symbols, edges by source, SCIP indexes."""
    from cuedeck_code.intel.scip_run import read_status, scip_indexers

    store = workspace.service("code_intel").ready()
    files = store.query("SELECT language, COUNT(*) FROM files GROUP BY language")
    symbols = store.query("SELECT COUNT(*) FROM names WHERE kind != 'module'")[0][0]
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
