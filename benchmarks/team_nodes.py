"""A team on several nodes (issue 41): the shared store's operations, embedded and on
PostgreSQL, and tool calls per second with p50/p95 for one, two and three nodes on one
PostgreSQL beside the embedded single-machine server, on the same workload.

    uv run python benchmarks/team_nodes.py [--seconds 10] [--clients 12]

PostgreSQL is a cluster of its own started with initdb/pg_ctl in a temporary folder on a
loopback port (tests/team/postgres.py; as ``nobody`` when run as root). The workload is
``list_global_repos`` as raw JSON-RPC POSTs with a member's bearer token: each call looks
the member up and spends from a rate-limit bucket (a limit too high to refuse), which is
what every limited tool call costs the store. Nodes are uvicorn processes with homes of
their own; clients are spread over them round robin, as a load balancer would.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != HERE]
sys.path.insert(0, str(HERE.parent))  # tests.team.postgres: the tests' own cluster

import anyio  # noqa: E402
import httpx2  # noqa: E402

#: A limit no client of the run reaches. Kept buckets remember the calls of the last
#: minute, so the cost of a spend grows with the calls a client makes a minute: each client
#: is a member of its own, at a rate a busy agent reaches.
LIMIT = "[rate_limits.list_global_repos]\nper_minute = 1200\nburst = 1200\n"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _percentiles(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {
        "p50_ms": round(statistics.median(ordered), 3),
        "p95_ms": round(ordered[int(len(ordered) * 0.95) - 1], 3),
    }


def store_operations(home: Path, database: str, rounds: int) -> dict[str, dict[str, float]]:
    """p50/p95 of each store operation a call makes, embedded and on PostgreSQL."""
    from cuedeck.settings import RateLimit
    from cuedeck_team.store import open_store

    limit = RateLimit(per_minute=60, burst=60)
    out = {}
    for kind, url in (("embedded", ""), ("postgresql", database)):
        store = open_store(home, url)
        try:
            out.update(_time_store(kind, store, limit, rounds))
        finally:
            store.close()
    return out


def _time_store(kind: str, store: Any, limit: Any, rounds: int) -> dict[str, dict[str, float]]:
    import itertools

    token = store.add_member(f"bench-{kind}", "write")
    clients = itertools.cycle(range(1000))
    operations = {
        "member lookup": lambda: store.member_of(token),
        # A typical bucket: one of many clients', a few calls in its last minute.
        "bucket spend": lambda: store.spend(f"token:{next(clients)}", "list_global_repos", limit),
        "audit insert": lambda: store.record("bench", "edit_file", "backend", "ok"),
    }
    out = {}
    for name, operation in operations.items():
        operation()  # warm: connection, schema, file opened
        times = []
        for _ in range(rounds):
            started = time.perf_counter()
            operation()
            times.append((time.perf_counter() - started) * 1000)
        out[f"{kind}: {name}"] = _percentiles(times)
    return out


def _start_node(home: Path, database: str) -> tuple[subprocess.Popen[bytes], int]:
    port = _free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("CUEDECK_")},
        "CUEDECK_MCP_TEAM": str(home),
        "CUEDECK_MCP_PORT": str(port),
    }
    if database:
        env["CUEDECK_TEAM_DATABASE"] = database
    argv = [sys.executable, "-m", "uvicorn", "cuedeck_mcp.asgi:app", "--port", str(port),
            "--log-level", "warning", "--no-access-log"]  # fmt: skip
    process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"a node exited with {process.returncode}")
        try:
            if httpx2.get(f"http://127.0.0.1:{port}/readyz", timeout=2).status_code == 200:
                return process, port
        except httpx2.HTTPError:
            pass
        time.sleep(0.2)
    raise SystemExit("a node did not become ready in 60 s")


def _home(folder: Path) -> Path:
    (folder / ".cuedeck").mkdir(parents=True)
    (folder / ".cuedeck" / "config.toml").write_text(LIMIT, encoding="utf-8")
    return folder


async def _load(urls: list[str], tokens: list[str], clients: int, seconds: float) -> list[float]:
    """Latencies (ms) of every call ``clients`` loops made over ``urls`` in ``seconds``."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "list_global_repos", "arguments": {}}}  # fmt: skip
    times: list[float] = []
    deadline = time.monotonic() + seconds

    async def client(http: httpx2.AsyncClient, url: str, token: str) -> None:
        headers = {
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2025-06-18",
            "authorization": f"Bearer {token}",
        }
        while time.monotonic() < deadline:
            started = time.perf_counter()
            reply = await http.post(url, json=body, headers=headers)
            if reply.status_code != 200 or '"isError":false' not in reply.text:
                raise SystemExit(f"a call failed: {reply.status_code} {reply.text[:200]}")
            times.append((time.perf_counter() - started) * 1000)

    limits = httpx2.Limits(max_connections=clients)
    async with (
        httpx2.AsyncClient(timeout=60, limits=limits) as http,
        anyio.create_task_group() as group,
    ):
        for number in range(clients):
            group.start_soon(client, http, urls[number % len(urls)], tokens[number])
    return times


def serve(folder: Path, database: str, nodes: int, clients: int, seconds: float) -> dict[str, Any]:
    """Calls/s, p50 and p95 with ``nodes`` nodes (embedded: one node, ``database`` empty)."""
    from cuedeck_team.store import open_store

    homes = [_home(folder / f"node{n}") for n in range(nodes)]
    store = open_store(homes[0], database)
    try:
        tokens = [store.add_member(f"agent{n}", "read") for n in range(clients)]
    finally:
        store.close()
    started = [_start_node(home, database) for home in homes]
    try:
        urls = [f"http://127.0.0.1:{port}/mcp" for _, port in started]
        anyio.run(_load, urls, tokens, clients, 2.0)  # warm every node
        times = anyio.run(_load, urls, tokens, clients, seconds)
        return {"calls_per_second": round(len(times) / seconds, 1), **_percentiles(times)}
    finally:
        for process, _ in started:
            process.terminate()
            process.wait(15)


def run(seconds: float, clients: int, rounds: int) -> dict[str, Any]:
    """Every measure, printed and returned."""
    from tests.team.postgres import Cluster, binaries

    bin_dir = binaries()
    if bin_dir is None:
        raise SystemExit("PostgreSQL is not installed (initdb, pg_ctl)")
    cluster = Cluster(bin_dir)
    results: dict[str, Any] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            results["store_ms"] = store_operations(_home(root / "ops"), cluster.url(), rounds)
            # One client alone: what the store adds to a call, with no queueing.
            results["one_client"] = {
                label: serve(root / f"alone-{n}", url, 1, 1, seconds)
                for n, (label, url) in enumerate((("embedded", ""), ("postgresql", cluster.url())))
            }
            runs = {"embedded, 1 node": ("", 1)}
            for nodes in (1, 2, 3):
                runs[f"postgresql, {nodes} node{'s' if nodes > 1 else ''}"] = (cluster.url(), nodes)
            results["calls"] = {
                label: serve(
                    root / label.replace(", ", "-").replace(" ", ""), url, n, clients, seconds
                )
                for label, (url, n) in runs.items()
            }
    finally:
        cluster.remove()
    print("store operations (ms):               p50      p95")
    for label, figures in results["store_ms"].items():
        print(f"  {label:32} {figures['p50_ms']:8.3f} {figures['p95_ms']:8.3f}")
    print(f"list_global_repos, 1 client, {seconds:.0f} s:    calls/s   p50 ms   p95 ms")
    for label, figures in results["one_client"].items():
        print(f"  {label:32} {figures['calls_per_second']:8.1f} {figures['p50_ms']:8.1f} "
              f"{figures['p95_ms']:8.1f}")  # fmt: skip
    print(f"list_global_repos, {clients} clients, {seconds:.0f} s:  calls/s   p50 ms   p95 ms")
    for label, figures in results["calls"].items():
        print(f"  {label:32} {figures['calls_per_second']:8.1f} {figures['p50_ms']:8.1f} "
              f"{figures['p95_ms']:8.1f}")  # fmt: skip
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--clients", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--json", default=str(HERE / "results" / "team_nodes.json"))
    options = parser.parse_args()
    results = run(options.seconds, options.clients, options.rounds)
    out = Path(options.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
