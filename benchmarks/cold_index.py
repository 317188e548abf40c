"""Cold ``cue index`` of fastapi's docs in every language and in English (issue 26, item 5).

    uv run python benchmarks/cold_index.py --fastapi-all DIR [--before REV] [--runs 5]

``DIR`` holds fastapi's ``docs/`` folder of every language (1,656 pages), for example
``git --git-dir=FASTAPI.git archive HEAD docs | tar -x -C DIR``; its ``docs/en`` is the
English figure. Without ``--fastapi-all`` only the English docs of the shared corpora
are run.

Each run is a whole ``cue -C ROOT index`` process on a workspace with an empty
``.cuedeck/`` and an empty user cache (``CUEDECK_CACHE_DIR``): the index, then the
keyword postings search reads. Three figures per run: the index step's own seconds as
``cue index --json`` reports them (reading and parsing the files into the index, the
step issue 26's baseline of 0.71 s timed: its English figure, 0.11 s, is less than any
``cue`` process takes to start); the whole process's wall seconds; and its CPU seconds
(user + system of the process and the workers it forks), which the other jobs of a
shared machine disturb far less than the wall clock. Each corpus is run with the
workers ``cue`` picks (every core) and in one process (``CUEDECK_WORKERS=1``), whose
CPU time is the work itself.

``--before REV`` runs the code at REV too (its packages taken with ``git archive`` and
put first on PYTHONPATH), interleaved run by run with the code now, so both see the
same machine. Prints a table (medians, with the fastest run) and writes
benchmarks/results/cold_index.json.
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

from search_truth import environment as clean_environment
from search_truth import old_sources

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results" / "cold_index.json"
CUE = str(Path(sys.executable).parent / "cue")
TARGET = 1.0  # seconds, every language, wall clock (issue 26)


def environment(sources: Path | None, cache: Path, workers: int | None) -> dict[str, str]:
    """search_truth's clean environment (an empty user cache, bytecode written, ``sources``
    first on the path), with the chosen workers."""
    env = clean_environment(sources, cache)
    if workers is not None:
        env["CUEDECK_WORKERS"] = str(workers)
    return env


def cold_run(root: Path, env: dict[str, str]) -> tuple[float, float, float]:
    """One cold ``cue index --json`` of ``root``: (wall seconds, CPU seconds with its
    workers, the index step's own seconds as the command reports them)."""
    shutil.rmtree(root / ".cuedeck", ignore_errors=True)
    (root / ".cuedeck").mkdir()
    cache = Path(env["CUEDECK_CACHE_DIR"])
    shutil.rmtree(cache, ignore_errors=True)
    cache.mkdir()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [CUE, "-C", str(root), "index", "--json"], env=env, capture_output=True, text=True
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"cue index failed on {root}:\n{done.stdout}{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, float(json.loads(done.stdout)["seconds"])


def english_from_corpora(into: Path) -> Path:
    """The shared corpora's fastapi English docs, extracted once."""
    shared = Path(os.environ.get("CUEDECK_CORPORA", REPO.parent.parent / "shared" / "corpora"))
    target = into / "fastapi-en"
    if not target.exists():
        with tarfile.open(shared / "fastapi-docs-en.tar.gz") as archive:
            archive.extractall(target, filter="data")
    return target


def workspace(source: Path, into: Path, name: str) -> Path:
    """A copy of ``source`` to index (nothing of it is changed but ``.cuedeck/``)."""
    target = into / name
    if not target.exists():
        shutil.copytree(source, target, ignore=shutil.ignore_patterns(".cuedeck"))
    return target


def summary(samples: list[tuple[float, float, float]]) -> dict[str, float]:
    walls = [wall for wall, _, _ in samples]
    cpus = [cpu for _, cpu, _ in samples]
    return {
        "index step s": round(statistics.median(step for *_, step in samples), 3),
        "wall s": round(statistics.median(walls), 3),
        "wall best s": round(min(walls), 3),
        "cpu s": round(statistics.median(cpus), 3),
        "cpu best s": round(min(cpus), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fastapi-all", type=Path, help="a folder holding fastapi's docs/")
    parser.add_argument("--before", help="also run the code at this git revision")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--work", type=Path, help="where the workspaces go (default: a temp dir)")
    args = parser.parse_args()

    work = args.work or Path(tempfile.mkdtemp(prefix="cold-index-"))
    work.mkdir(parents=True, exist_ok=True)
    corpora: dict[str, Path] = {}
    if args.fastapi_all:
        given = args.fastapi_all
        docs = given / "docs" if (given / "docs").is_dir() else given
        every = work / "fastapi-all"
        if not every.exists():
            shutil.copytree(docs, every / "docs")
        corpora["every language"] = every
        corpora["English"] = workspace(docs / "en", work, "fastapi-en-docs")
    else:
        corpora["English"] = english_from_corpora(work)
    versions: dict[str, Path | None] = {"now": None}
    if args.before:
        versions = {"before": old_sources(args.before, work), "now": None}

    load = os.getloadavg()
    results: dict[str, Any] = {"load at start": [round(x, 2) for x in load], "runs": args.runs}
    rows: list[tuple[str, str, str, dict[str, float]]] = []
    for corpus, root in corpora.items():
        for label, workers in (("every core", None), ("one process", 1)):
            samples: dict[str, list[tuple[float, float, float]]] = {v: [] for v in versions}
            for run in range(args.runs):
                for version, sources in versions.items():
                    env = environment(sources, work / "user-cache", workers)
                    samples[version].append(cold_run(root, env))
                print(f"  {corpus}, {label}: run {run + 1} of {args.runs}", file=sys.stderr)
            for version in versions:
                row = summary(samples[version])
                results[f"{corpus}, {label}, {version}"] = row
                rows.append((corpus, label, version, row))
    results["load at end"] = [round(x, 2) for x in os.getloadavg()]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")

    files = {c: sum(1 for _ in r.rglob("*.md")) for c, r in corpora.items()}
    print(f"load average {results['load at start']} at start, {results['load at end']} at end")
    print(
        "| corpus | workers | version | index step, median "
        "| whole process: wall, median (best) | CPU, median (best) |"
    )
    print("| --- | --- | --- | ---: | ---: | ---: |")
    for corpus, label, version, row in rows:
        print(
            f"| {corpus} ({files[corpus]:,} pages) | {label} | {version} "
            f"| {row['index step s']:.2f} s | {row['wall s']:.2f} s ({row['wall best s']:.2f}) "
            f"| {row['cpu s']:.2f} s ({row['cpu best s']:.2f}) |"
        )
    every = results.get("every language, every core, now")
    if every is not None:
        for figure in ("index step s", "wall s"):
            met = "met" if every[figure] <= TARGET else "missed"
            print(f"every language, {figure[:-2]} <= {TARGET} s: {met} ({every[figure]:.2f} s)")


if __name__ == "__main__":
    main()
