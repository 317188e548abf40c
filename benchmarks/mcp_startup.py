"""MCP start-up benchmark: from spawning `cue mcp` (stdio) to its first answers.

    uv run python benchmarks/mcp_startup.py [--runs 10] [--workspace DIR] [--json PATH]

Each run spawns `cue -C WS mcp` with the MCP SDK's stdio client, as an agent's client
does (relayed to the workspace's resident server, docs/mcp.md; ``--own-process`` starts
a server for each client instead), and times three answers from the moment of the
spawn: ``initialize`` (what a client waits for before it shows the server as connected),
``tools/list`` right after it, and a first ``tools/call`` (``read_doc`` of a doc). The
workspace is a copy of examples/demo (its index cache warm from a first, unmeasured run)
unless --workspace names another. The table shows p50 and p95 over the runs;
``--phases`` also prints where one server spends its time before it can answer,
measured inside the process, as wall and CPU time (on a busy machine the CPU time is the
steadier figure).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

HERE = Path(__file__).resolve().parent
# Run as a script, this file's folder comes first on sys.path and "mcp" would name the
# benchmark next door instead of the MCP SDK.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != HERE]

from mcp.client import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters, get_default_environment  # noqa: E402

REPO = HERE.parent
CUE = str(Path(sys.executable).with_name("cue"))
#: What a client waits for before the server is usable, on a quiet machine.
TARGETS_MS = {"initialize": 1000.0}

PHASES = """
import json, sys, time
def now():
    return time.perf_counter(), time.process_time()
marks = [("start", now())]
from cuedeck_cli.app import make_cli
make_cli()
marks.append(("cue and its plugins", now()))
from cuedeck.workspace import open_workspace
workspace = open_workspace(sys.argv[1])
workspace.config
marks.append(("workspace and config", now()))
import cuedeck_mcp.server as server
marks.append(("import FastMCP and the server", now()))
built = server.build_server(workspace, defer=True)
marks.append(("the server shell (what initialize waits for)", now()))
built.cuedeck_furnish()
marks.append(("tools, schemas, runtime (after initialize)", now()))
print(json.dumps([
    (b[0], round(1000 * (b[1][0] - a[1][0]), 1), round(1000 * (b[1][1] - a[1][1]), 1))
    for a, b in zip(marks, marks[1:])
]))
"""


async def one_run(workspace: Path, doc: str, env: dict[str, str] | None) -> dict[str, float]:
    """Milliseconds from the spawn to each answer."""
    params = StdioServerParameters(command=CUE, args=["-C", str(workspace), "mcp"], env=env)
    started = time.perf_counter()
    async with Client(params, mode="legacy") as client:
        initialized = time.perf_counter()
        await client.list_tools()
        listed = time.perf_counter()
        await client.call_tool("read_doc", {"file_path": doc})
        called = time.perf_counter()
    return {
        "initialize": 1000 * (initialized - started),
        "tools/list": 1000 * (listed - started),
        "first tools/call": 1000 * (called - started),
    }


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--workspace", type=Path, help="default: a copy of examples/demo")
    parser.add_argument("--doc", default="docs/api.md", help="the doc the first call reads")
    parser.add_argument("--phases", action="store_true", help="also time one server's phases")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    parser.add_argument(
        "--own-process",
        action="store_true",
        help="start a server for each client (CUEDECK_MCP_RESIDENT=0), not the resident one",
    )
    args = parser.parse_args()
    env = {**get_default_environment(), "CUEDECK_MCP_RESIDENT": "0"} if args.own_process else None
    with tempfile.TemporaryDirectory() as scratch:
        workspace = args.workspace
        if workspace is None:
            workspace = Path(scratch) / "demo"
            shutil.copytree(REPO / "examples" / "demo", workspace)
        anyio.run(one_run, workspace, args.doc, env)  # warms the caches: not measured
        runs = [anyio.run(one_run, workspace, args.doc, env) for _ in range(args.runs)]
        stop = [CUE, "-C", str(workspace), "mcp", "stop"]
        subprocess.run(stop, capture_output=True, check=False)
        phases = None
        if args.phases:
            done = subprocess.run(
                [sys.executable, "-c", PHASES, str(workspace)],
                capture_output=True,
                text=True,
                check=True,
            )
            phases = json.loads(done.stdout.strip().splitlines()[-1])
    rows = {
        label: {
            "p50_ms": round(statistics.median(r[label] for r in runs), 1),
            "p95_ms": round(p95([r[label] for r in runs]), 1),
        }
        for label in runs[0]
    }
    print(f"{'from the spawn to':22} {'p50 ms':>8} {'p95 ms':>8} {'target':>8}")
    for label, row in rows.items():
        target = TARGETS_MS.get(label)
        shown = f"{target:g}" if target else "-"
        mark = "" if target is None else (" ok" if row["p50_ms"] <= target else " MISS")
        print(f"{label:22} {row['p50_ms']:8.1f} {row['p95_ms']:8.1f} {shown:>8}{mark}")
    if phases:
        print(f"\n{'inside one server':48} {'wall ms':>8} {'CPU ms':>8}")
        for label, wall, cpu in phases:
            print(f"{label:48} {wall:8.1f} {cpu:8.1f}")
    if args.json:
        result: dict[str, Any] = {"runs": args.runs, "rows": rows, "phases": phases}
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
