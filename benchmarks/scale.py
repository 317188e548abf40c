"""Scale benchmark: 1k, 10k and 40k markdown files built from the tldr pages.

    uv run python benchmarks/scale.py [--sizes 1000,10000,40000] [--paced 10] [--corpora DIR]
        [--cache-only]

For each size, a workspace of renamed copies of the tldr pages (``pages/<n>/<page>.md``)
is indexed and measured: cold and warm index (`cue index` whole process), a 1-file
refresh in process, `cue search --mode keyword` whole process (wall time and peak RSS),
the in-process keyword query p50, `read_context` (keyword) over a real `cue mcp` stdio
session, back to back and paced (``--paced`` calls 3 s apart, after an edit elsewhere in
the tree), and the cache size on disk against the text it indexes, both right after a
user's `cue index` and first search and at the end. The peer is ripgrep on
the same query over the same files. Also `cue card list` with 1,000 cards (table and
--json). Writes benchmarks/results/scale.json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
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
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != HERE]

from mcp.client import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

REPO = HERE.parent
BIN = Path(sys.executable).parent
CUE = str(BIN / "cue")
QUERY = "extract a tar archive"
TARGETS = {
    "mcp keyword p50": 15.0,
    "mcp keyword p95": 50.0,
    "mcp keyword paced p50": 15.0,
    "mcp keyword paced p95": 50.0,
    "search process s": 0.5,
    "search process MB": 150.0,
    "cache / text": 2.0,
    "cache / text after cue index and search": 2.0,
}


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUEDECK_", "CUE_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def corpus_pages(corpora: Path, into: Path) -> list[tuple[str, bytes]]:
    with tarfile.open(corpora / "tldr-pages-en.tar.gz") as archive:
        archive.extractall(into, filter="data")
    pages = sorted((into / "tldr-pages-en").rglob("*.md"))
    return [(page.stem, page.read_bytes()) for page in pages]


def build(pages: list[tuple[str, bytes]], root: Path, size: int) -> int:
    """``size`` markdown files in ``root`` (copies of the pages, 500 per folder); text bytes."""
    (root / ".cuedeck" / "cards").mkdir(parents=True)
    (root / ".cuedeck" / "docs").mkdir()
    (root / ".cuedeck" / "config.toml").write_text("[rate_limits.read_context]\nper_minute = 0\n")
    total = 0
    for n in range(size):
        name, data = pages[n % len(pages)]
        folder = root / "pages" / f"{n // 500:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}-{n}.md").write_bytes(data)
        total += len(data)
    return total


def timed_process(argv: list[str], cwd: Path) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one process."""
    started = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    subprocess.run(argv, cwd=cwd, env=_env(), check=True, capture_output=True)
    wall = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return wall, max(peak, before) / 1024


def peak_rss(argv: list[str], cwd: Path) -> float:
    """Peak RSS (MB) of one process, measured by GNU time."""
    done = subprocess.run(
        ["/usr/bin/time", "-f", "%M", *argv], cwd=cwd, env=_env(), capture_output=True, text=True
    )
    return int(done.stderr.strip().splitlines()[-1]) / 1024


def in_process(root: Path) -> dict[str, float]:
    from cuedeck.workspace import open_workspace

    workspace = open_workspace(root)
    workspace.refresh()
    workspace.count_tokens("warm")  # the exact tokenizer is built on its first count
    target = next((root / "pages" / "000").glob("*.md"))
    target.write_text(target.read_text() + "\nOne more line.\n")
    started = time.perf_counter()
    workspace.index.refresh_paths([target.relative_to(root).as_posix()])
    one_file = (time.perf_counter() - started) * 1000
    tool = workspace.plugins.tools()["read_context"]
    tool.call(workspace, {"query": QUERY, "mode": "keyword"})
    times = []
    for _ in range(30):
        started = time.perf_counter()
        tool.call(workspace, {"query": QUERY, "mode": "keyword"})
        times.append((time.perf_counter() - started) * 1000)
    workspace.close()
    return {"1-file refresh ms": one_file, "in-process keyword p50 ms": statistics.median(times)}


def _p95(samples: list[float]) -> float:
    """The 95th percentile of ``samples``, its rank rounded down as in earlier results."""
    ordered = sorted(samples)
    return ordered[int(0.95 * (len(ordered) - 1))]


async def over_mcp(root: Path, paced: int) -> dict[str, float]:
    params = StdioServerParameters(command=CUE, args=["-C", str(root), "mcp"], env=_env())
    edit = root / "pages" / "000" / "bench-edit.md"
    async with Client(params, mode="legacy") as client:
        arguments = {"query": QUERY, "mode": "keyword", "limit": 5}
        await client.call_tool("read_context", arguments)
        back: list[float] = []
        for _ in range(50):
            started = time.perf_counter()
            await client.call_tool("read_context", arguments)
            back.append((time.perf_counter() - started) * 1000)
        spaced: list[float] = []
        for n in range(paced):
            await anyio.sleep(3)
            edit.write_text(f"# Edit {n}\n\nA page that changes while the agent thinks.\n")
            started = time.perf_counter()
            await client.call_tool("read_context", arguments)
            spaced.append((time.perf_counter() - started) * 1000)
    result = {
        "mcp keyword p50": statistics.median(back),
        "mcp keyword p95": _p95(back),
    }
    if spaced:
        result["mcp keyword paced p50"] = statistics.median(spaced)
        result["mcp keyword paced p95"] = _p95(spaced)
        result["mcp keyword paced max"] = max(spaced)
    return result


def cache_mb(root: Path) -> float:
    folder = root / ".cuedeck" / ".cache"
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6


def ripgrep_ms(root: Path) -> float | None:
    rg = shutil.which("rg")
    if rg is None:
        return None
    times = []
    for _ in range(5):
        started = time.perf_counter()
        subprocess.run([rg, "-l", "-i", "tar", str(root / "pages")], capture_output=True)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def card_list(into: Path) -> dict[str, float]:
    """`cue card list` (table, piped) and `--json` with 1,000 cards, whole process, median."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_board", HERE / "board.py")
    assert spec is not None
    assert spec.loader is not None
    board = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(board)
    root = board.many_cards(into)
    out: dict[str, float] = {}
    for label, extra in (("card list table s", []), ("card list --json s", ["--json"])):
        subprocess.run([CUE, "card", "list", *extra], cwd=root, env=_env(), capture_output=True)
        runs = [timed_process([CUE, "card", "list", *extra], root)[0] for _ in range(5)]
        out[label] = statistics.median(runs)
    return out


def measure(
    pages: list[tuple[str, bytes]], size: int, paced: int, tmp: Path, *, cache_only: bool = False
) -> dict[str, Any]:
    root = tmp / f"ws{size}"
    text = build(pages, root, size)
    cold, _ = timed_process([CUE, "index"], root)
    warm, _ = timed_process([CUE, "index"], root)
    row: dict[str, Any] = {"files": size, "text MB": text / 1e6}
    row["cold index s"], row["warm index s"] = cold, warm
    search = [CUE, "search", "--mode", "keyword", QUERY]
    # What a user's `cue index` and first search leave, before anything closes the cache
    # (every cue process ends without closing it; the in-process steps below do close it).
    subprocess.run(search, cwd=root, env=_env(), capture_output=True)  # caches warm
    row["cache / text after cue index and search"] = cache_mb(root) / row["text MB"]
    if cache_only:
        shutil.rmtree(root)
        return row
    row.update(in_process(root))
    row["search process s"] = statistics.median(timed_process(search, root)[0] for _ in range(3))
    row["search process MB"] = peak_rss(search, root)
    row.update(anyio.run(over_mcp, root, paced))
    row["cache MB"] = cache_mb(root)
    row["cache / text"] = row["cache MB"] / row["text MB"]
    row["ripgrep ms"] = ripgrep_ms(root)
    shutil.rmtree(root)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,40000")
    parser.add_argument("--paced", type=int, default=10)
    parser.add_argument("--corpora", default=os.environ.get("CUEDECK_CORPORA"))
    parser.add_argument("--json", type=Path, default=HERE / "results" / "scale.json")
    parser.add_argument(
        "--cache-only", action="store_true", help="only index, search and the cache's size"
    )
    options = parser.parse_args()
    corpora = Path(options.corpora or REPO.parent / "shared" / "corpora")
    results: dict[str, Any] = {"sizes": []}
    with tempfile.TemporaryDirectory() as tmp:
        pages = corpus_pages(corpora, Path(tmp))
        for size in (int(s) for s in options.sizes.split(",")):
            row = measure(pages, size, options.paced, Path(tmp), cache_only=options.cache_only)
            results["sizes"].append(row)
            print(json.dumps(row, indent=1), flush=True)
        if not options.cache_only:
            results["cards"] = card_list(Path(tmp))
            print(json.dumps(results["cards"], indent=1))
    keys = [k for k in results["sizes"][0] if k != "files"]
    print(f"\n{'measure':28}" + "".join(f"{row['files']:>12,}" for row in results["sizes"]))
    for key in keys:
        cells = []
        for row in results["sizes"]:
            value = row.get(key)
            cells.append(f"{value:12.2f}" if isinstance(value, float) else f"{value!s:>12}")
        goal = f"  target {TARGETS[key]:g}" if key in TARGETS else ""
        print(f"{key:28}" + "".join(cells) + goal)
    options.json.parent.mkdir(parents=True, exist_ok=True)
    options.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
