"""Search quality with peers, the weighted-fusion sweep and the first answer (issue 15).

    uv run python benchmarks/search_quality.py [--corpora DIR] [--work DIR]
        [--queries 200] [--pages 2000] [--tldr-p50]

Two labelled sets, every ranker in the same run on the same sections and vectors:

- **fastapi**: the 50 labelled queries of benchmarks/queries/fastapi.json over
  fastapi-docs-en.
- **tldr held-out summaries**: built here from tldr-pages-en (the tldr-pages project,
  CC BY 4.0), see :func:`heldout_set`: for 200 pages chosen by the sha256 of their path,
  the page's one-line summary (its first ``>`` line) is the query and is removed from
  the page; the page is the answer (grade 2) and the pages of the same command on other
  platforms also help (grade 1). The workspace holds those pages and others up to
  ``--pages`` (2,000; 0 for all 7,426), so the query has to be found among them from the
  page's title and examples.

Rankers: CueDeck keyword, semantic, hybrid with rrf (the default) and with weighted
fusion at the configured weight; peers ``bm25s`` (plain BM25 on the same section texts,
a file scores as its best section) and **plain RRF** (that bm25s ranking and the MiniLM
cosine ranking of the same section vectors, each best section per file, fused by
textbook reciprocal rank fusion with k = 60 over their top 100 files: no CueDeck
tuning). The sweep re-fuses the same per-file scores of each query through
``cuedeck_search.fusion.fuse`` for semantic weights 0, 0.05 ... 1 (keyword = 1 - w).

Speed: time from a fresh copy of the corpus to the first hybrid answer, in fresh
processes as a user would (``cue init``, then ``cue search --json``: keyword-backed,
nothing embedded yet), median of 3, and where that time goes; warm hybrid p50 with
every section embedded on fastapi, and on tldr with ``--tldr-p50`` (which embeds all
7,426 tldr pages: about 14 minutes on the busy 2-core machine, once).

A cold run of the defaults embeds fastapi (2,082 sections) and the 2,000 held-out pages
and takes under 10 minutes; ``--work DIR`` keeps the workspaces (and their vectors) for
later runs, which take about 2 minutes. Writes benchmarks/results/search_quality.json.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np
from search import (  # the sibling benchmark's helpers (this folder is on sys.path)
    QUERIES,
    TLDR_QUERIES,
    bm25s_ranker,
    corpora_dir,
    ndcg_at,
    p50_ms,
    recall_at,
    workspace_from,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from cuedeck_search.engine import SearchEngine

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results" / "search_quality.json"
CUE = str(Path(sys.executable).with_name("cue"))
WEIGHTS = [round(0.05 * i, 2) for i in range(21)]
RRF_K = 60
PEER_DEPTH = 100  # files each side of plain RRF contributes


# --- sets --------------------------------------------------------------------------------


def extract(corpora: Path, name: str, into: Path) -> Path:
    """The corpus ``name`` extracted into ``into`` (kept when already there)."""
    root = into / name
    if not root.exists():
        return workspace_from(corpora, name, into)
    (root / ".cuedeck").mkdir(exist_ok=True)
    return root


def summary_line(lines: list[str]) -> int | None:
    """Index of a tldr page's one-line summary (its first ``>`` line), if it has one."""
    for index, line in enumerate(lines):
        if line.startswith("> "):
            return index
    return None


def heldout_set(source: Path, target: Path, count: int, pages: int) -> list[dict[str, Any]]:
    """Build the held-out workspace ``target`` from the tldr pages at ``source``; its queries.

    Eligible pages have a first ``>`` line of at least 3 words that is not a pointer
    ("More information", "This command is an alias of", "See also") and that no other
    page has as its summary; ``count`` of them, by sha256 of their path, become queries
    (backticks dropped, the final full stop too), and that line is deleted from the
    page in ``target``. ``target`` holds ``pages`` pages (0: all): the query pages, the
    same commands' pages on other platforms, then the others by sha256 of their path.
    ``source`` is never changed, so a rerun builds the same set.
    """

    def order(path: str) -> str:
        return hashlib.sha256(path.encode()).hexdigest()

    every = sorted(p.relative_to(source).as_posix() for p in source.glob("*/*.md"))
    summaries: dict[str, tuple[int, str]] = {}
    for path in every:
        lines = (source / path).read_text(encoding="utf-8").splitlines()
        index = summary_line(lines)
        if index is None:
            continue
        text = lines[index][2:].replace("`", "").strip().rstrip(".")
        if len(text.split()) < 3 or text.startswith(
            ("More information", "This command is an alias", "See also")
        ):
            continue
        summaries[path] = (index, text)
    seen = collections.Counter(text.lower() for _, text in summaries.values())
    eligible = [path for path, (_, text) in summaries.items() if seen[text.lower()] == 1]
    chosen = sorted(eligible, key=order)[:count]
    by_name: dict[str, list[str]] = collections.defaultdict(list)
    for path in every:
        by_name[path.rsplit("/", 1)[1]].append(path)
    kept = dict.fromkeys(chosen)
    for path in chosen:
        kept.update(dict.fromkeys(by_name[path.rsplit("/", 1)[1]]))
    for path in sorted(every, key=order):
        if pages and len(kept) >= pages:
            break
        kept[path] = None
    queries = []
    texts = {path: (source / path).read_text(encoding="utf-8") for path in kept}
    for number, path in enumerate(chosen, 1):
        index, text = summaries[path]
        lines = texts[path].splitlines(keepends=True)
        del lines[index]
        texts[path] = "".join(lines)
        relevant = {other: 1 for other in by_name[path.rsplit("/", 1)[1]] if other != path}
        relevant[path] = 2
        queries.append({"id": f"t{number:03d}", "kind": "summary", "query": text,
                        "relevant": relevant})  # fmt: skip
    (target / ".cuedeck").mkdir(parents=True, exist_ok=True)
    for path, text in texts.items():
        page = target / path
        if not page.is_file() or page.read_text(encoding="utf-8") != text:
            page.parent.mkdir(parents=True, exist_ok=True)
            page.write_text(text, encoding="utf-8")
    return queries


# --- rankers -----------------------------------------------------------------------------


def top_files(engine: SearchEngine, scores: np.ndarray[Any, Any], k: int) -> list[str]:
    """The engine's result order: files scoring above 0, best first, ties by path."""
    candidates = np.flatnonzero(scores > 0)
    ranked = sorted(candidates.tolist(), key=lambda d: (-scores[d], engine.paths[d]))
    return [engine.paths[d] for d in ranked[:k]]


def cosine_files(engine: SearchEngine) -> Callable[[str, int], list[str]]:
    """MiniLM cosine of the query against every section vector, best section per file."""
    matrix = engine.ensure_vectors()
    paths = [engine.paths[int(d)] for d in engine.catalog.section_doc]  # the matrix's rows

    def rank(query: str, k: int) -> list[str]:
        scores = np.einsum("ij,j->i", matrix, engine.query_vector(query))
        found: list[str] = []
        for index in np.argsort(-scores, kind="stable"):
            path = paths[int(index)]
            if path not in found:
                found.append(path)
                if len(found) == k:
                    break
        return found

    return rank


def plain_rrf(engine: SearchEngine) -> Callable[[str], list[str]]:
    """bm25s and MiniLM cosine file rankings fused by textbook RRF (k = 60)."""
    bm25 = bm25s_ranker(engine, support=False)
    cosine = cosine_files(engine)

    def rank(query: str) -> list[str]:
        totals: dict[str, float] = collections.defaultdict(float)
        for ranking in (bm25(query, PEER_DEPTH), cosine(query, PEER_DEPTH)):
            for position, path in enumerate(ranking, 1):
                totals[path] += 1.0 / (RRF_K + position)
        return sorted(totals, key=lambda p: (-totals[p], p))[:10]

    return rank


def rankers(engine: SearchEngine) -> dict[str, Callable[[str], list[str]]]:
    def mode(name: str, fusion: str | None = None) -> Callable[[str], list[str]]:
        return lambda q: [r.path for r in engine.search(q, mode=name, limit=10, fusion=fusion)]

    from cuedeck_search.settings import SearchSettings

    settings = engine.workspace.config.section("search", SearchSettings)
    weighted = f"hybrid, weighted {settings.semantic_weight:g}/{settings.keyword_weight:g}"
    return {
        "keyword": mode("keyword"),
        "semantic": mode("semantic"),
        "hybrid, rrf (default)": mode("hybrid", "rrf"),
        weighted: mode("hybrid", "weighted"),
        "peer: bm25s": bm25s_ranker(engine, support=False),
        "peer: plain RRF (bm25s + MiniLM, k=60)": plain_rrf(engine),
    }


# --- measuring ---------------------------------------------------------------------------


def score(rank: Callable[[str], list[str]], queries: list[dict[str, Any]]) -> dict[str, Any]:
    per_kind: dict[str, list[tuple[float, float]]] = collections.defaultdict(list)
    for item in queries:
        ranked = rank(item["query"])
        pair = (ndcg_at(ranked, item["relevant"]), recall_at(ranked, item["relevant"]))
        per_kind["all"].append(pair)
        per_kind[item["kind"]].append(pair)
    return {
        kind: {
            "ndcg@10": round(statistics.fmean(p[0] for p in pairs), 4),
            "recall@10": round(statistics.fmean(p[1] for p in pairs), 4),
            "queries": len(pairs),
        }
        for kind, pairs in per_kind.items()
    }


def sweep(engine: SearchEngine, queries: list[dict[str, Any]]) -> dict[str, Any]:
    """nDCG@10 of weighted fusion per semantic weight (keyword weight = 1 - it), and the
    paired difference of the best weight against the configured one (mean, std. error)."""
    from cuedeck_search.fusion import fuse
    from cuedeck_search.settings import SearchSettings

    settings = engine.workspace.config.section("search", SearchSettings)
    allowed = np.ones(len(engine.paths), dtype=bool)
    sides = []
    for item in queries:
        keyword = engine.keyword_scores(item["query"])
        semantic = engine.semantic_scores(item["query"])
        sides.append((item, keyword, semantic))
    per_query: dict[str, list[float]] = {}
    for weight in WEIGHTS:
        chosen = attrs.evolve(settings, semantic_weight=weight, keyword_weight=round(1 - weight, 2))
        values = []
        for item, keyword, semantic in sides:
            fused = fuse(chosen, "weighted", keyword.files, keyword.sections, semantic.files,
                         semantic.sections, allowed)  # fmt: skip
            values.append(ndcg_at(top_files(engine, fused.files, 10), item["relevant"]))
        per_query[f"{weight:.2f}"] = values
    curve = {w: round(statistics.fmean(v), 4) for w, v in per_query.items()}
    best = max(curve, key=lambda w: curve[w])
    configured = f"{settings.semantic_weight:.2f}"
    gaps = [b - c for b, c in zip(per_query[best], per_query[configured], strict=True)]
    return {
        "curve": curve,
        "best": best,
        "configured": configured,
        "best_minus_configured": round(statistics.fmean(gaps), 4),
        "std_error": round(statistics.stdev(gaps) / len(gaps) ** 0.5, 4),
    }


FIRST = """
import json, sys, time
started = time.perf_counter()
import cuedeck.workspace, cuedeck_search.engine
from cuedeck import open_workspace
from cuedeck_search.settings import SearchSettings
imported = time.perf_counter()
workspace = open_workspace(sys.argv[1])
counter = workspace.token_counter
counted = time.perf_counter()
workspace.refresh()
indexed = time.perf_counter()
engine = workspace.service("search")
engine.background = False
engine.sync()
split = time.perf_counter()
results = engine.search(sys.argv[2], mode="hybrid")
answered = time.perf_counter()
print(json.dumps({
    "imports_s": round(imported - started, 3),
    "token_counter_s": round(counted - imported, 3),
    "index_s": round(indexed - counted, 3),
    "sections_and_keyword_s": round(split - indexed, 3),
    "search_s": round(answered - split, 3),
    "coverage": results[0].semantic_coverage if results else None,
}))
"""


def first_answer(corpora: Path, name: str, query: str, into: Path, runs: int = 3) -> dict[str, Any]:
    """``cue init`` then ``cue search --json`` on fresh copies, in fresh processes."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env = {k: v for k, v in env.items() if not k.startswith(("CUEDECK_", "CUE_"))}
    found = []
    breakdown: dict[str, Any] = {}
    for run in range(runs):
        place = into / f"first-{name}-{run}"
        shutil.rmtree(place, ignore_errors=True)
        place.mkdir(parents=True)
        with tarfile.open(corpora / f"{name}.tar.gz") as archive:
            archive.extractall(place, filter="data")
        root = place / name
        started = time.perf_counter()
        subprocess.run([CUE, "-C", str(root), "init"], check=True, capture_output=True, env=env)
        initialised = time.perf_counter()
        output = subprocess.run(
            [CUE, "-C", str(root), "search", "--mode", "hybrid", "--json", query],
            check=True, capture_output=True, text=True, env=env,
        ).stdout  # fmt: skip
        answered = time.perf_counter()
        reply = json.loads(output)
        found.append({
            "init_s": initialised - started,
            "search_s": answered - initialised,
            "results": len(reply["results"]),
            "semantic_coverage": reply.get("semantic_coverage",
                                           (reply["results"] or [{}])[0].get("semantic_coverage")),
        })  # fmt: skip
        if run == 0:  # where the time goes: the same steps, timed one by one
            shutil.rmtree(root / ".cuedeck" / ".cache")
            breakdown = json.loads(subprocess.run(
                [sys.executable, "-c", FIRST, str(root), query],
                check=True, capture_output=True, text=True, env=env,
            ).stdout)  # fmt: skip
        shutil.rmtree(place, ignore_errors=True)
    return {
        "init_s": round(statistics.median(r["init_s"] for r in found), 3),
        "first_hybrid_answer_s": round(statistics.median(r["search_s"] for r in found), 3),
        "results": found[0]["results"],
        "semantic_coverage": found[0]["semantic_coverage"],
        "runs": runs,
        "breakdown": breakdown,
    }


def open_engine(root: Path) -> SearchEngine:
    from cuedeck import open_workspace

    engine: SearchEngine = open_workspace(root).service("search")
    engine.background = False  # embedding happens in the foreground, timed apart
    return engine


def evaluate(engine: SearchEngine, queries: list[dict[str, Any]]) -> dict[str, Any]:
    started = time.perf_counter()
    embedded = engine.embed_all()
    embedding_s = time.perf_counter() - started
    return {
        "files": len(engine.paths),
        "sections": int(engine.catalog.live_sections.sum()),
        "queries": len(queries),
        "embedded_now": embedded,
        "embedding_s": round(embedding_s, 1),
        "rankers": {name: score(rank, queries) for name, rank in rankers(engine).items()},
        "sweep": sweep(engine, queries),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", help="folder holding the shared corpora tarballs")
    parser.add_argument("--work", type=Path, help="keep the workspaces (and vectors) here")
    parser.add_argument("--queries", type=int, default=200, help="held-out tldr queries")
    parser.add_argument(
        "--pages",
        type=int,
        default=2000,
        help="pages of the held-out tldr workspace (0: all 7,426)",
    )
    parser.add_argument(
        "--tldr-p50",
        action="store_true",
        help="embed all of tldr (minutes) and time warm hybrid queries on it",
    )
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()

    corpora = corpora_dir(args.corpora)
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="cuedeck-search-quality-") as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        report: dict[str, Any] = {"machine": {"cpus": os.cpu_count()}}
        report["machine"]["load_at_start"] = [round(x, 1) for x in os.getloadavg()]

        fastapi_queries = json.loads(QUERIES.read_text(encoding="utf-8"))["queries"]
        engine = open_engine(extract(corpora, "fastapi-docs-en", work))
        report["fastapi"] = evaluate(engine, fastapi_queries)
        report["fastapi"]["warm_hybrid_p50_ms"] = p50_ms(
            engine, [q["query"] for q in fastapi_queries], "hybrid"
        )

        tldr_root = extract(corpora, "tldr-pages-en", work)
        tldr_cache = tldr_root / ".cuedeck" / ".cache"
        if args.tldr_p50:
            engine = open_engine(tldr_root)
            started = time.perf_counter()
            embedded = engine.embed_all()
            report["tldr"] = {
                "files": len(engine.paths),
                "embedded_now": embedded,
                "embedding_s": round(time.perf_counter() - started, 1),
                "warm_hybrid_p50_ms": p50_ms(engine, TLDR_QUERIES, "hybrid"),
            }
            del engine

        heldout_root = work / f"tldr-heldout-{args.pages or 'all'}"
        if not heldout_root.exists() and tldr_cache.is_dir():
            # Vectors of the whole corpus exist (--tldr-p50, now or in an earlier run in
            # --work): start from them, as a second clone would, so that only pages
            # whose text differs are embedded.
            shutil.copytree(tldr_cache, heldout_root / ".cuedeck" / ".cache",
                            ignore=shutil.ignore_patterns("index.lock*"))  # fmt: skip
        heldout_queries = heldout_set(tldr_root, heldout_root, args.queries, args.pages)
        report["tldr_heldout"] = evaluate(open_engine(heldout_root), heldout_queries)
        report["tldr_heldout"]["examples"] = heldout_queries[:5]

        report["first_answer"] = {
            "fastapi": first_answer(corpora, "fastapi-docs-en",
                                    "how do I add a custom header to every response", work),
            "tldr": first_answer(corpora, "tldr-pages-en", "extract a tar archive", work),
        }  # fmt: skip
    report["run_s"] = round(time.perf_counter() - began, 1)
    report["machine"]["load_at_end"] = [round(x, 1) for x in os.getloadavg()]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print_report(report)
    print(f"\nwritten to {args.out}")


def print_report(report: dict[str, Any]) -> None:
    for key, title in (("fastapi", "fastapi-docs-en"), ("tldr_heldout", "tldr held-out")):
        block = report[key]
        print(f"\n{title}: {block['queries']} queries, {block['files']} files, "
              f"{block['sections']} sections (embedded now: {block['embedded_now']}, "
              f"{block['embedding_s']} s)")  # fmt: skip
        kinds = [k for k in next(iter(block["rankers"].values())) if k != "all"]
        print(f"{'ranker':<42}{'nDCG@10':>9}{'R@10':>7}" + "".join(f"{k:>12}" for k in kinds))
        for name, row in block["rankers"].items():
            cells = "".join(f"{row[k]['ndcg@10']:>12.3f}" for k in kinds)
            print(f"{name:<42}{row['all']['ndcg@10']:>9.3f}{row['all']['recall@10']:>7.3f}{cells}")
        found = block["sweep"]
        print("weighted sweep (semantic weight: nDCG@10): " + ", ".join(
            f"{w}: {v:.3f}" for w, v in found["curve"].items()))  # fmt: skip
        gap, error = found["best_minus_configured"], found["std_error"]
        print(f"best {found['best']} - configured {found['configured']}: {gap:+.4f} "
              f"(std. error {error})")  # fmt: skip
    for name, first in report["first_answer"].items():
        warm = report.get(name, {}).get("warm_hybrid_p50_ms", "(--tldr-p50)")
        print(f"{name}: cue init {first['init_s']} s, first hybrid answer "
              f"{first['first_hybrid_answer_s']} s (coverage {first['semantic_coverage']}), "
              f"warm hybrid p50 {warm} ms")  # fmt: skip
        print(f"  where the time goes (one fresh process): {first['breakdown']}")
    print(f"run: {report['run_s']} s, load {report['machine']}")


if __name__ == "__main__":
    main()
