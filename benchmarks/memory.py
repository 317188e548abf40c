"""Memory benchmark: CueDeck's memory tools over MCP, as agents meet them, beside the Out
of Context server on the same workload in the same run.

    uv run python benchmarks/memory.py [--sizes 10000,100000] [--peer-size 10000]
        [--peer-source DIR] [--no-peer] [--json PATH]

The workload: segments made of one to six paragraphs of the tldr and fastapi corpora
(mixed types, 40 tasks, 7 tags, 20% in one of 500 topics, 10% referring to an earlier
segment, 1% pinned). Each server runs as a subprocess driven over stdio by the official
MCP client (the ``mcp`` package), as an agent drives it:

- ingest: ``context_capture`` in batches of 1,000 (the Out of Context server has no
  capture tool: its ingest is ``context_analyze_usage`` with the batch as
  ``context_descriptors.recent_messages``, the way it takes new context);
- ``context_analyze_usage`` and ``context_gc_analyze`` with a plan (target 10% of the
  tokens) over the whole working set, medians of 7; an unpaged gc request
  (``max_tokens`` 10,000,000) is expected to be refused;
- stash: the oldest 95% through ``context_gc_prune`` (10,000 ids a call), per segment;
- ``context_search_stashed``, 50 one-word queries drawn from the texts, limit 20: p50/p95;
- restart: a client starting ``cue mcp`` again, from spawn to the first
  ``context_analyze_usage`` answer (median of 3). CueDeck's ``cue mcp`` relays to the
  workspace's resident server, kept warm between clients (docs/mcp.md), so three more
  figures start everything anew: ``restart_cold_s`` after ``cue mcp stop`` (the first
  start after a reboot or an upgrade), ``restart_own_process_s`` with no resident
  server (``CUEDECK_MCP_RESIDENT=0``), and ``restart_empty_s`` on an empty workspace;
- peak RSS of the server process (VmHWM; for CueDeck the larger of the relay and the
  resident server), and disk (allocated blocks) against the
  segments' text.

Beside the MCP figures: the same calls in process, and how well stash queries rank (the
segment a query was drawn from: hit@1 and MRR with BM25 against newest-first).

The peer is installed into its own virtual environment under ``benchmarks/results/``:
``hjeon139-mcp-outofcontext==0.13.1`` (the server whose API the spec describes), or, as
that version is not on the package index, from a checkout of its public source at that
version given with ``--peer-source`` (``$CUEDECK_OOC_SOURCE``). Its tokenizer
(tiktoken's cl100k_base) is served from the copy bpe-openai packages, so nothing is
downloaded at run time.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

HERE = Path(__file__).resolve().parent
# Run as a script, this file's folder comes first on sys.path and "mcp" would name this
# file's neighbour instead of the MCP SDK.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != HERE]

from mcp.client import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

REPO = HERE.parent
CUE = str(Path(sys.executable).with_name("cue"))
PEER = "hjeon139-mcp-outofcontext"
PEER_VERSION = "0.13.1"
TYPES = ("message", "code", "log", "decision", "note", "summary")
BATCH = 1000
#: How long the stash phase may take: the Out of Context server rewrites its whole stash
#: file for every segment stashed, so 9,500 of them would take hours.
STASH_BUDGET_S = 120.0
#: Targets over MCP at 100,000 segments (issue 29).
TARGETS = {
    "ingest_per_s": (">=", 5000),
    "analyze_usage_ms": ("<", 100),
    "gc_analyze_plan_ms": ("<", 300),
    "search_p95_ms": ("<", 20),
    "restart_s": ("<", 1.0),
    "peak_rss_mb": ("<", 300),
    "disk_ratio": ("<=", 2.0),
}
#: tiktoken's cl100k_base from bpe-openai's packaged copy: the peer downloads nothing.
PEER_SITE = '''"""Serve tiktoken's encodings from bpe-openai's packaged copies (no download)."""
import gzip, importlib.util, os
try:
    import tiktoken.load as _load
except ImportError:
    _load = None
if _load is not None:
    _original = _load.read_file_cached

    def _read(blobpath, expected_hash=None):
        name = os.path.basename(blobpath)
        spec = importlib.util.find_spec("bpe_openai")
        if spec and spec.origin and name.endswith(".tiktoken"):
            local = os.path.join(os.path.dirname(spec.origin), "data", name + ".gz")
            if os.path.exists(local):
                with gzip.open(local, "rb") as handle:
                    return handle.read()
        return _original(blobpath, expected_hash)

    _load.read_file_cached = _read
'''


def corpora() -> Path:
    for candidate in (
        os.environ.get("CUEDECK_CORPORA"),
        REPO.parent / "shared" / "corpora",
        Path("/work/shared/corpora"),
    ):
        if candidate and (Path(candidate) / "tldr-pages-en.tar.gz").is_file():
            return Path(candidate)
    sys.exit("shared corpora not found; set CUEDECK_CORPORA")


def paragraphs(folder: Path) -> list[str]:
    found: list[str] = []
    for name in ("tldr-pages-en", "fastapi-docs-en"):
        with tarfile.open(folder / f"{name}.tar.gz") as archive:
            for member in archive.getmembers():
                if not member.isfile() or not member.name.endswith(".md"):
                    continue
                handle = archive.extractfile(member)
                if handle is None:
                    continue
                text = handle.read().decode("utf-8", "replace")
                found.extend(p.strip() for p in text.split("\n\n") if len(p.strip()) > 40)
    random.Random(7).shuffle(found)
    return found


def workload(size: int) -> list[dict[str, Any]]:
    """``size`` segments (without refs: those need the ids a capture returns)."""
    pool = paragraphs(corpora())
    rng = random.Random(11)
    made = []
    at = 0
    for n in range(size):
        count = rng.randint(1, 6)
        text = "\n\n".join(pool[(at + k) % len(pool)] for k in range(count))
        at += count
        if at >= len(pool):  # a second lap: keep every text distinct
            text += f" ({n})"
        made.append(
            {
                "text": text,
                "type": TYPES[n % len(TYPES)],
                "task_id": f"task-{n % 40}",
                "tags": [f"t{n % 7}"],
                "topic_id": f"topic-{rng.randrange(500)}" if rng.random() < 0.2 else None,
                "pinned": rng.random() < 0.01,
                "_ref": rng.random() < 0.1,
            }
        )
    return made


def ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def env_without_noise(extra: dict[str, str] | None = None) -> dict[str, str]:
    """This environment without CueDeck's variables and PYTHONDONTWRITEBYTECODE (which
    makes every process recompile its sources)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CUEDECK_", "CUE_")) and k != "PYTHONDONTWRITEBYTECODE"
    }
    env.update(extra or {})
    return env


def children_rss_peak(name: str | bytes) -> float | None:
    """Peak RSS (MB) of this process's descendants whose command line holds ``name``, or
    of any process's whose holds it when ``name`` is bytes (CueDeck's resident server,
    which outlives the relay that started it); the largest."""
    parents: dict[str, str] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
                parents[entry] = stat.rsplit(")", 1)[1].split()[1]
            except (OSError, IndexError):
                continue
    me, peaks = str(os.getpid()), []
    for entry in parents:
        ancestor = parents.get(entry)
        while ancestor not in (None, "0", "1", me):
            ancestor = parents.get(ancestor)
        if ancestor != me and isinstance(name, str):
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            wanted = name if isinstance(name, bytes) else name.encode()
            if wanted not in cmdline.replace(b"\0", b" "):
                continue
            for line in Path(f"/proc/{entry}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peaks.append(round(int(line.split()[1]) / 1024, 1))
        except OSError:
            continue
    return max(peaks) if peaks else None


def allocated(folder: Path) -> int:
    """Bytes of disk the files under ``folder`` take (allocated blocks)."""
    return sum(p.stat().st_blocks * 512 for p in folder.rglob("*") if p.is_file())


def reply(result: Any) -> Any:
    """A tool result's JSON, whether structured or text."""
    if getattr(result, "is_error", False) or getattr(result, "isError", False):
        raise RuntimeError(result.content[0].text if result.content else "tool error")
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


# -- the servers ---------------------------------------------------------------------------


class Served:
    """How to start one server, and how it takes the workload."""

    name: str
    process_name: str

    def params(self) -> StdioServerParameters:
        raise NotImplementedError

    def ingest_call(
        self, batch: list[dict[str, Any]], ids: list[str]
    ) -> tuple[str, dict[str, Any]]:
        raise NotImplementedError

    def disk_folder(self) -> Path:
        raise NotImplementedError

    def rss_peak(self) -> float | None:
        """Peak RSS (MB) of the server process."""
        return children_rss_peak(self.process_name)


class CueDeck(Served):
    name = "CueDeck"
    process_name = "mcp"

    def __init__(self, root: Path) -> None:
        self.root = root
        (root / ".cuedeck").mkdir(parents=True)
        (root / ".cuedeck" / "config.toml").write_text('[mcp]\nlocal_role = "admin"\n')

    def params(self, **extra: str) -> StdioServerParameters:
        args = ["-C", str(self.root), "mcp", "--tools", "core,memory"]
        return StdioServerParameters(command=CUE, args=args, env=env_without_noise(extra))

    def rss_peak(self) -> float | None:
        """Peak RSS (MB) of the relay or the resident server behind it, the larger."""
        relay = children_rss_peak(self.process_name)
        server = children_rss_peak(f"cuedeck_cli -C {self.root} mcp".encode())
        return max((x for x in (relay, server) if x is not None), default=None)

    def stop(self) -> None:
        """Stop the workspace's resident server (the next client starts one)."""
        stop = [CUE, "-C", str(self.root), "mcp", "stop"]
        subprocess.run(stop, check=True, capture_output=True, env=env_without_noise())

    def ingest_call(
        self, batch: list[dict[str, Any]], ids: list[str]
    ) -> tuple[str, dict[str, Any]]:
        rng = random.Random(len(ids))
        segments = []
        for item in batch:
            segment = {k: v for k, v in item.items() if not k.startswith("_") and v is not None}
            if item["_ref"] and ids:
                segment["refs"] = [ids[rng.randrange(len(ids))]]
            segments.append(segment)
        return "context_capture", {"project_id": "bench", "segments": segments, "max_tokens": 2000}

    def disk_folder(self) -> Path:
        return self.root / ".cuedeck" / "memory"


class OutOfContext(Served):
    name = "Out of Context"
    process_name = "hjeon139_mcp_outofcontext"

    def __init__(self, root: Path, python: Path) -> None:
        self.root = root
        self.python = python
        root.mkdir(parents=True)

    def params(self) -> StdioServerParameters:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.root),
            "OUT_OF_CONTEXT_STORAGE_PATH": str(self.root / ".out_of_context"),
            "OUT_OF_CONTEXT_LOG_LEVEL": "WARNING",
        }
        return StdioServerParameters(
            command=str(self.python),
            args=["-m", "hjeon139_mcp_outofcontext.main"],
            env=env,
            cwd=str(self.root),
        )

    def ingest_call(
        self, batch: list[dict[str, Any]], ids: list[str]
    ) -> tuple[str, dict[str, Any]]:
        messages = [
            {"role": "user" if n % 2 else "assistant", "content": item["text"]}
            for n, item in enumerate(batch)
        ]
        descriptors = {
            "recent_messages": messages,
            "token_usage": {"current": 0, "limit": 1_000_000, "usage_percent": 0.0},
        }
        return "context_analyze_usage", {"project_id": "bench", "context_descriptors": descriptors}

    def disk_folder(self) -> Path:
        return self.root / ".out_of_context"


def install_peer(source: str | None) -> Path | None:
    """The peer's python in its own virtual environment, or None (and why, printed)."""
    venv = HERE / "results" / "peers" / "outofcontext"
    python = venv / "bin" / "python"
    marker = venv / "installed.txt"
    if marker.is_file():
        return python
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    # The 0.13.1 server was written for the 1.x MCP SDK; bpe-openai carries the tokenizer
    # data tiktoken would download.
    support = ["mcp>=1.0,<2", "bpe-openai", "tiktoken"]
    tried = subprocess.run(
        [*pip, f"{PEER}=={PEER_VERSION}", *support], capture_output=True, text=True
    )
    if tried.returncode != 0:
        last = tried.stderr.strip().splitlines()[-1:]
        print(f"peer: {PEER}=={PEER_VERSION} is not on the package index ({last})")
        if not source:
            print(
                "peer: pass --peer-source DIR (a checkout of its public source at 0.13.1) to run it"
            )
            return None
        tried = subprocess.run([*pip, source, *support], capture_output=True, text=True)
        if tried.returncode != 0:
            print(f"peer: installing {source} failed: {tried.stderr.strip()[-400:]}")
            return None
    version = subprocess.run(
        [str(python), "-c", f"import importlib.metadata as m; print(m.version({PEER!r}))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(site, "sitecustomize.py").write_text(PEER_SITE)
    marker.write_text(f"{PEER} {version}\n")
    return python


async def measure(served: Served, items: list[dict[str, Any]]) -> dict[str, Any]:
    """Every MCP figure of one server on ``items``."""
    out: dict[str, Any] = {"server": served.name, "segments": len(items)}
    ids: list[str] = []
    async with Client(served.params(), mode="legacy") as client:
        spent = 0.0
        for start in range(0, len(items), BATCH):
            tool, arguments = served.ingest_call(items[start : start + BATCH], ids)
            began = time.perf_counter()
            got = reply(await client.call_tool(tool, arguments))
            spent += time.perf_counter() - began
            ids.extend(got.get("segment_ids", []))
        out["ingest_per_s"] = round(len(items) / spent)

        async def timed(tool: str, arguments: dict[str, Any], runs: int = 7) -> tuple[float, int]:
            reply(await client.call_tool(tool, arguments))  # warm
            samples, size = [], 0
            for _ in range(runs):
                began = time.perf_counter()
                result = await client.call_tool(tool, arguments)
                samples.append(time.perf_counter() - began)
                size = len(json.dumps(reply(result)))
            return statistics.median(samples), size

        usage_args = {"project_id": "bench"}
        usage_s, usage_bytes = await timed("context_analyze_usage", usage_args)
        usage = reply(await client.call_tool("context_analyze_usage", usage_args))
        total_tokens = int(usage["usage_metrics"]["total_tokens"])
        out["analyze_usage_ms"] = ms(usage_s)
        out["analyze_usage_reply_kb"] = round(usage_bytes / 1024, 1)
        plan_args = {"project_id": "bench", "target_tokens": max(1, total_tokens // 10)}
        plan_s, plan_bytes = await timed("context_gc_analyze", plan_args, runs=5)
        out["gc_analyze_plan_ms"] = ms(plan_s)
        out["gc_analyze_reply_kb"] = round(plan_bytes / 1024, 1)
        if isinstance(served, CueDeck):
            from mcp import MCPError

            try:
                await client.call_tool(
                    "context_gc_analyze", {**plan_args, "max_tokens": 10_000_000}
                )
                out["gc_analyze_unpaged"] = "answered"
            except MCPError as exc:
                out["gc_analyze_unpaged"] = f"refused ({exc.error.code})"
        if not ids:  # the peer returns no ids from its ingest: its candidates are all of them
            analysis = reply(await client.call_tool("context_gc_analyze", {"project_id": "bench"}))
            ids = sorted(
                (c["segment_id"] for c in analysis["pruning_candidates"]),
                key=lambda i: (len(i), i),
            )
        # The oldest 95%, in calls of at most 10,000 ids; a server slower than
        # STASH_BUDGET_S stops there, and the stash it reached is reported.
        stash = ids[: len(ids) * 95 // 100]
        chunk = 10_000 if isinstance(served, CueDeck) else 500
        done = 0
        began = time.perf_counter()
        while done < len(stash) and time.perf_counter() - began < STASH_BUDGET_S:
            part = stash[done : done + chunk]
            reply(
                await client.call_tool(
                    "context_gc_prune",
                    {"project_id": "bench", "segment_ids": part, "action": "stash"},
                )
            )
            done += len(part)
        spent = time.perf_counter() - began
        out["stash_ms_per_segment"] = round(1000 * spent / max(1, done), 3)
        out["stashed"] = done
        words = [
            w for item in items[:2000] for w in item["text"].split() if w.isalpha() and len(w) > 5
        ]
        samples, totals = [], []
        for query in random.Random(3).sample(words, 50):
            began = time.perf_counter()
            found = reply(
                await client.call_tool(
                    "context_search_stashed", {"project_id": "bench", "query": query, "limit": 20}
                )
            )
            samples.append(time.perf_counter() - began)
            totals.append(int(found.get("total_matches", 0)))
        out["search_p50_ms"] = ms(percentile(samples, 0.5))
        out["search_p95_ms"] = ms(percentile(samples, 0.95))
        out["search_total_matches_max"] = max(totals)
        out["peak_rss_mb"] = served.rss_peak()
    restarts = []
    for _ in range(3):
        began = time.perf_counter()
        async with Client(served.params(), mode="legacy") as client:
            reply(await client.call_tool("context_analyze_usage", {"project_id": "bench"}))
            restarts.append(time.perf_counter() - began)
            rss = served.rss_peak()
            if rss is not None:
                out["restart_rss_mb"] = rss
    out["restart_s"] = round(statistics.median(restarts), 3)
    if isinstance(served, CueDeck):
        # The restarts above reach the resident server `cue mcp` keeps warm; these start
        # everything anew: after `cue mcp stop` (a resident server started, as after a
        # reboot), and with no resident server at all (each client its own process).
        for label, extra in (
            ("restart_cold_s", {}),
            ("restart_own_process_s", {"CUEDECK_MCP_RESIDENT": "0"}),
        ):
            starts = []
            for _ in range(3):
                served.stop()
                began = time.perf_counter()
                async with Client(served.params(**extra), mode="legacy") as client:
                    reply(await client.call_tool("context_analyze_usage", {"project_id": "bench"}))
                    starts.append(time.perf_counter() - began)
            out[label] = round(statistics.median(starts), 3)
        # The floor: the same server on a workspace with no memory, first answer.
        floor = CueDeck(served.root.parent / f"{served.root.name}-empty")
        starts = []
        for _ in range(3):
            began = time.perf_counter()
            async with Client(floor.params(), mode="legacy") as client:
                reply(await client.call_tool("context_list_projects", {}))
                starts.append(time.perf_counter() - began)
            floor.stop()
        out["restart_empty_s"] = round(statistics.median(starts), 3)
        served.stop()
    text_bytes = sum(len(item["text"].encode()) for item in items)
    disk = allocated(served.disk_folder())
    out["text_mb"] = round(text_bytes / 1e6, 1)
    out["disk_mb"] = round(disk / 1e6, 1)
    out["disk_ratio"] = round(disk / text_bytes, 2)
    return out


def in_process(root: Path, items: list[dict[str, Any]]) -> dict[str, Any]:
    """The same calls in process on the store the MCP run left, and stash ranking quality."""
    import numpy as np

    from cuedeck.workspace import open_workspace
    from cuedeck_memory import ranking

    workspace = open_workspace(root)
    tools = workspace.plugins.tools()
    store = workspace.service("memory")

    def run(tool: str, runs: int = 7, **arguments: Any) -> float:
        tools[tool].call(workspace, arguments)
        samples = []
        for _ in range(runs):
            began = time.perf_counter()
            tools[tool].call(workspace, arguments)
            samples.append(time.perf_counter() - began)
        return statistics.median(samples)

    out: dict[str, Any] = {
        "analyze_usage_ms": ms(run("context_analyze_usage", project_id="bench")),
        "gc_analyze_plan_ms": ms(
            run("context_gc_analyze", 5, project_id="bench", target_tokens=10_000)
        ),
    }
    words = [w for item in items[:2000] for w in item["text"].split() if w.isalpha() and len(w) > 5]
    samples = []
    for query in random.Random(3).sample(words, 50):
        began = time.perf_counter()
        tools["context_search_stashed"].call(
            workspace, {"project_id": "bench", "query": query, "limit": 20}
        )
        samples.append(time.perf_counter() - began)
    out["search_p50_ms"] = ms(percentile(samples, 0.5))
    out["search_p95_ms"] = ms(percentile(samples, 0.95))
    # Ranking: queries drawn from a stashed segment; where does that segment come?
    table = store.table
    stashed = table.rows("bench", stashed=True)
    rng = random.Random(5)
    sources = rng.sample(stashed.tolist(), min(200, len(stashed)))
    texts = store.fetch(sources)
    ranks: dict[str, list[tuple[int, int]]] = {"one word": [], "two words": []}
    no_filters = ranking.parse_filters(None)
    for rowid in sources:
        words_of = sorted(
            {w.lower() for w in texts[rowid].text.split() if w.isalpha() and len(w) > 4}
        )
        if len(words_of) < 2:
            continue
        rng.shuffle(words_of)
        for kind, query in (("one word", words_of[0]), ("two words", " ".join(words_of[:2]))):
            found = ranking.find(store, "bench", query, no_filters, stashed=True, limit=10_000)
            if rowid not in found.rowids:
                continue
            matched = np.asarray(found.rowids, np.int64)
            newest = ranking.newest_first(table, matched).tolist()
            ranks[kind].append((found.rowids.index(rowid) + 1, newest.index(rowid) + 1))
    quality = {}
    for kind, pairs in ranks.items():
        if not pairs:
            continue
        quality[kind] = {
            "queries": len(pairs),
            "bm25_hit1": round(sum(b == 1 for b, _ in pairs) / len(pairs), 3),
            "newest_hit1": round(sum(n == 1 for _, n in pairs) / len(pairs), 3),
            "bm25_mrr": round(sum(1 / b for b, _ in pairs) / len(pairs), 3),
            "newest_mrr": round(sum(1 / n for _, n in pairs) / len(pairs), 3),
        }
    out["ranking"] = quality
    store.close()
    return out


def verdict(key: str, value: Any) -> str:
    if key not in TARGETS or value is None:
        return ""
    op, target = TARGETS[key]
    ok = value >= target if op == ">=" else value < target if op == "<" else value <= target
    return f"{op} {target:g} {'ok' if ok else 'MISSED'}"


def table(rows: list[dict[str, Any]]) -> str:
    keys = [
        "ingest_per_s",
        "analyze_usage_ms",
        "analyze_usage_reply_kb",
        "gc_analyze_plan_ms",
        "gc_analyze_reply_kb",
        "gc_analyze_unpaged",
        "stash_ms_per_segment",
        "stashed",
        "search_p50_ms",
        "search_p95_ms",
        "search_total_matches_max",
        "restart_s",
        "restart_cold_s",
        "restart_own_process_s",
        "restart_empty_s",
        "peak_rss_mb",
        "restart_rss_mb",
        "text_mb",
        "disk_mb",
        "disk_ratio",
    ]
    heads = [f"{r['server']}, {r['segments'] // 1000}k" for r in rows]
    lines = [
        "| over MCP | " + " | ".join(heads) + " | target at 100k |",
        "|---" * (len(rows) + 2) + "|",
    ]
    for key in keys:
        cells = [str(r.get(key, "")) for r in rows]
        last = next((r for r in reversed(rows) if r["server"] == "CueDeck"), rows[-1])
        lines.append(f"| {key} | " + " | ".join(cells) + f" | {verdict(key, last.get(key))} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000", help="CueDeck's sizes, comma-separated")
    parser.add_argument("--peer-size", type=int, default=10_000)
    parser.add_argument("--peer-source", default=os.environ.get("CUEDECK_OOC_SOURCE"))
    parser.add_argument("--no-peer", action="store_true")
    parser.add_argument("--json", type=Path, default=HERE / "results" / "memory.json")
    parser.add_argument("--dir", type=Path, default=None, help="Where to build the workspaces.")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    scratch = Path(tempfile.mkdtemp(prefix="cuedeck-memory-bench-", dir=args.dir))
    load = os.getloadavg()
    print(f"load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}", flush=True)
    items = workload(max([*sizes, args.peer_size]))
    rows: list[dict[str, Any]] = []
    inside: dict[str, Any] = {}
    peer_python = None if args.no_peer else install_peer(args.peer_source)
    if peer_python is not None:
        print(
            f"peer: {(peer_python.parent.parent / 'installed.txt').read_text().strip()}", flush=True
        )
        peer = OutOfContext(scratch / f"peer-{args.peer_size}", peer_python)
        rows.append(anyio.run(measure, peer, items[: args.peer_size]))
        print(json.dumps(rows[-1]), flush=True)
    for size in sizes:
        cuedeck = CueDeck(scratch / f"cuedeck-{size}")
        rows.append(anyio.run(measure, cuedeck, items[:size]))
        print(json.dumps(rows[-1]), flush=True)
        inside[str(size)] = in_process(cuedeck.root, items[:size])
        print(json.dumps({"in process": size, **inside[str(size)]}), flush=True)
    load = os.getloadavg()
    print(f"load average at end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(table(rows))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(
        json.dumps({"load_end": load, "mcp": rows, "in_process": inside}, indent=2) + "\n"
    )


if __name__ == "__main__":
    main()
