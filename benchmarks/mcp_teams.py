"""MCP for teams: tools/list size per profile and role, several workspaces in one process,
and list_tasks throughput with 1 and 4 uvicorn workers.

    uv run python benchmarks/mcp_teams.py [--seconds 10] [--corpora DIR] [--tokens-only]

Also run at the end of benchmarks/mcp.py. Workspaces are the fastapi corpus with 100
cards (benchmarks/mcp.py's ``make_workspace``); clients are the MCP SDK's streamable HTTP
client over loopback, 16 at once for the throughput runs.
"""

from __future__ import annotations

import argparse
import importlib.util
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

import anyio  # noqa: E402
import httpx2  # noqa: E402
from mcp.client import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

CUE = str(Path(sys.executable).with_name("cue"))
CLIENTS = 16


def _bench_mcp() -> Any:
    """benchmarks/mcp.py as a module (its name would clash with the MCP SDK's)."""
    spec = importlib.util.spec_from_file_location("bench_mcp", HERE / "mcp.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def tools_list_tokens(root: Path) -> dict[str, dict[str, int]]:
    """Exact o200k tokens of tools/list for each profile and role, two ways: ``sent``, the
    reply's ``{"tools": [...]}`` as a server writes it (no spaces, as
    tests/mcp/test_tools_list.py counts it from a real server), and ``spaced``,
    ``json.dumps`` of the listed tools (as tests/mcp/test_server.py counts it, and as
    figures before issue 37 were given). CueDeck's own tools: the example plugin's
    ``word_count`` is left out.
    """
    from cuedeck.token_counts import O200kCounter
    from cuedeck.workspace import open_workspace
    from cuedeck_mcp.server import build_server

    counter = O200kCounter.load()
    if counter is None:
        why = O200kCounter.refused or "install bpe-openai"
        raise SystemExit(f"tools/list is measured in exact o200k tokens: {why}")
    out: dict[str, dict[str, int]] = {}
    config = root / ".cuedeck" / "config.toml"
    original = config.read_text(encoding="utf-8")
    for label, profile, role in (
        ("core (default), role read", ["core"], "read"),
        ("core (default), role write", ["core"], "write"),
        ("core (default), role admin", ["core"], "admin"),
        ("all, role read", ["all"], "read"),
        ("all, role write", ["all"], "write"),
        ("all, role admin", ["all"], "admin"),
    ):
        config.write_text(original + f'\n[mcp]\nlocal_role = "{role}"\n', encoding="utf-8")
        workspace = open_workspace(root)
        server = build_server(workspace, profile=profile)

        async def listed(server: Any = server) -> list[Any]:
            from fastmcp import Client as InProcess

            async with InProcess(server) as client:
                return list(await client.list_tools())

        dumped = [
            t.model_dump(by_alias=True, exclude_none=True, mode="json")
            for t in anyio.run(listed)
            if t.name != "word_count"
        ]
        sent = json.dumps({"tools": dumped}, ensure_ascii=False, separators=(",", ":"))
        out[f"{label} ({len(dumped)} tools)"] = {
            "sent": counter.count(sent),
            "spaced": counter.count(json.dumps(dumped)),
        }
    config.write_text(original, encoding="utf-8")
    return out


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 120
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("the server did not start") from None
            time.sleep(0.05)


async def _timed_calls(url: str, tool: str, arguments: dict[str, Any], calls: int) -> list[float]:
    async with (
        httpx2.AsyncClient(timeout=60) as http,
        Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
    ):
        await client.call_tool(tool, arguments)
        times = []
        for _ in range(calls):
            started = time.perf_counter()
            await client.call_tool(tool, arguments)
            times.append((time.perf_counter() - started) * 1000)
    return times


def three_workspaces(roots: dict[str, Path], calls: int) -> dict[str, float]:
    """p50 of list_tasks and read_doc per workspace, three served by one `cue mcp`."""
    port = _free_port()
    argv = [CUE, "mcp", "--transport", "http", "--port", str(port)]
    for name, root in roots.items():
        argv += ["--workspace", f"{name}={root}"]
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait(port, process)
        out = {}
        for name in roots:
            url = f"http://127.0.0.1:{port}/mcp/{name}"
            for tool, arguments in (
                ("list_tasks", {"status": "active"}),
                ("read_doc", {"path": "index.md", "limit": 20}),
            ):
                times = anyio.run(_timed_calls, url, tool, arguments, calls)
                out[f"{name}: {tool}"] = statistics.median(times)
        return out
    finally:
        process.terminate()
        process.wait(15)


async def _throughput(url: str, seconds: float) -> int:
    """tools/call list_tasks as raw JSON-RPC POSTs (the transport is stateless), from
    ``CLIENTS`` loops at once; the SDK client would cost more CPU than the server."""
    done = 0
    deadline = time.monotonic() + seconds
    body = {
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "list_tasks", "arguments": {"status": "todo"}},
    }  # fmt: skip
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2025-06-18",
    }

    async def client(http: httpx2.AsyncClient) -> None:
        nonlocal done
        while time.monotonic() < deadline:
            reply = await http.post(url, json=body, headers=headers)
            if reply.status_code != 200 or '"isError":false' not in reply.text:
                raise SystemExit(f"list_tasks failed: {reply.status_code} {reply.text[:200]}")
            done += 1

    limits = httpx2.Limits(max_connections=CLIENTS)
    async with (
        httpx2.AsyncClient(timeout=60, limits=limits) as http,
        anyio.create_task_group() as group,
    ):
        for _ in range(CLIENTS):
            group.start_soon(client, http)
    return done


def workers_throughput(root: Path, workers: int, seconds: float) -> float:
    """list_tasks calls per second from 16 clients against ``uvicorn --workers N``."""
    port = _free_port()
    env = {**os.environ, "CUEDECK_MCP_WORKSPACES": f"team={root}", "CUEDECK_MCP_PORT": str(port)}
    argv = [sys.executable, "-m", "uvicorn", "cuedeck_mcp.asgi:app", "--workers", str(workers),
            "--port", str(port), "--log-level", "warning"]  # fmt: skip
    process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait(port, process)
        url = f"http://127.0.0.1:{port}/mcp/team"
        anyio.run(_throughput, url, 2.0)  # warm every worker (imports, index)
        return anyio.run(_throughput, url, seconds) / seconds
    finally:
        process.terminate()
        process.wait(15)


def run(
    corpora: Path, seconds: float = 10.0, calls: int = 100, *, tokens_only: bool = False
) -> dict[str, Any]:
    """Every measure of this file (only tools/list's size with ``tokens_only``), printed
    and returned."""
    bench = _bench_mcp()
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        roots = {}
        for name in ("api",) if tokens_only else ("api", "web", "ops"):
            (Path(tmp) / name).mkdir()
            roots[name] = bench.make_workspace(corpora, Path(tmp) / name)
        results["tools_list_tokens"] = tools_list_tokens(roots["api"])
        if not tokens_only:
            results["three_workspaces_p50_ms"] = three_workspaces(roots, calls)
            results["list_tasks_per_second"] = {
                f"{n} worker{'s' if n > 1 else ''}": workers_throughput(roots["api"], n, seconds)
                for n in (1, 4)
            }
    print("tools/list tokens (o200k): as sent / with JSON's spaces")
    for label, tokens in results["tools_list_tokens"].items():
        print(f"  {label:40} {tokens['sent']:6} / {tokens['spaced']:6}")
    if tokens_only:
        return results
    print("one process, three workspaces (p50 ms per call):")
    for label, p50 in results["three_workspaces_p50_ms"].items():
        print(f"  {label:40} {p50:6.1f}")
    print(f"list_tasks over HTTP, {CLIENTS} clients (requests/s):")
    for label, rate in results["list_tasks_per_second"].items():
        print(f"  {label:40} {rate:6.0f}")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--corpora")
    parser.add_argument("--json", default=str(HERE / "results" / "mcp_teams.json"))
    parser.add_argument(
        "--tokens-only", action="store_true", help="only tools/list's size (no servers started)"
    )
    options = parser.parse_args()
    corpora = _bench_mcp().corpora_dir(options.corpora)
    results = run(corpora, options.seconds, options.calls, tokens_only=options.tokens_only)
    out = Path(options.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
