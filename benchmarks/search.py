"""Search quality and speed on the shared corpora (issue 5).

    uv run python benchmarks/search.py [--corpora DIR] [--skip-tldr]

Quality: the labelled fastapi queries (benchmarks/queries/fastapi.json), nDCG@10 and
recall@10 per file for keyword, semantic, hybrid (both fusions) and ``bm25s`` run on the
very same sections (stemmed with our stemmer, best section per file), all in this run.
Speed: warm query p50 per mode (the query embedding is not cached between timed
queries), keyword p50 on tldr-pages-en, cold embedding throughput next to raw
onnxruntime on the same word pieces and batches, and a restart in a fresh process with
the warm cache. Prints a table and writes benchmarks/results/search.json.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
QUERIES = REPO / "benchmarks" / "queries" / "fastapi.json"
RESULTS = REPO / "benchmarks" / "results" / "search.json"
TLDR_QUERIES = [
    "extract a tar archive",
    "list files sorted by size",
    "git amend last commit",
    "find files by name",
    "show disk usage",
    "compress a directory with zip",
    "kill a process by name",
    "change file permissions",
    "download a file over http",
    "search text in files recursively",
    "docker remove stopped containers",
    "create a python virtual environment",
    "ssh port forwarding",
    "rename a git branch",
    "convert video to gif",
    "show network interfaces",
    "count lines in a file",
    "mount a usb drive",
    "schedule a cron job",
    "check open ports",
]


def corpora_dir(explicit: str | None) -> Path:
    for candidate in (explicit, os.environ.get("CUEDECK_CORPORA"), REPO.parent / "shared" /
                      "corpora", "/work/shared/corpora"):  # fmt: skip
        if candidate and (Path(candidate) / "fastapi-docs-en.tar.gz").is_file():
            return Path(candidate)
    sys.exit("shared corpora not found; pass --corpora DIR or set CUEDECK_CORPORA")


def workspace_from(corpora: Path, name: str, into: Path) -> Path:
    """Extract a corpus into ``into`` and make it a workspace."""
    with tarfile.open(corpora / f"{name}.tar.gz") as archive:
        archive.extractall(into, filter="data")
    root = into / name
    (root / ".cuedeck").mkdir(exist_ok=True)
    return root


# --- quality -----------------------------------------------------------------------------


def ndcg_at(ranked: list[str], relevant: dict[str, int], k: int = 10) -> float:
    gains = [
        (2 ** relevant.get(path, 0) - 1) / math.log2(i + 2) for i, path in enumerate(ranked[:k])
    ]
    ideal = sorted(relevant.values(), reverse=True)[:k]
    best = sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    return sum(gains) / best if best else 0.0


def recall_at(ranked: list[str], relevant: dict[str, int], k: int = 10) -> float:
    return len(set(ranked[:k]) & set(relevant)) / len(relevant)


def bm25s_ranker(engine: Any, support: bool) -> Any:
    """bm25s over the engine's sections (heading path + text), aggregated per file.

    Without ``support`` a file scores as its best section; with it, the way our keyword
    mode aggregates (best + 0.3 * second + 0.09 * third), so that the comparison
    isolates the ranking function.
    """
    import bm25s

    from cuedeck_search.analysis import stem
    from cuedeck_search.bm25 import SUPPORT_DECAY, SUPPORT_DEPTH

    def stem_words(words: list[str]) -> list[str]:
        return [stem(w) for w in words]

    sections = engine.sections
    corpus = [f"{s.context}\n{s.text}" for s in sections]
    tokens = bm25s.tokenize(corpus, stopwords="en", stemmer=stem_words, show_progress=False)
    retriever = bm25s.BM25()
    retriever.index(tokens, show_progress=False)
    paths = [s.path for s in sections]

    def rank(query: str, k: int = 10) -> list[str]:
        query_tokens = bm25s.tokenize([query], stopwords="en", stemmer=stem_words,
                                       show_progress=False)  # fmt: skip
        found, scores = retriever.retrieve(query_tokens, k=min(200, len(sections)),
                                           show_progress=False)  # fmt: skip
        totals: dict[str, float] = {}
        seen: dict[str, int] = {}
        for index, score in zip(found[0], scores[0], strict=True):
            if score <= 0:
                break
            path = paths[int(index)]
            rank = seen.get(path, 0)
            seen[path] = rank + 1
            if rank == 0 or (support and rank < SUPPORT_DEPTH):
                totals[path] = totals.get(path, 0.0) + float(score) * SUPPORT_DECAY**rank
        return sorted(totals, key=lambda p: (-totals[p], p))[:k]

    return rank


def quality(engine: Any, queries: list[dict[str, Any]]) -> dict[str, Any]:
    rankers: dict[str, Any] = {
        "keyword": lambda q: [r.path for r in engine.search(q, mode="keyword", limit=10)],
        "semantic": lambda q: [r.path for r in engine.search(q, mode="semantic", limit=10)],
        "hybrid (rrf)": lambda q: [
            r.path for r in engine.search(q, mode="hybrid", limit=10, fusion="rrf")
        ],
        "hybrid (weighted)": lambda q: [
            r.path for r in engine.search(q, mode="hybrid", limit=10, fusion="weighted")
        ],
        "bm25s (best section)": bm25s_ranker(engine, support=False),
        "bm25s (same aggregation)": bm25s_ranker(engine, support=True),
    }
    table: dict[str, Any] = {}
    for name, rank in rankers.items():
        per_kind: dict[str, list[tuple[float, float]]] = {}
        misses = []
        for item in queries:
            ranked = rank(item["query"])
            scores = (ndcg_at(ranked, item["relevant"]), recall_at(ranked, item["relevant"]))
            per_kind.setdefault(item["kind"], []).append(scores)
            per_kind.setdefault("all", []).append(scores)
            if scores[1] == 0:
                misses.append(item["id"])
        table[name] = {
            kind: {
                "ndcg@10": round(statistics.fmean(s[0] for s in values), 4),
                "recall@10": round(statistics.fmean(s[1] for s in values), 4),
                "queries": len(values),
            }
            for kind, values in per_kind.items()
        }
        table[name]["missed"] = misses
    return table


# --- speed -------------------------------------------------------------------------------


def p50_ms(engine: Any, queries: list[str], mode: str, rounds: int = 3) -> float:
    for query in queries:
        engine.search(query, mode=mode, limit=10)  # warm: index built, vectors loaded
    timings = []
    for _ in range(rounds):
        for query in queries:
            engine._queries.clear()  # time the query's embedding too
            started = time.perf_counter()
            engine.search(query, mode=mode, limit=10)
            timings.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(timings), 2)


def raw_batches(embedder: Any, texts: list[str]) -> tuple[list[Any], int]:
    """The model inputs of ``texts`` in the batches our pipeline makes (by length, under
    the embedder's word-piece budget)."""
    encoded = embedder.encode(texts)
    batches = [embedder.feed([encoded[i] for i in run]) for run in embedder.batches(encoded)]
    return batches, sum(len(e) for e in encoded)


def plain_session(embedder: Any) -> Any:
    """onnxruntime as a user would call it: default options (every core), one run at a time."""
    import onnxruntime

    return onnxruntime.InferenceSession(
        str(embedder.model_path), providers=["CPUExecutionProvider"]
    )


class BeforeIssue15:
    """The embedding pipeline before issue 15, rebuilt to run beside ours on the same
    slices: the published (float-arithmetic) MiniLM file on one two-thread session,
    texts cut at 256 word pieces, sorted by length, fixed batches of 16, mean-pooled and
    normalised."""

    def __init__(self) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        from cuedeck_search.onnx_model import model_file, tokenizer_file

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 2
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        self.session = onnxruntime.InferenceSession(
            str(model_file("float").path), options, providers=["CPUExecutionProvider"]
        )
        self.names = {i.name for i in self.session.get_inputs()}
        self.tokenizer = Tokenizer.from_file(str(tokenizer_file()))
        self.tokenizer.enable_truncation(256)
        self.tokenizer.no_padding()

    def embed(self, texts: list[str]) -> None:
        import numpy as np

        encoded = [e.ids for e in self.tokenizer.encode_batch(texts)]
        order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
        for start in range(0, len(order), 16):
            rows = [encoded[i] for i in order[start : start + 16]]
            ids = np.zeros((len(rows), max(len(r) for r in rows)), dtype=np.int64)
            mask = np.zeros_like(ids)
            for n, row in enumerate(rows):
                ids[n, : len(row)] = row
                mask[n, : len(row)] = 1
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": 0 * ids}
            tokens = self.session.run(None, {k: v for k, v in feed.items() if k in self.names})
            pooled = (tokens[0] * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
            pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)


def cold_embedding(engine: Any, slices: int = 10) -> dict[str, Any]:
    """Embed every section cold, slice by slice, each slice then again raw.

    Alternating the two on the same slices keeps a busy machine from favouring either;
    "ours" is the whole pipeline (tokenise, batch, run in parallel, pool, normalise, save
    to SQLite), "raw" is a default onnxruntime session alone on the same word pieces in
    the same batches, one after the other, and "before" the pipeline before issue 15
    (:class:`BeforeIssue15`) on the same texts.
    """
    engine.sync()
    unique = list({s.hash: s for s in engine.sections}.values())
    embedder = engine.embedder
    session = plain_session(embedder)
    warm, _ = raw_batches(embedder, ["warm up the session"])
    session.run(None, warm[0])
    embedder.embed(["warm up the session"])
    before = BeforeIssue15()
    before.embed(["warm up the session"])
    ours = raw = earlier = 0.0
    tokens = 0
    size = -(-len(unique) // slices)
    for start in range(0, len(unique), size):
        part = unique[start : start + size]
        began = time.perf_counter()
        engine.embed_sections(part)
        ours += time.perf_counter() - began
        batches, count = raw_batches(embedder, [s.embedding_text for s in part])
        tokens += count
        began = time.perf_counter()
        for feed in batches:
            session.run(None, feed)
        raw += time.perf_counter() - began
        began = time.perf_counter()
        before.embed([s.embedding_text for s in part])
        earlier += time.perf_counter() - began
    began = time.perf_counter()
    engine.ensure_vectors()  # everything is in memory and in the cache now
    assemble = time.perf_counter() - began
    assert engine.stats.chunks_embedded == len(unique)
    return {
        "chunks": len(unique),
        "tokens": tokens,
        "ours_s": round(ours + assemble, 2),
        "raw_s": round(raw, 2),
        "ours_chunks_per_s": round(len(unique) / (ours + assemble), 1),
        "ours_tokens_per_s": round(tokens / (ours + assemble)),
        "raw_chunks_per_s": round(len(unique) / raw, 1),
        "raw_tokens_per_s": round(tokens / raw),
        "overhead": round((ours + assemble) / raw - 1, 3),
        "model": embedder.model_id,
        "before_s": round(earlier, 2),
        "before_chunks_per_s": round(len(unique) / earlier, 1),
        "speedup_over_before": round(earlier / (ours + assemble), 2),
    }


RESTART = """
import json, sys, time
started = time.perf_counter()
import numpy
import cuedeck.workspace, cuedeck_search.engine, cuedeck_search.catalog
from cuedeck import open_workspace
imported = time.perf_counter()
workspace = open_workspace(sys.argv[1])
engine = workspace.service("search")
engine.sync()
engine.ensure_vectors()
ready = time.perf_counter()
engine.embedder.session  # what the first query needs
model = time.perf_counter()
engine.search("how do I add a custom header to every response", mode="hybrid")
first = time.perf_counter()
print(json.dumps({
    "imports_ms": round((imported - started) * 1000, 1),
    "ready_ms": round((ready - imported) * 1000, 1),
    "model_load_ms": round((model - ready) * 1000, 1),
    "first_hybrid_query_ms": round((first - model) * 1000, 1),
    "documents_split": engine.stats.documents_split,
    "documents_loaded": engine.stats.documents_loaded,
    "chunks_embedded": engine.stats.chunks_embedded,
    "chunks_loaded": engine.stats.chunks_loaded,
}))
"""


def restart(root: Path, runs: int = 5) -> dict[str, Any]:
    """Median of ``runs`` fresh processes opening the warm workspace."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    found = []
    for _ in range(runs):
        output = subprocess.run([sys.executable, "-c", RESTART, str(root)], check=True,
                                capture_output=True, text=True, env=env).stdout  # fmt: skip
        found.append(json.loads(output))
    return {key: statistics.median(run[key] for run in found) for key in found[0]}


# --- main --------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", help="folder holding the shared corpora tarballs")
    parser.add_argument("--skip-tldr", action="store_true", help="skip the tldr-pages run")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()

    from cuedeck import open_workspace

    corpora = corpora_dir(args.corpora)
    queries = json.loads(QUERIES.read_text(encoding="utf-8"))["queries"]
    report: dict[str, Any] = {"machine": {"cpus": os.cpu_count()}, "queries": len(queries)}
    with tempfile.TemporaryDirectory(prefix="cuedeck-search-bench-") as tmp:
        # A user cache of the run's own: embedding is measured cold, and the real one
        # is left alone.
        os.environ["CUEDECK_CACHE_DIR"] = str(Path(tmp) / "user-cache")
        root = workspace_from(corpora, "fastapi-docs-en", Path(tmp))
        workspace = open_workspace(root)
        engine = workspace.service("search")

        started = time.perf_counter()
        engine.sync()
        keyword_build = time.perf_counter() - started
        report["fastapi"] = {
            "files": len(engine.paths),
            "sections": int(engine.catalog.live_sections.sum()),
            "keyword_build_s": round(keyword_build, 3),
            "cold_embedding": cold_embedding(engine),
        }
        report["quality"] = quality(engine, queries)
        texts = [q["query"] for q in queries]
        report["fastapi"]["p50_ms"] = {
            mode: p50_ms(engine, texts, mode) for mode in ("keyword", "semantic", "hybrid")
        }
        report["fastapi"]["restart"] = restart(root)

        if not args.skip_tldr:
            root = workspace_from(corpora, "tldr-pages-en", Path(tmp))
            workspace = open_workspace(root)
            engine = workspace.service("search")
            started = time.perf_counter()
            engine.sync()
            report["tldr"] = {
                "files": len(engine.paths),
                "sections": int(engine.catalog.live_sections.sum()),
                "keyword_build_s": round(time.perf_counter() - started, 3),
                "keyword_p50_ms": p50_ms(engine, TLDR_QUERIES, "keyword"),
            }

    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print_table(report)
    print(f"\nwritten to {args.out}")


def print_table(report: dict[str, Any]) -> None:
    print(f"\nQuality on fastapi-docs-en ({report['queries']} labelled queries, per file)")
    kinds = ["all", "keyword", "paraphrase", "conceptual"]
    print(f"{'ranker':<20}" + "".join(f"{k + ' nDCG':>17}{'R@10':>7}" for k in kinds))
    for name, row in report["quality"].items():
        cells = "".join(
            f"{row[k]['ndcg@10']:>17.3f}{row[k]['recall@10']:>7.3f}" for k in kinds if k in row
        )
        print(f"{name:<20}{cells}")
    fastapi = report["fastapi"]
    print(f"\nSpeed (fastapi: {fastapi['files']} files, {fastapi['sections']} sections)")
    for mode, value in fastapi["p50_ms"].items():
        print(f"  warm {mode:<8} p50  {value:8.2f} ms")
    if "tldr" in report:
        tldr = report["tldr"]
        print(f"  tldr keyword p50  {tldr['keyword_p50_ms']:8.2f} ms "
              f"({tldr['files']} files, build {tldr['keyword_build_s']} s)")  # fmt: skip
    cold = fastapi["cold_embedding"]
    print(f"  cold embedding    {cold['ours_chunks_per_s']} chunks/s, "
          f"{cold['ours_tokens_per_s']} tokens/s ({cold['chunks']} chunks, {cold['tokens']} "
          f"word pieces, {cold['ours_s']} s)")  # fmt: skip
    print(f"  raw onnxruntime   {cold['raw_chunks_per_s']} chunks/s, "
          f"{cold['raw_tokens_per_s']} tokens/s (same batches, {cold['raw_s']} s)")  # fmt: skip
    print(f"  overhead          {cold['overhead']:.1%} ({cold['model']})")
    print(f"  before issue 15   {cold['before_chunks_per_s']} chunks/s ({cold['before_s']} s): "
          f"ours is {cold['speedup_over_before']}x")  # fmt: skip
    print(f"  restart (warm)    {fastapi['restart']}")


if __name__ == "__main__":
    main()
