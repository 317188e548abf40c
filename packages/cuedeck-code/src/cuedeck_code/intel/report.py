"""What the code graph holds for a workspace (``register_index_reports``): files, edges by
source and the SCIP indexes loaded. It reads the graph as it is; it never builds it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cuedeck.serving.indexes import IndexReport
    from cuedeck.workspace import Workspace


def graph_report(workspace: Workspace) -> IndexReport:
    """The code graph's files and edges, and each SCIP index loaded into it."""
    from cuedeck_code.intel.service import CodeIntel

    intel = workspace.service("code_intel")
    assert isinstance(intel, CodeIntel)  # code's own service: its internals are ours
    store = intel.store
    if not store.path.exists():
        return {
            "name": "code graph",
            "ready": False,
            "summary": "code graph: not built yet (cue index, or the first scip_* call, builds it)",
            "details": {"files": 0, "edges": {"syntactic": 0, "scip": 0}, "scip": []},
        }
    files = store.query("SELECT COUNT(*) FROM files")[0][0]
    edges = dict(
        store.query(
            "SELECT CASE source WHEN 1 THEN 'scip' ELSE 'syntactic' END, COUNT(*) "
            "FROM edges GROUP BY source"
        )
    )
    loaded = [
        {"indexer": name, "loaded": when, "documents": documents, "edges": count}
        for name, when, documents, count in store.query(
            "SELECT indexer, loaded, documents, edges FROM scip ORDER BY indexer"
        )
    ]
    scip = (
        "SCIP: " + ", ".join(f"{entry['indexer']} ({entry['loaded']})" for entry in loaded)
        if loaded
        else "SCIP: none loaded"
    )
    syntactic, precise = edges.get("syntactic", 0), edges.get("scip", 0)
    return {
        "name": "code graph",
        "ready": True,
        "summary": f"code graph: {files:,} files, {syntactic:,} syntactic and {precise:,} "
        f"SCIP edges; {scip}",
        "details": {
            "files": files,
            "edges": {"syntactic": syntactic, "scip": precise},
            "scip": loaded,
        },
    }
