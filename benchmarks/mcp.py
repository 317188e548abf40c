"""MCP benchmark: `cue mcp` over stdio, driven by the official MCP SDK client.

    uv run python benchmarks/mcp.py [--calls 200] [--corpora DIR] [--json PATH]

The fastapi docs corpus is extracted into a temporary workspace with 100 task cards
(rate limits switched off in its config, so the client measures the tools and not the
limiter). Each tool is called ``--calls`` times through a real stdio subprocess; the
table shows p50 and p95 round trips as the client sees them. "first answer" is the
time from spawning `cue mcp` to the reply of the first tools/call, cold (no index
cache) and warm (the cache of a previous run). It also reports the size of tools/list
in tokens (o200k when installed, else CueDeck's estimate).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

HERE = Path(__file__).resolve().parent
# Run as a script, this file's folder comes first on sys.path and "mcp" would name this
# file instead of the MCP SDK.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != HERE]

if TYPE_CHECKING:
    from collections.abc import Callable

from mcp.client import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

REPO = HERE.parent
CUE = str(Path(sys.executable).with_name("cue"))
TARGETS_MS = {
    "read_doc": 10.0,
    "list_tasks": 10.0,
    "update_task": 20.0,
    "read_context keyword": 20.0,
    "read_context hybrid": 50.0,
    "first answer (warm)": 1500.0,
}
CARDS = 100
WORDS = [
    "auth",
    "login",
    "token",
    "cache",
    "deploy",
    "docker",
    "query",
    "path",
    "body",
    "header",
    "cookie",
    "form",
    "file",
]
CONFIG = """[rate_limits.read_context]
per_minute = 0
[rate_limits.read_doc]
per_minute = 0
[rate_limits.list_tasks]
per_minute = 0
[rate_limits.update_task]
per_minute = 0
"""


def corpora_dir(explicit: str | None) -> Path:
    for candidate in (
        explicit,
        os.environ.get("CUEDECK_CORPORA"),
        REPO.parent / "shared" / "corpora",
    ):
        if candidate and (Path(candidate) / "fastapi-docs-en.tar.gz").is_file():
            return Path(candidate)
    raise SystemExit("shared corpora not found: pass --corpora DIR or set CUEDECK_CORPORA")


def make_workspace(corpora: Path, into: Path) -> Path:
    """The fastapi corpus as a workspace with ``CARDS`` cards, some depending on others."""
    with tarfile.open(corpora / "fastapi-docs-en.tar.gz") as archive:
        archive.extractall(into, filter="data")
    root = into / "fastapi-docs-en"
    cards = root / ".cuedeck" / "cards"
    cards.mkdir(parents=True)
    (root / ".cuedeck" / "docs").mkdir()
    (root / ".cuedeck" / "config.toml").write_text(CONFIG)
    rng = random.Random(7)
    ids = [f"c{n:05d}" for n in range(CARDS)]
    for n, card_id in enumerate(ids):
        deps = rng.sample(ids[:n], k=min(n, rng.randint(0, 2)))
        title = " ".join(rng.sample(WORDS, 3)).capitalize()
        cards.joinpath(f"{card_id}.md").write_text(
            f"---\nid: {card_id}\ntitle: {title}\nstatus: {rng.choice(['todo', 'active', 'done'])}"
            f"\npriority: {rng.choice(['low', 'medium', 'high'])}\nassignee: dev{n % 5}\n"
            f"tags: [{rng.choice(WORDS)}]\ndepends_on: [{', '.join(deps)}]\n"
            f"created: '2026-01-01T00:00:00Z'\n---\n# {title}\n\n"
            f"See @doc/tutorial/{rng.choice(WORDS)}.\n"
        )
    return root


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def first_answer(root: Path) -> float:
    started = time.perf_counter()
    params = StdioServerParameters(command=CUE, args=["-C", str(root), "mcp"], env=_env())
    async with Client(params, mode="legacy") as client:
        await client.call_tool("read_doc", {"path": "index.md", "limit": 5})
        return (time.perf_counter() - started) * 1000


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("CUEDECK_", "CUE_"))}


def call_plan(root: Path, seed: int) -> list[tuple[str, str, Callable[[], dict[str, Any]]]]:
    """(label, tool, make_arguments) of every measured call."""
    docs = sorted(
        p.relative_to(root).as_posix() for p in root.rglob("*.md") if ".cuedeck" not in p.parts
    )
    rng = random.Random(seed)
    return [
        ("read_doc", "read_doc", lambda: {"path": rng.choice(docs)}),
        ("list_tasks", "list_tasks", lambda: {"status": rng.choice(["todo", "active", "done"])}),
        (
            "update_task",
            "update_task",
            lambda: {
                "id": f"c{rng.randrange(CARDS):05d}",
                "updates": {"priority": rng.choice(["low", "medium", "high"])},
            },
        ),
        (
            "read_context keyword",
            "read_context",
            lambda: {"query": " ".join(rng.sample(WORDS, 2)), "mode": "keyword"},
        ),
        (
            "read_context hybrid",
            "read_context",
            lambda: {"query": " ".join(rng.sample(WORDS, 2)), "mode": "hybrid"},
        ),
    ]


async def timed_calls(root: Path, calls: int) -> tuple[dict[str, list[float]], tuple[int, str]]:
    """Round trips through `cue mcp` over stdio, as the SDK client sees them."""
    samples: dict[str, list[float]] = {}
    params = StdioServerParameters(command=CUE, args=["-C", str(root), "mcp"], env=_env())
    async with Client(params, mode="legacy") as client:
        listed = await client.list_tools()
        tools_json = json.dumps(
            [
                tool.model_dump(by_alias=True, exclude_none=True, mode="json")
                for tool in listed.tools
            ]
        )
        for label, tool, make_args in call_plan(root, 11):
            await client.call_tool(tool, make_args())  # warm-up (model load, caches)
            times = []
            for _ in range(calls):
                args = make_args()
                started = time.perf_counter()
                result = await client.call_tool(tool, args)
                times.append((time.perf_counter() - started) * 1000)
                if result.is_error:
                    raise SystemExit(f"{tool} failed: {result.content}")
            samples[label] = times
    return samples, count_tokens(tools_json)


def server_side(root: Path, calls: int) -> dict[str, list[float]]:
    """The same calls in process, through the server's runtime (refresh, call, mask).

    The difference to the round trip is the transport: JSON-RPC framing, FastMCP's
    result models, and the SDK client validating structured content against the tool's
    output schema (jsonschema, in Python: most of it for long lists).
    """
    from cuedeck.workspace import open_workspace
    from cuedeck_mcp.runtime import WorkspaceRuntime

    workspace = open_workspace(root)
    runtime = WorkspaceRuntime(workspace)
    tools = workspace.plugins.tools()
    samples: dict[str, list[float]] = {}
    for label, tool, make_args in call_plan(root, 11):
        runtime.call_tool(tools[tool], make_args())
        times = []
        for _ in range(calls):
            args = make_args()
            started = time.perf_counter()
            runtime.call_tool(tools[tool], args)
            times.append((time.perf_counter() - started) * 1000)
        samples[label] = times
    runtime.close()
    return samples


def count_tokens(text: str) -> tuple[int, str]:
    """Tokens of ``text`` and the counter's name (o200k when installed, else the estimate)."""
    from cuedeck.token_counts import EstimateCounter, O200kCounter

    counter = O200kCounter.load() or EstimateCounter()
    return counter.count(text), counter.name


def _teams() -> Any:
    """benchmarks/mcp_teams.py: profiles and roles, three workspaces, uvicorn workers."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_mcp_teams", HERE / "mcp_teams.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--corpora")
    parser.add_argument("--json", default=str(HERE / "results" / "mcp.json"))
    parser.add_argument("--skip-teams", action="store_true", help="leave out mcp_teams.py")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = make_workspace(corpora_dir(options.corpora), Path(tmp))
        cold = anyio.run(first_answer, root)
        warm = statistics.median(anyio.run(first_answer, root) for _ in range(3))
        samples, tools_tokens = anyio.run(timed_calls, root, options.calls)
        inside = server_side(root, options.calls)
    rows: dict[str, dict[str, float]] = {
        label: {
            "p50_ms": percentile(times, 0.5),
            "p95_ms": percentile(times, 0.95),
            "server_p50_ms": percentile(inside[label], 0.5),
            "calls": len(times),
        }
        for label, times in samples.items()
    }
    rows["first answer (cold)"] = {"p50_ms": cold, "p95_ms": cold, "calls": 1}
    rows["first answer (warm)"] = {"p50_ms": warm, "p95_ms": warm, "calls": 3}
    print(f"{'measure':24} {'p50 ms':>8} {'p95 ms':>8} {'server':>8} {'target':>8}")
    for label, row in rows.items():
        target = TARGETS_MS.get(label)
        mark = "" if target is None else ("ok" if row["p50_ms"] < target else "MISS")
        shown = f"{target:g}" if target else "-"
        inner = f"{row['server_p50_ms']:8.2f}" if "server_p50_ms" in row else f"{'-':>8}"
        print(f"{label:24} {row['p50_ms']:8.2f} {row['p95_ms']:8.2f} {inner} {shown:>8} {mark}")
    print(f"tools/list: {tools_tokens[0]} tokens by {tools_tokens[1]} (budget 3000)")
    teams = _teams().run(corpora_dir(options.corpora)) if not options.skip_teams else {}
    out = Path(options.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "cards": CARDS,
                "targets_ms": TARGETS_MS,
                "results": rows,
                "tools_list_tokens": tools_tokens[0],
                "token_counter": tools_tokens[1],
                "teams": teams,
            },
            indent=2,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
