"""Start-up benchmark: how long `cue` takes to answer, whole process, warm.

    uv run python benchmarks/startup.py [--runs 11] [--query "dependency injection"]
        [--scale 40000] [--scale-query "extract archive"] [--baseline SRC] [--json PATH]

Each cycle runs, in fresh processes and one after the other (so that every measure meets
the same machine load), the commands first and the servers after them:

- ``cue --help``;
- ``cue search QUERY --mode keyword`` on fastapi-docs-en (155 files), indexed and warm
  (its watcher running, the postings saved, a first search done);
- ripgrep ``rg -l -i QUERY`` on the same folder, the peer a person would use instead;
- with ``--scale N`` (issue 26 asks 40,000), the same search and ripgrep at N files:
  renamed copies of the tldr pages, 500 to a folder, as benchmarks/scale.py builds them
  (``--scale-query``, default "extract archive"), indexed and warm the same way;
- ``python -c pass``, the floor every Python command pays;
- ``cue mcp --tools core,memory`` over stdio on an empty workspace, driven by the MCP
  SDK's client as memory.py's restart measure does: spawn to the ``initialize`` reply
  and spawn to the first tool answer (``context_list_projects``), relayed to the
  workspace's resident server (docs/mcp.md), and again with each client served in its
  own process (``CUEDECK_MCP_RESIDENT=0``).

``--baseline SRC`` runs the same measures, interleaved, with ``PYTHONPATH`` set to the
``packages/*/src`` folders under SRC (an older tree: ``git archive COMMIT packages
examples | tar -x -C SRC``), so both sides share the machine's ups and downs; the
installed entry points are this checkout's. Medians (and min, max) of ``--runs``, in
milliseconds, with the load average before and after. Bytecode is compiled first and
written caches go to a private ``CUEDECK_CACHE_DIR`` (warmed by unmeasured runs).
"""

from __future__ import annotations

import argparse
import compileall
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tarfile
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
from mcp.client.stdio import StdioServerParameters  # noqa: E402

REPO = HERE.parent
CUE = str(Path(sys.executable).with_name("cue"))
#: Issue 26 (a keyword search on fastapi and at scale) and 29 (restart to first answer).
TARGETS_MS = {
    "cue search --mode keyword": 300.0,
    "cue search, scale": 500.0,
    "mcp: first answer": 1000.0,
}


def corpora_dir() -> Path:
    for candidate in (os.environ.get("CUEDECK_CORPORA"), REPO.parent / "shared" / "corpora"):
        if candidate and (Path(candidate) / "fastapi-docs-en.tar.gz").is_file():
            return Path(candidate)
    sys.exit("shared corpora not found; set CUEDECK_CORPORA")


def environment(cache: Path, baseline: Path | None) -> dict[str, str]:
    """This environment without CueDeck's variables and PYTHONDONTWRITEBYTECODE, with
    a private user cache (and the baseline's sources first, for the baseline)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CUEDECK_", "CUE_")) and k != "PYTHONDONTWRITEBYTECODE"
    }
    env["CUEDECK_CACHE_DIR"] = str(cache)
    # The fastapi folder's watcher leaves soon after.
    env["CUEDECK_WATCH_WATCHER_IDLE_SECONDS"] = "60"
    if baseline is not None:
        sources = sorted(str(p) for p in baseline.glob("packages/*/src"))
        sources += [str(p) for p in baseline.glob("examples/*/src")]
        env["PYTHONPATH"] = os.pathsep.join(sources)
    return env


def timed(command: list[str], env: dict[str, str], cwd: Path) -> float:
    """Milliseconds of one run of ``command`` (its output discarded)."""
    began = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, check=False)
    if done.returncode not in (0, 1):  # ripgrep answers 1 when nothing matches
        raise SystemExit(f"{command} failed with {done.returncode}")
    return 1000 * (time.perf_counter() - began)


async def restart(empty: Path, env: dict[str, str]) -> tuple[float, float]:
    """Milliseconds from spawning `cue mcp` to its initialize reply and first answer."""
    args = ["-C", str(empty), "mcp", "--tools", "core,memory"]
    params = StdioServerParameters(command=CUE, args=args, env=env)
    began = time.perf_counter()
    async with Client(params, mode="legacy") as client:
        initialized = time.perf_counter()
        await client.call_tool("context_list_projects", {})
        answered = time.perf_counter()
    return 1000 * (initialized - began), 1000 * (answered - began)


def workspaces(
    work: Path, sides: dict[str, dict[str, str]]
) -> tuple[dict[str, Path], dict[str, Path]]:
    """The indexed fastapi docs and an empty workspace, one of each per side (the two
    trees' caches need not share a format), all under ``work``."""
    docs, empty = {}, {}
    for side, env in sides.items():
        with tarfile.open(corpora_dir() / "fastapi-docs-en.tar.gz") as archive:
            archive.extractall(work / side, filter="data")
        docs[side] = work / side / "fastapi-docs-en"
        for step in (["init"], ["index"]):
            subprocess.run([CUE, *step], env=env, cwd=docs[side], capture_output=True, check=True)
        empty[side] = work / side / "empty"
        (empty[side] / ".cuedeck").mkdir(parents=True)
        (empty[side] / ".cuedeck" / "config.toml").write_text('[mcp]\nlocal_role = "admin"\n')
    return docs, empty


def scale_workspaces(work: Path, size: int, sides: dict[str, dict[str, str]]) -> dict[str, Path]:
    """``size`` tldr copies (benchmarks/scale.py's build), one indexed copy per side."""
    spec = importlib.util.spec_from_file_location("scale", HERE / "scale.py")
    assert spec is not None
    assert spec.loader is not None
    scale = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scale)
    pages = scale.corpus_pages(corpora_dir(), work / "tldr")
    roots = {}
    for side, env in sides.items():
        root = work / f"scale-{side}"
        print(f"building and indexing {size:,} files for {side}...", file=sys.stderr, flush=True)
        scale.build(pages, root, size)
        subprocess.run([CUE, "index"], env=env, cwd=root, capture_output=True, check=True)
        roots[side] = root
    return roots


def measure(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    sides = {"new": environment(work / "cache-new", None)}
    if args.baseline:
        sides["baseline"] = environment(work / "cache-baseline", args.baseline.resolve())
    docs, empty = workspaces(work, sides)
    scaled = scale_workspaces(work, args.scale, sides) if args.scale else {}
    search = [CUE, "search", args.query, "--mode", "keyword"]
    # label -> (command, folder per side); the peer and the floor run on the new side only.
    commands: dict[str, tuple[list[str], dict[str, Path]]] = {
        "cue --help": ([CUE, "--help"], docs),
        "cue search --mode keyword": (search, docs),
        "ripgrep -l -i (peer)": (["rg", "-l", "-i", args.query, "."], docs),
        "python -c pass (floor)": ([sys.executable, "-c", "pass"], docs),
    }
    if scaled:
        query = args.scale_query
        commands["cue search, scale"] = ([CUE, "search", query, "--mode", "keyword"], scaled)
        commands["ripgrep, scale (peer)"] = (["rg", "-l", "-i", query, "."], scaled)
    if shutil.which("rg") is None:
        commands = {label: row for label, row in commands.items() if "ripgrep" not in label}

    def run(side: str, label: str) -> float:
        command, folders = commands[label]
        return timed(command, sides[side], folders[side])

    for side, env in sides.items():  # unmeasured: caches, watcher, postings, bytecode
        for label in commands:
            for _ in range(2):
                run(side, label)
        anyio.run(restart, empty[side], env)
    samples: dict[str, dict[str, list[float]]] = {side: {} for side in sides}
    load_before = os.getloadavg()
    for _ in range(args.runs):
        for side in sides:
            for label in commands:
                if side != "new" and "cue" not in label:
                    continue  # the peer and the floor do not change with CueDeck
                samples[side].setdefault(label, []).append(run(side, label))
    # Apart: a server that has answered may still be busy ending (its worker warms the
    # tokenizer), which would weigh on the next command measured.
    # `cue mcp` relays to the resident server it keeps warm (the first run above started
    # it); "own process" is a server started anew for each client (CUEDECK_MCP_RESIDENT=0).
    for _ in range(args.runs):
        for side, env in sides.items():
            for mode, extra in (("", {}), (" own process", {"CUEDECK_MCP_RESIDENT": "0"})):
                initialized, answered = anyio.run(restart, empty[side], {**env, **extra})
                samples[side].setdefault(f"mcp{mode}: initialize", []).append(initialized)
                samples[side].setdefault(f"mcp{mode}: first answer", []).append(answered)
    load_after = os.getloadavg()
    for side, env in sides.items():  # the resident servers go with the scratch folder
        stop = [CUE, "-C", str(empty[side]), "mcp", "stop"]
        subprocess.run(stop, env=env, capture_output=True, check=False)
    rows = {
        side: {
            label: {
                "median_ms": round(statistics.median(values), 1),
                "min_ms": round(min(values), 1),
                "max_ms": round(max(values), 1),
            }
            for label, values in measured.items()
        }
        for side, measured in samples.items()
    }
    return {
        "runs": args.runs,
        "query": args.query,
        "scale": {"files": args.scale, "query": args.scale_query} if scaled else None,
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in load_after],
        "rows": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--query", default="dependency injection")
    parser.add_argument("--scale", type=int, default=0, help="also at this many files (40000)")
    parser.add_argument("--scale-query", default="extract archive")
    parser.add_argument("--baseline", type=Path, help="an older tree's sources, interleaved")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args()
    # Every process below reads bytecode, as an installed CueDeck does.
    for folder in (sysconfig.get_paths()["purelib"], *map(str, REPO.glob("packages/*/src"))):
        compileall.compile_dir(folder, quiet=2)
    if args.baseline:
        compileall.compile_dir(str(args.baseline), quiet=2)
    with tempfile.TemporaryDirectory(prefix="cuedeck-startup-") as scratch:
        report = measure(args, Path(scratch))
    print(f"load average before {report['load_before']}, after {report['load_after']}")
    if report["scale"]:
        print(f"scale: {report['scale']['files']:,} files, query {report['scale']['query']!r}")
    print(f"median of {report['runs']} (min-max), ms")
    sides = list(report["rows"])
    print(f"{'':28}" + "".join(f"{side:>24}" for side in sides) + f"{'target':>10}")
    for label in report["rows"]["new"]:
        cells = []
        for side in sides:
            row = report["rows"][side].get(label)
            shown = (
                f"{row['median_ms']:.0f} ({row['min_ms']:.0f}-{row['max_ms']:.0f})" if row else ""
            )
            cells.append(f"{shown:>24}")
        target = TARGETS_MS.get(label)
        print(f"{label:28}" + "".join(cells) + (f"{f'< {target:.0f}':>10}" if target else ""))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
