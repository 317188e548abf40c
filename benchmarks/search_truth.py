"""Issue 26 in one run: search that tells the truth, and a command line that answers at once.

    uv run python benchmarks/search_truth.py [--work DIR] [--before REV]
        [--django-sdist FILE] [--fastapi-all DIR] [--skip-scale] [--skip-quality]

"Before" is the code at ``--before`` (default: the merge base with main), taken with
``git archive`` and run by the same interpreter with its sources first on PYTHONPATH, so
both versions run on the same machine, in the same run, against the same files.

- **Quality** (``--skip-quality`` leaves it out): the 50 labelled fastapi queries and the
  public held-out Django set (benchmarks/django_set.py: 196 queries over Django 5.1.4's
  documentation, built from its sdist, tuned on by nobody). For MiniLM computing in int8
  and in float: keyword, semantic, both fusions, and peers bm25s, plain RRF of bm25s and
  the same vectors (k = 60) and SQLite FTS5 (what memory ranks with) on the same
  sections; embedding speed of each model. Then a half-embedded workspace: keyword
  alone, the fusion before issue 26 (every file fused, unembedded ones last on the
  semantic side) and the fusion now (only what both sides rank).
- **The command line**: ``cue --help`` and warm ``cue search --mode keyword`` at 155 files
  (fastapi) and at the scale workspace (40,000 tldr copies, ``--skip-scale`` leaves it
  out), before and after, with ripgrep on the same files; the first progress line of
  ``cue index --semantic`` (piped); the cold index of fastapi's docs in every language
  (``--fastapi-all``: a folder holding them, e.g. fastapi's ``docs/``) and in English;
  a workspace with one 7.8 MB file of 20,000 sections; keyword p50 in process and
  keyword nDCG@10 (the phrase bonus went).

Writes benchmarks/results/search_truth.json and prints the tables of benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import django_set
import numpy as np
from search import QUERIES, bm25s_ranker, corpora_dir, ndcg_at, recall_at, workspace_from

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results" / "search_truth.json"
BIN = Path(sys.executable).parent
RUNS = 7


def environment(before: Path | None, cache: Path) -> dict[str, str]:
    """A clean environment for one version; ``before``: the old sources come first."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUEDECK_", "CUE_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["CUEDECK_CACHE_DIR"] = str(cache)
    if before is not None:
        env["PYTHONPATH"] = os.pathsep.join(str(p) for p in sorted(before.glob("packages/*/src")))
    else:
        env.pop("PYTHONPATH", None)
    return env


def old_sources(rev: str, into: Path) -> Path:
    """The packages at ``rev``, extracted into ``into``."""
    target = into / f"before-{rev[:12]}"
    if not target.exists():
        target.mkdir(parents=True)
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", rev, "packages"], check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "x", "-C", str(target)], input=archive, check=True)
    return target


def timed(argv: list[str], env: dict[str, str], runs: int = RUNS) -> float:
    """Median wall seconds of ``argv`` (one warm-up run first)."""
    subprocess.run(argv, env=env, capture_output=True, check=False)
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(argv, env=env, capture_output=True, check=False)
        times.append(time.perf_counter() - started)
    return round(statistics.median(times), 3)


def cue(root: Path, *args: str) -> list[str]:
    return [str(BIN / "cue"), "-C", str(root), *args]


# --- the command line ---------------------------------------------------------------------


def copies(source: Path, into: Path, name: str) -> dict[str, Path]:
    """A copy of ``source`` per version (their caches are not the same format)."""
    found = {}
    for version in ("before", "after"):
        target = into / f"{name}-{version}"
        if not target.exists():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns(".cache"))
            (target / ".cuedeck").mkdir(exist_ok=True)
        found[version] = target
    return found


def command_line(
    roots: dict[str, Path], envs: dict[str, dict[str, str]], word: str
) -> dict[str, Any]:
    """Warm `cue search --mode keyword` and `cue --help`, both versions; ripgrep."""
    row: dict[str, Any] = {}
    for version, root in roots.items():
        env = envs[version]
        subprocess.run(cue(root, "index"), env=env, capture_output=True, check=True)
        row[f"search {version} s"] = timed(cue(root, "search", "--mode", "keyword", word), env)
        row[f"help {version} s"] = timed([str(BIN / "cue"), "--help"], env)
    rg = shutil.which("rg")
    if rg:
        row["ripgrep s"] = timed([rg, "-l", "-i", word, str(roots["after"])], envs["after"])
    return row


def first_progress(root: Path, env: dict[str, str]) -> float | None:
    """Seconds until `cue index --semantic` (piped) prints its first line on stderr."""
    process = subprocess.Popen(
        cue(root, "index", "--semantic"), env=env, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    started = time.perf_counter()
    assert process.stderr is not None
    line = process.stderr.readline()
    seconds = time.perf_counter() - started if line else None
    os.killpg(process.pid, signal.SIGTERM)
    process.wait()
    process.stderr.close()
    return None if seconds is None else round(seconds, 2)


def cold_index(source: Path, into: Path, envs: dict[str, dict[str, str]]) -> dict[str, float]:
    """`cue index` on a fresh copy, whole process, median of 3 per version."""
    row = {}
    for version, env in envs.items():
        times = []
        for run in range(3):
            target = into / f"cold-{version}-{run}"
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(source, target, ignore=shutil.ignore_patterns(".cuedeck"))
            (target / ".cuedeck").mkdir()
            started = time.perf_counter()
            subprocess.run(cue(target, "index"), env=env, capture_output=True, check=True)
            times.append(time.perf_counter() - started)
            shutil.rmtree(target)
        row[f"{version} s"] = round(statistics.median(times), 3)
    return row


def big_file(fastapi: Path, into: Path) -> Path:
    """fastapi's docs plus one 7.8 MB page of 20,000 sections."""
    root = into / "bigfile"
    if not root.exists():
        shutil.copytree(fastapi, root, ignore=shutil.ignore_patterns(".cache"))
        texts = [p.read_text(encoding="utf-8") for p in sorted(fastapi.rglob("*.md"))]
        words = " ".join(texts).split()
        rng = random.Random(26)
        parts = ["# The big page\n"]
        for number in range(20_000):
            start = rng.randrange(len(words) - 60)
            parts.append(f"## Part {number}\n\n{' '.join(words[start : start + 55])}\n")
        (root / "big.md").write_text("\n".join(parts), encoding="utf-8")
    return root


IN_PROCESS = """
import json, statistics, sys, time
from cuedeck import open_workspace
from cuedeck_search.settings import SearchSettings
queries = json.load(open(sys.argv[2]))["queries"]
workspace = open_workspace(sys.argv[1])
engine = workspace.service("search")
engine.search("warm", mode="keyword")
times = []
ranked = []
for _ in range(3):
    for item in queries:
        started = time.perf_counter()
        found = engine.search(item["query"], mode="keyword", limit=10)
        times.append(time.perf_counter() - started)
        ranked.append([r.path for r in found])
print(json.dumps({"p50_ms": statistics.median(times) * 1000, "ranked": ranked[:len(queries)]}))
"""


def keyword_in_process(roots: dict[str, Path], envs: dict[str, dict[str, str]]) -> dict[str, Any]:
    queries = json.loads(QUERIES.read_text(encoding="utf-8"))["queries"]
    row: dict[str, Any] = {}
    for version, root in roots.items():
        out = subprocess.run(
            [sys.executable, "-c", IN_PROCESS, str(root), str(QUERIES)],
            env=envs[version], capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        found = json.loads(out)
        ndcg = statistics.fmean(
            ndcg_at(r, q["relevant"]) for r, q in zip(found["ranked"], queries, strict=True)
        )
        row[f"{version} p50 ms"] = round(found["p50_ms"], 2)
        row[f"{version} nDCG@10"] = round(ndcg, 4)
    return row


# --- quality ------------------------------------------------------------------------------


def fts5_ranker(engine: Any) -> tuple[Any, dict[str, float]]:
    """SQLite FTS5 (porter stemmer, bm25()) over the same sections, best section per
    file, queried with the words OR'ed (as memory does); build and update timings."""
    sections = engine.sections
    connection = sqlite3.connect(":memory:")
    started = time.perf_counter()
    connection.execute(
        "CREATE VIRTUAL TABLE s USING fts5(path UNINDEXED, heading, body, "
        "tokenize='porter unicode61')"
    )
    connection.executemany(
        "INSERT INTO s VALUES (?, ?, ?)",
        [(s.path, " ".join(s.heading_path), s.text) for s in sections],
    )
    built = time.perf_counter() - started
    one = [s for s in sections if s.path == sections[0].path]
    started = time.perf_counter()
    connection.execute("DELETE FROM s WHERE path = ?", (one[0].path,))
    connection.executemany(
        "INSERT INTO s VALUES (?, ?, ?)", [(s.path, " ".join(s.heading_path), s.text) for s in one]
    )
    updated = time.perf_counter() - started

    def rank(query: str, k: int = 10) -> list[str]:
        words = ["".join(c for c in w if c.isalnum()) for w in query.split()]
        match = " OR ".join(f'"{w}"' for w in words if w)
        if not match:
            return []
        rows = connection.execute(
            "SELECT path FROM s WHERE s MATCH ? ORDER BY bm25(s, 0.0, 3.0, 1.0) LIMIT 5000",
            (match,),
        ).fetchall()
        return list(dict.fromkeys(path for (path,) in rows))[:k]  # best section per file

    return rank, {"build_s": round(built, 3), "update_one_file_ms": round(updated * 1000, 2)}


def plain_rrf(engine: Any, bm25: Any, k: int = 60, depth: int = 100) -> Any:
    matrix = engine.ensure_vectors()
    paths = [engine.paths[int(d)] for d in engine.catalog.section_doc]

    def cosine(query: str) -> list[str]:
        scores = np.einsum("ij,j->i", matrix, engine.query_vector(query))
        found: list[str] = []
        for index in np.argsort(-scores, kind="stable"):
            if paths[int(index)] not in found:
                found.append(paths[int(index)])
                if len(found) == depth:
                    break
        return found

    def rank(query: str) -> list[str]:
        totals: dict[str, float] = {}
        for ranking in (bm25(query, depth), cosine(query)):
            for place, path in enumerate(ranking, 1):
                totals[path] = totals.get(path, 0.0) + 1.0 / (k + place)
        return sorted(totals, key=lambda p: (-totals[p], p))[:10]

    return rank


def measure(rank: Any, queries: list[dict[str, Any]]) -> dict[str, float]:
    pairs = [(rank(q["query"]), q["relevant"]) for q in queries]
    return {
        "ndcg@10": round(statistics.fmean(ndcg_at(r, rel) for r, rel in pairs), 4),
        "recall@10": round(statistics.fmean(recall_at(r, rel) for r, rel in pairs), 4),
    }


def fuse_partial(
    settings: Any,
    fusion: str | None,
    kw_files: Any,
    kw_sections: Any,
    sem_files: Any,
    sem_sections: Any,
    allowed: Any,
    embedded: Any,
) -> Any:
    """Fusion over what both sides rank, measured against keyword alone (CueDeck answers
    by keyword while coverage is partial): the keyword ranking, its places held by files
    with vectors filled again by those files in fused order."""
    from cuedeck_search.fusion import Fused, fuse, reciprocal_ranks

    both = allowed & embedded
    inner = fuse(settings, fusion, kw_files, kw_sections, sem_files, sem_sections, both)
    matched = np.flatnonzero(allowed & (kw_files > 0))
    by_keyword = matched[np.argsort(-kw_files[matched], kind="stable")]
    slots = by_keyword[both[by_keyword]]
    refill = iter(slots[np.argsort(-inner.files[slots], kind="stable")].tolist())
    order = [next(refill) if both[d] else d for d in by_keyword.tolist()]
    # Embedded files the keyword side did not match come after every keyword match.
    extra = np.flatnonzero(both & (kw_files <= 0) & (inner.files > 0))
    order.extend(extra[np.argsort(-inner.files[extra], kind="stable")].tolist())
    k = float(settings.rrf_k)
    files = np.zeros(len(kw_files), dtype=np.float32)
    files[order] = 2.0 / (k + np.arange(1, len(order) + 1))
    semantic_part = np.where(both, inner.semantic_part, np.nan).astype(np.float32)
    return Fused(
        files=files,
        sections=inner.sections,
        keyword_part=reciprocal_ranks(kw_files, allowed & (kw_files > 0), k).astype(np.float32),
        semantic_part=semantic_part,
    )


def partial(engine: Any, queries: list[dict[str, Any]], share: float) -> dict[str, Any]:
    """nDCG@10 with ``share`` of the sections embedded, chosen at random (by hash) or
    shortest first (the order CueDeck embeds in): keyword alone (what CueDeck answers),
    every file fused (before issue 26), and fusion over what both sides rank (slots of
    files with any vector, or only of files with every vector)."""
    from cuedeck_search.fusion import fuse
    from cuedeck_search.settings import SearchSettings

    settings = engine.workspace.config.section("search", SearchSettings)
    matrix, present, _ = engine.available_vectors()
    hashes = engine.catalog.hashes()
    lengths = {s.hash: len(s.embedding_text) for s in engine.sections}
    size = np.array([lengths.get(h, 0) for h in hashes])
    starts, allowed = engine.catalog.starts, engine.catalog.live_docs
    chosen = {
        "random": present
        & np.fromiter((int(h[:8], 16) / 0xFFFFFFFF < share for h in hashes), bool, len(hashes)),
        "shortest first": present & (size <= np.quantile(size[present], share)),
    }
    found: dict[str, Any] = {}
    for order_name, have in chosen.items():
        some = np.logical_or.reduceat(have, starts)
        every = np.logical_and.reduceat(have | ~engine.catalog.live_sections, starts) & some
        out: dict[str, list[float]] = {}
        for item in queries:
            keyword = engine.keyword_scores(item["query"])
            cosine = np.einsum("ij,j->i", matrix, engine.query_vector(item["query"]))
            sections = np.where(have, cosine, -1.0).astype(np.float32)
            files = np.maximum.reduceat(sections, starts)
            sides = (keyword.files, keyword.sections, files, sections, allowed)
            for name, fused in (
                ("keyword (now)", keyword.files),
                ("every file fused (before)", fuse(settings, "rrf", *sides).files),
                ("slots of files with a vector", fuse_partial(settings, "rrf", *sides, some).files),
                (
                    "slots of fully embedded files",
                    fuse_partial(settings, "rrf", *sides, every).files,
                ),
            ):
                ranked = sorted(
                    np.flatnonzero(fused > 0).tolist(), key=lambda d: (-fused[d], engine.paths[d])
                )[:10]
                out.setdefault(name, []).append(
                    ndcg_at([engine.paths[d] for d in ranked], item["relevant"])
                )
        found[order_name] = {name: round(statistics.fmean(v), 4) for name, v in out.items()}
        found[order_name]["coverage"] = round(float(have.sum()) / max(int(present.sum()), 1), 3)
    return found


def quality(
    root: Path,
    queries: list[dict[str, Any]],
    cache: Path,
    models: tuple[str, ...] = ("int8", "float"),
) -> dict[str, Any]:
    from cuedeck import open_workspace
    from cuedeck_search import user_cache
    from cuedeck_search.onnx_model import load_embedder, model_file

    os.environ["CUEDECK_CACHE_DIR"] = str(cache)
    report: dict[str, Any] = {"queries": len(queries)}
    base = open_workspace(root).service("search")
    base.background = False
    base.sync()
    report["files"] = len(base.paths)
    report["sections"] = int(base.catalog.live_sections.sum())
    bm25 = bm25s_ranker(base, support=False)
    fts, fts_cost = fts5_ranker(base)
    report["peer: bm25s"] = measure(lambda q: bm25(q, 10), queries)
    report["peer: SQLite FTS5"] = {**measure(fts, queries), **fts_cost}
    report["keyword"] = measure(
        lambda q: [r.path for r in base.search(q, mode="keyword", limit=10)], queries
    )
    for arithmetic in models:
        engine = open_workspace(root).service("search")
        engine.background = False
        engine.vectors._embedder = load_embedder(user_cache.connect, model=model_file(arithmetic))
        missing = len(engine.missing_hashes())
        started = time.perf_counter()
        engine.embed_all()
        seconds = time.perf_counter() - started
        row: dict[str, Any] = {
            "embedded": missing,
            "embedding_s": round(seconds, 1),
            "sections_per_s": round(missing / seconds, 1) if missing and seconds else None,
        }
        for name, mode, fusion in (("semantic", "semantic", None), ("hybrid, rrf", "hybrid", "rrf"),
                                   ("hybrid, weighted", "hybrid", "weighted")):  # fmt: skip
            row[name] = measure(
                lambda q, m=mode, f=fusion, e=engine: [
                    r.path for r in e.search(q, mode=m, limit=10, fusion=f)
                ],
                queries,
            )
        row["peer: plain RRF"] = measure(plain_rrf(engine, bm25), queries)
        row["partial coverage"] = {
            f"{share:.0%}": partial(engine, queries, share) for share in (0.25, 0.5, 0.75)
        }
        report[arithmetic] = row
    return report


# --- the run ------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora")
    parser.add_argument("--work", type=Path)
    parser.add_argument("--before", default=None, help="git revision of 'before'")
    parser.add_argument("--django-sdist", type=Path)
    parser.add_argument("--fastapi-all", type=Path, help="fastapi's docs in every language")
    parser.add_argument("--skip-scale", action="store_true")
    parser.add_argument("--skip-quality", action="store_true")
    parser.add_argument(
        "--models", default="int8,float", help="MiniLM arithmetics to measure (int8, float)"
    )
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    rev = args.before or subprocess.run(
        ["git", "-C", str(REPO), "merge-base", "HEAD", "main"], capture_output=True, text=True,
        check=True,
    ).stdout.strip()  # fmt: skip
    corpora = corpora_dir(args.corpora)
    report: dict[str, Any] = {
        "before": rev,
        "load_at_start": [round(x, 1) for x in os.getloadavg()],
    }
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="cuedeck-truth-") as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        before = old_sources(rev, work)
        envs = {
            "before": environment(before, work / "cache-before"),
            "after": environment(None, work / "cache-after"),
        }
        fastapi = (
            workspace_from(corpora, "fastapi-docs-en", work)
            if not (work / "fastapi-docs-en").exists()
            else work / "fastapi-docs-en"
        )
        roots = copies(fastapi, work, "fastapi")
        report["cli fastapi"] = command_line(roots, envs, "response")
        report["keyword in process"] = keyword_in_process(roots, envs)
        big = copies(big_file(fastapi, work), work, "bigfile")
        report["cli big file"] = command_line(big, envs, "response")
        report["first progress line"] = {}
        for version, env in envs.items():
            shutil.rmtree(work / f"cache-progress-{version}", ignore_errors=True)
            env = {**env, "CUEDECK_CACHE_DIR": str(work / f"cache-progress-{version}")}
            report["first progress line"][f"{version} s"] = first_progress(roots[version], env)
        report["cold index, fastapi en"] = cold_index(fastapi, work, envs)
        if args.fastapi_all:
            report["cold index, fastapi all languages"] = cold_index(args.fastapi_all, work, envs)
        if not args.skip_scale:
            from scale import build, corpus_pages

            pages = corpus_pages(corpora, work / "tldr")
            scale_root = work / "scale"
            if not scale_root.exists():
                build(pages, scale_root, 40_000)
            scale = copies(scale_root, work, "scale")
            report["cli scale"] = command_line(scale, envs, "tar")
            report["cli scale"]["files"] = sum(1 for _ in scale_root.rglob("*.md"))
        if not args.skip_quality:
            django_root = work / "django"
            queries = django_set.build(
                django_set.sdist(work / "dl", args.django_sdist), django_root
            )
            fastapi_queries = json.loads(QUERIES.read_text(encoding="utf-8"))["queries"]
            models = tuple(args.models.split(","))
            cache = work / "cache-quality"
            report["quality fastapi"] = quality(fastapi, fastapi_queries, cache, models)
            report["quality django"] = quality(django_root, queries, cache, models)
    report["run_s"] = round(time.perf_counter() - began, 1)
    report["load_at_end"] = [round(x, 1) for x in os.getloadavg()]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))
    print(f"\nwritten to {args.out}")


if __name__ == "__main__":
    main()
