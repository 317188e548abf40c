"""Ingest at scale, batch by batch: what one ``context_capture`` of 1,000 segments costs.

    uv run python benchmarks/memory_ingest.py [--size 95000] [--batches 12]
        [--dir DIR] [--profile] [--json PATH]

benchmarks/memory.py gives ingest as one rate over a whole run from an empty store to
100,000 segments, on a machine others share; this looks at the batches at the top of
that run, where they cost most, and separates the server's own work from the wait:

- a store of ``--size`` segments (memory.py's workload) is built once in process and
  kept under ``--dir`` for the next runs;
- in process: ``--batches`` more batches of 1,000 through core's ``serve`` (what the
  MCP server runs for a call), each timed as CPU time of the calling thread;
- over MCP: a ``cue mcp`` server in its own process (``CUEDECK_MCP_RESIDENT=0``) on a
  copy of that store, driven over stdio by the MCP SDK's client as memory.py drives it,
  the same batches: wall time per call (the
  seg/s an agent sees), the server's CPU time per call (user and system, every thread),
  and each server thread's share.

CPU time is the steadier figure on a busy machine; wall time is the one the target
(issue 29: 5,000 segments/s at 100,000) is about. ``--profile`` prints where the
in-process batches spend their time (cProfile).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import importlib.util
import json
import os
import pstats
import shutil
import statistics
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

# memory.py's workload, workspace and client helpers (a script, not a package: loaded
# from its file).
_spec = importlib.util.spec_from_file_location("memory_bench", HERE / "memory.py")
assert _spec is not None
assert _spec.loader is not None
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

BATCH = bench.BATCH


def requests(items: list[dict[str, Any]], ids: list[str]) -> list[dict[str, Any]]:
    """``context_capture`` arguments for ``items``, a batch each, as memory.py sends them."""
    maker = bench.CueDeck.__new__(bench.CueDeck)  # only its ingest_call: no workspace
    return [maker.ingest_call(items[n : n + BATCH], ids)[1] for n in range(0, len(items), BATCH)]


def build(root: Path, items: list[dict[str, Any]]) -> list[str]:
    """A workspace at ``root`` holding ``items``, captured in process (kept for next
    runs); the segment ids."""
    from cuedeck.serving.calls import serve
    from cuedeck.workspace import open_workspace

    ids_file = root / "segment-ids.txt"
    if ids_file.is_file():
        return ids_file.read_text().split()
    shutil.rmtree(root, ignore_errors=True)
    bench.CueDeck(root)  # the workspace memory.py makes
    workspace = open_workspace(root)
    tool = workspace.plugins.tools()["context_capture"]
    ids: list[str] = []
    began = time.perf_counter()
    for start in range(0, len(items), BATCH):
        arguments = requests(items[start : start + BATCH], ids)[0]
        ids.extend(serve(tool, workspace, arguments)["segment_ids"])
        if start % 10_000 == 0:
            print(f"  building: {start + BATCH:,} segments, {time.perf_counter() - began:.0f} s")
    workspace.service("memory").close()
    ids_file.write_text("\n".join(ids))
    return ids


def in_process(root: Path, batches: list[dict[str, Any]], profile: bool) -> list[float]:
    """CPU ms of each batch through ``serve``, on ``root`` (a copy: the store grows)."""
    from cuedeck.serving.calls import serve
    from cuedeck.workspace import open_workspace

    gc.set_threshold(50_000, 20, 20)  # as `cue` runs
    workspace = open_workspace(root)
    tool = workspace.plugins.tools()["context_capture"]
    serve(tool, workspace, {"project_id": "bench", "segments": [{"text": "warm up"}]})
    profiler = cProfile.Profile() if profile else None
    spent = []
    for arguments in batches:
        began = time.thread_time()
        if profiler:
            profiler.enable()
        serve(tool, workspace, arguments)
        if profiler:
            profiler.disable()
        spent.append((time.thread_time() - began) * 1000)
    workspace.service("memory").close()
    if profiler:
        stats = pstats.Stats(profiler)
        stats.sort_stats("cumulative").print_stats(30)
    return spent


def _server_pid() -> int:
    """The pid of this process's child serving MCP."""
    me = str(os.getpid())
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if stat.rsplit(")", 1)[1].split()[1] == me and b"mcp" in cmdline:
                return int(entry)
    raise SystemExit("the server process was not found")


def _cpu(pid: int, task: str | None = None) -> float:
    """Seconds of CPU (user and system) of process ``pid``, or of one of its threads."""
    path = f"/proc/{pid}/stat" if task is None else f"/proc/{pid}/task/{task}/stat"
    fields = Path(path).read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def over_mcp(root: Path, batches: list[dict[str, Any]]) -> dict[str, Any]:
    """Wall and server CPU ms per call, and each server thread's CPU ms per call."""
    served = bench.CueDeck.__new__(bench.CueDeck)
    served.root = root
    # Served in the spawned process itself: by default `cue mcp` relays to a resident
    # server (docs/mcp.md), and the relay's CPU is not the server's.
    async with Client(served.params(CUEDECK_MCP_RESIDENT="0"), mode="legacy") as client:
        pid = _server_pid()
        warm = {"project_id": "bench", "segments": [{"text": "warm up"}], "max_tokens": 2000}
        bench.reply(await client.call_tool("context_capture", warm))
        threads = {t: _cpu(pid, t) for t in os.listdir(f"/proc/{pid}/task")}
        walls, cpus = [], []
        for arguments in batches:
            cpu, began = _cpu(pid), time.perf_counter()
            bench.reply(await client.call_tool("context_capture", arguments))
            walls.append((time.perf_counter() - began) * 1000)
            cpus.append((_cpu(pid) - cpu) * 1000)
        per_thread = {}
        for task in os.listdir(f"/proc/{pid}/task"):
            used = (_cpu(pid, task) - threads.get(task, 0.0)) * 1000 / len(batches)
            if used >= 1:
                kind = "main" if task == str(pid) else f"thread {task}"
                per_thread[kind] = round(used)
    return {"wall_ms": walls, "server_cpu_ms": cpus, "server_threads_ms": per_thread}


def summary(samples: list[float]) -> dict[str, float]:
    quartiles = statistics.quantiles(samples, n=4)
    return {
        "median": round(statistics.median(samples), 1),
        "p25": round(quartiles[0], 1),
        "min": round(min(samples), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=95_000, help="segments before the batches")
    parser.add_argument("--batches", type=int, default=12)
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()))
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--json", type=Path, default=HERE / "results" / "memory_ingest.json")
    args = parser.parse_args()
    load = os.getloadavg()
    print(f"load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}", flush=True)
    items = bench.workload(args.size + args.batches * BATCH)
    base = args.dir / f"cuedeck-ingest-{args.size}"
    ids = build(base, items[: args.size])
    batches = requests(items[args.size :], ids)
    with tempfile.TemporaryDirectory(dir=args.dir) as scratch:
        copy = Path(scratch) / "in-process"
        shutil.copytree(base, copy)
        inside = in_process(copy, batches, args.profile)
        copy = Path(scratch) / "over-mcp"
        shutil.copytree(base, copy)
        outside = anyio.run(over_mcp, copy, batches)
    wall = summary(outside["wall_ms"])
    result = {
        "size": args.size,
        "batches": args.batches,
        "in_process_cpu_ms": summary(inside),
        "mcp_wall_ms": wall,
        "mcp_segments_per_s": round(BATCH * 1000 / wall["median"]),
        "mcp_server_cpu_ms": summary(outside["server_cpu_ms"]),
        "mcp_server_threads_ms": outside["server_threads_ms"],
        "load_end": os.getloadavg(),
    }
    print(json.dumps(result, indent=2))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
