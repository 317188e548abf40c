"""Index benchmark: cold index, warm open and incremental refresh on the shared corpora.

    uv run python benchmarks/index.py [--runs 5] [--corpora DIR] [--json PATH]

Each corpus is extracted into a temporary workspace. Every measurement is the median of
``--runs`` runs, each in a fresh process so that nothing is shared between runs but the
files and the SQLite cache. Peak memory is the largest resident set of those processes.
Incremental refresh is measured as `cue watch` and the MCP server see it: a running
process, one file edited, the median over nine edits of different files. The same run
times mistletoe (the parser of record) against the fast scanner on the same files,
which is why the index uses the latter.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPORA = ("fastapi-docs-en", "tldr-pages-en")
TARGETS = {
    "fastapi-docs-en": {"cold": 0.5, "warm": 0.05, "incremental": 0.005},
    "tldr-pages-en": {"cold": 5.0, "warm": 0.3},
}

# Runs in a child process: one measurement, printed as JSON.
_CHILD = r"""
import json, os, resource, sys, time
from pathlib import Path
mode, root = sys.argv[1], Path(sys.argv[2])
from cuedeck import open_workspace
from cuedeck.markdown.document import parse_document
from cuedeck.token_counts import EstimateCounter
result = {}
if mode in ("fast", "mistletoe"):
    count = EstimateCounter().count
    files = [(p.relative_to(root).as_posix(), p.read_bytes()) for p in sorted(root.rglob("*.md"))]
    started = time.perf_counter()
    for rel, data in files:
        parse_document(rel, data, count_tokens=count, engine=mode)
    result["seconds"] = time.perf_counter() - started
    result["files"] = len(files)
else:
    workspace = open_workspace(root)
    workspace.config, workspace.token_counter  # load config and plugins outside the timing
    if mode == "incremental":
        # As in `cue watch` or the MCP server: a running process sees one file change.
        workspace.refresh()
        pages = sys.argv[3:]
        samples = []
        for page in pages:
            path = root / page
            text = path.read_text(encoding="utf-8") + "\nOne more line.\n"
            path.write_text(text, encoding="utf-8")
            started = time.perf_counter()
            stats = workspace.refresh()
            samples.append(time.perf_counter() - started)
        result["seconds"] = sorted(samples)[len(samples) // 2]
    else:
        started = time.perf_counter()
        stats = workspace.refresh()
        result["seconds"] = time.perf_counter() - started
    result["files"] = stats.seen
    result["parsed"] = stats.parsed
result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(result))
"""


def corpora_dir(explicit: str | None) -> Path:
    shared = HERE.parent.parent / "shared" / "corpora"
    candidates = [explicit, os.environ.get("CUEDECK_CORPORA"), shared]
    for candidate in candidates:
        if candidate and (Path(candidate) / "fastapi-docs-en.tar.gz").is_file():
            return Path(candidate)
    sys.exit("shared corpora not found: pass --corpora DIR or set CUEDECK_CORPORA")


def child(mode: str, root: Path, *extra: str) -> dict[str, float]:
    env = {**os.environ}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, mode, str(root), *extra],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    return json.loads(out.stdout)


def measure(name: str, root: Path, runs: int) -> dict[str, object]:
    cache = root / ".cuedeck" / ".cache"
    pages = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md"))
    rows: dict[str, list[dict[str, float]]] = {"cold": [], "warm": [], "incremental": []}
    child("warm", root)  # warm the OS file cache and the bytecode
    for run in range(runs):
        subprocess.run(["rm", "-rf", str(cache)], check=True)
        rows["cold"].append(child("cold", root))
        rows["warm"].append(child("warm", root))
        edited = [pages[(run * 7 + k * 13) % len(pages)] for k in range(9)]
        rows["incremental"].append(child("incremental", root, *edited))
    parsers = {engine: child(engine, root) for engine in ("fast", "mistletoe")}
    result: dict[str, object] = {"corpus": name, "files": rows["cold"][0]["files"]}
    for mode, samples in rows.items():
        seconds = statistics.median(s["seconds"] for s in samples)
        result[mode] = {
            "median_s": round(seconds, 4),
            "files_per_s": round(samples[0]["files"] / seconds) if mode != "incremental" else None,
            "peak_rss_mb": round(max(s["peak_rss_mb"] for s in samples), 1),
            "target_s": TARGETS[name].get(mode),
        }
    result["parse_only"] = {k: round(v["seconds"], 3) for k, v in parsers.items()}
    return result


def table(results: list[dict[str, object]]) -> str:
    lines = [
        "| corpus | files | cold | warm open | incremental (1 file) | peak RSS | "
        "parse only: fast / mistletoe |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        cold, warm, inc = r["cold"], r["warm"], r["incremental"]  # type: ignore[index]

        def cell(m: dict[str, object]) -> str:
            target = f" (target < {m['target_s'] * 1000:g} ms)" if m["target_s"] else ""
            rate = f", {m['files_per_s']:,} files/s" if m.get("files_per_s") else ""
            return f"{float(m['median_s']) * 1000:.1f} ms{rate}{target}"  # type: ignore[arg-type]

        parse = r["parse_only"]  # type: ignore[index]
        lines.append(
            f"| {r['corpus']} | {r['files']:,} | {cell(cold)} | {cell(warm)} | {cell(inc)} | "
            f"{max(cold['peak_rss_mb'], warm['peak_rss_mb']):.0f} MB | "
            f"{parse['fast']:.2f} s / {parse['mistletoe']:.2f} s |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--corpora")
    parser.add_argument("--json", default=str(HERE / "results" / "index.json"))
    args = parser.parse_args()
    source = corpora_dir(args.corpora)
    results = []
    with tempfile.TemporaryDirectory(prefix="cuedeck-bench-") as tmp:
        for name in CORPORA:
            root = Path(tmp) / name
            (root / ".cuedeck").mkdir(parents=True)
            with tarfile.open(source / f"{name}.tar.gz") as archive:
                archive.extractall(root, filter="data")
            started = time.perf_counter()
            results.append(measure(name, root, args.runs))
            print(f"{name}: measured in {time.perf_counter() - started:.0f}s", file=sys.stderr)
    print(table(results))
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    machine = {"python": sys.version.split()[0], "cpus": os.cpu_count()}
    Path(args.json).write_text(json.dumps({"machine": machine, "results": results}, indent=2))
    print(f"\nJSON written to {args.json}", file=sys.stderr)


if __name__ == "__main__":
    main()
