"""Memory benchmark: 100,000 segments built from the shared corpora.

    uv run python benchmarks/memory.py [--segments 100000] [--working 5000] [--json PATH]

Paragraphs of the tldr and fastapi corpora become segments of mixed types, created over
30 days (ages spread evenly), 1% pinned, 10% referring to an earlier segment, 20% in
one of 500 topics; ``--working`` of them (the newest) stay in the working tier, the
rest are stashed, as after a month of GC. Measured: capture throughput (batches of
1,000 through the capture path: masking, token counts, one file per segment, index
rows), context_analyze_usage, context_gc_analyze with a plan, keyword stash search p50
over 50 queries, restart to first answer (a new process: open, bring the index in step
with 100,000 files, answer context_analyze_usage) and disk used. The analyses are run
on the working tier the tools read; ``--working 100000`` measures the worst case where
nothing was ever stashed. Besides the first answer, the restart reports when that process
exits (its background look at every file's stat done) and how long ``cue memory list``
takes (a command looks at every file before it answers).
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

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
TARGETS = {
    "capture_per_s": 2000,
    "analyze_usage_ms": 100,
    "gc_analyze_plan_ms": 300,
    "keyword_search_p50_ms": 20,
    "restart_s": 1.0,
}
TYPES = ("message", "code", "log", "decision", "note", "summary")

_RESTART = r"""
import sys, time
started = time.perf_counter()
from cuedeck.plugins import get_tools
from cuedeck.workspace import open_workspace
workspace = open_workspace(sys.argv[1])
get_tools(workspace.plugins)["context_analyze_usage"].call(workspace, {"project_id": "bench"})
print(time.perf_counter() - started)
"""


def corpora() -> Path:
    for candidate in (
        os.environ.get("CUEDECK_CORPORA"),
        REPO.parent / "shared" / "corpora",
        Path("/work/shared/corpora"),
    ):
        if candidate and (Path(candidate) / "tldr-pages-en.tar.gz").is_file():
            return Path(candidate)
    sys.exit("shared corpora not found; set CUEDECK_CORPORA")


def paragraphs(folder: Path, wanted: int) -> list[str]:
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
    return [found[n % len(found)] + ("" if n < len(found) else f" ({n})") for n in range(wanted)]


def ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--segments", type=int, default=100_000)
    parser.add_argument("--working", type=int, default=5_000)
    parser.add_argument("--json", type=Path, default=HERE / "results" / "memory.json")
    parser.add_argument("--dir", type=Path, default=None, help="Where to build the workspace.")
    args = parser.parse_args()

    from cuedeck.workspace import open_workspace
    from cuedeck_memory.plugin import memory_store
    from cuedeck_memory.segments import Segment
    from cuedeck_memory.store import MemoryStore

    texts = paragraphs(corpora(), args.segments)
    scratch = Path(tempfile.mkdtemp(prefix="cuedeck-memory-bench-", dir=args.dir))
    (scratch / ".cuedeck" / "cards").mkdir(parents=True)
    workspace = open_workspace(scratch)
    rng = random.Random(11)
    now = time.time()
    start_time = now - 30 * 86400
    step = 30 * 86400 / args.segments
    ids: list[str] = []
    capture_seconds = 0.0
    batch = 1000
    first_working = args.segments - args.working
    clock = [start_time]
    store = MemoryStore(workspace, clock=lambda: clock[0])
    for first in range(0, args.segments, batch):
        clock[0] = start_time + first * step
        started = time.perf_counter()
        session = workspace.mask_session()
        drafts = []
        for n in range(first, min(first + batch, args.segments)):
            refs = (ids[rng.randrange(len(ids))],) if ids and rng.random() < 0.1 else ()
            drafts.append(
                Segment(
                    id="",
                    type=TYPES[n % len(TYPES)],
                    text=session.mask(texts[n]),
                    project_id="bench",
                    created_at=0.0,
                    task_id=f"task-{n % 40}",
                    tags=(f"t{n % 7}",),
                    topic_id=f"topic-{rng.randrange(500)}" if rng.random() < 0.2 else None,
                    refs=refs,
                    pinned=rng.random() < 0.01,
                    tier="working" if n >= first_working else "stashed",
                )
            )
        added = store.add("bench", drafts)
        capture_seconds += time.perf_counter() - started
        ids.extend(s.id for s in added)
    store.close()
    rate = args.segments / capture_seconds

    store = memory_store(open_workspace(scratch))
    from cuedeck.plugins import get_tools
    from cuedeck_memory.plugin import register_tools  # noqa: F401 (the tools are registered)

    tools = get_tools(store.workspace.plugins)
    ws = store.workspace
    ws._services["memory"] = store  # the store just measured

    def timed(tool: str, runs: int = 7, **arguments: object) -> float:
        tools[tool].call(ws, arguments)  # warm: first refresh of this process
        samples = []
        for _ in range(runs):
            started = time.perf_counter()
            tools[tool].call(ws, arguments)
            samples.append(time.perf_counter() - started)
        return statistics.median(samples)

    usage = timed("context_analyze_usage", project_id="bench")
    gc = timed("context_gc_analyze", project_id="bench", target_tokens=50_000)
    words = [w for t in texts[:2000] for w in t.split() if w.isalpha() and len(w) > 5]
    queries = random.Random(3).sample(words, 50)
    samples = []
    for query in queries:
        started = time.perf_counter()
        tools["context_search_stashed"].call(
            ws, {"project_id": "bench", "query": query, "limit": 20}
        )
        samples.append(time.perf_counter() - started)
    search_p50 = statistics.median(samples)
    restarts, exits, commands = [], [], []
    for _ in range(3):
        started = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-c", _RESTART, str(scratch)],
            capture_output=True,
            text=True,
            check=True,
        )
        exits.append(time.perf_counter() - started)
        restarts.append(float(out.stdout.strip()))
    cue = str(Path(sys.executable).with_name("cue"))
    listing = [cue, "-C", str(scratch), "memory", "list", "-p", "bench", "--max-tokens", "500"]
    for _ in range(3):
        started = time.perf_counter()
        subprocess.run(listing, capture_output=True, check=True)
        commands.append(time.perf_counter() - started)
    restart = statistics.median(restarts)
    memory_bytes = sum(
        f.stat().st_size for f in (scratch / ".cuedeck" / "memory").rglob("*") if f.is_file()
    )
    cache = sum(f.stat().st_size for f in (scratch / ".cuedeck" / ".cache").glob("memory.sqlite3*"))
    results = {
        "segments": args.segments,
        "working": args.working,
        "capture_per_s": round(rate),
        "analyze_usage_ms": ms(usage),
        "gc_analyze_plan_ms": ms(gc),
        "keyword_search_p50_ms": ms(search_p50),
        "restart_s": round(restart, 3),
        "restart_look_done_s": round(statistics.median(exits), 3),
        "cli_list_s": round(statistics.median(commands), 3),
        "disk_files_mb": round(memory_bytes / 1e6, 1),
        "disk_index_mb": round(cache / 1e6, 1),
    }
    for key, target in TARGETS.items():
        value = results[key]
        ok = value >= target if key == "capture_per_s" else value < target
        print(
            f"{key:<24} {value:>10} (target {'>=' if key == 'capture_per_s' else '<'} "
            f"{target}) {'ok' if ok else 'MISSED'}"
        )
    print(
        f"restart: the process exits {results['restart_look_done_s']} s after its start "
        f"(its background look at every file done); `cue memory list` {results['cli_list_s']} s"
    )
    print(
        f"disk: {results['disk_files_mb']} MB of segment files, {results['disk_index_mb']} MB index"
    )
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
