"""Code ranking on many repositories' own histories, against bm25s, in the same run.

    uv run python benchmarks/code_ranking.py --work DIR [--split tune|test|all]
        [--repos a,b] [--skip-semantic] [--rebuild] [--mirrors DIR] [--out FILE]

The cases are benchmarks/code_cases.py's (mined once into ``DIR/cases``, base trees
written into ``DIR/trees``; ``DIR`` outside this repository). For each repository, in
one process, on its base tree:

- **file level**: Hit@1/@5/@10 (an answer file in the top k) and MRR (the first answer
  file's rank) of CueDeck's ``keyword``, ``semantic`` and ``hybrid`` (the default mode)
  file rankings (``Workspace.search``, limit 10, over everything the workspace indexes:
  docs, tests and all), and of **bm25s over whole files**: the repository's non-test
  source files (code_cases.source_file), identifiers split (snake and camel case), the
  SWE-bench retrieval baseline;
- **function level** (cases with a modified definition at the base): Acc@5/@10 (every
  modified definition among the top k, as LocAgent counts it) and Hit@5/@10 (any) of
  ``search_code`` in each mode (limit 10) and of **bm25s over functions**: each
  definition of those source files (its lines, path and qualified name), identifiers
  split;
- **exact names**: each sampled definition's qualified name as the query; the share
  whose definition comes first: the default search's first file with the definition as
  its first anchor, and ``search_code``'s first hit.

Semantic and hybrid embed every section first (vectors are kept in the user cache, so a
second run embeds nothing). Prints a table per measure and writes
``benchmarks/results/code_ranking.json`` (every case's ranks too).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != HERE]
sys.path.insert(0, str(REPO))

from benchmarks.code import split_identifiers  # noqa: E402
from benchmarks.code_cases import (  # noqa: E402
    MIRRORS,
    REPOSITORIES,
    Repository,
    base_tree,
    load_cases,
    parse,
    repository,
    source_file,
)

MODES = ("keyword", "semantic", "hybrid")
DEPTH = 10


# --- peers -----------------------------------------------------------------------------------


class BM25:
    """bm25s over documents of identifier-split words (English stop words out)."""

    def __init__(self, documents: list[str]) -> None:
        import bm25s

        self.stop = set(bm25s.stopwords.STOPWORDS_EN)
        self.retriever = bm25s.BM25()
        self.size = len(documents)
        self.retriever.index(
            [[t for t in split_identifiers(d) if t not in self.stop] for d in documents],
            show_progress=False,
        )

    def top(self, query: str, k: int = DEPTH) -> list[int]:
        """Indexes of the best ``k`` documents scoring above 0."""
        tokens = [t for t in split_identifiers(query) if t not in self.stop]
        if not tokens or not self.size:
            return []
        scores = self.retriever.get_scores(tokens)
        order = sorted(range(self.size), key=lambda i: (-scores[i], i))[:k]
        return [i for i in order if scores[i] > 0]


def source_paths(root: Path, repo: Repository) -> list[str]:
    """The base tree's non-test source files, sorted."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in (".git", ".cuedeck")]
        for name in filenames:
            path = os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")
            if source_file(path, repo):
                found.append(path)
    return sorted(found)


def function_documents(root: Path, paths: list[str]) -> tuple[list[tuple[str, str]], list[str]]:
    """Every definition of ``paths``: its ``(path, name)`` and its text (path, name, lines)."""
    keys: list[tuple[str, str]] = []
    texts: list[str] = []
    for path in paths:
        data = (root / path).read_bytes()
        lines = data.decode("utf-8", errors="replace").split("\n")
        for symbol in parse(path, data):
            keys.append((path, symbol["name"]))
            body = "\n".join(lines[symbol["line"] - 1 : symbol["end_line"]])
            texts.append(f"{path}\n{symbol['name']}\n{body}")
    return keys, texts


# --- metrics ---------------------------------------------------------------------------------


def file_rank(found: list[str], answers: list[str]) -> int | None:
    """The 1-based rank of the first answer in ``found``."""
    return next((i for i, path in enumerate(found, 1) if path in answers), None)


def file_metrics(ranks: list[int | None]) -> dict[str, float]:
    n = max(len(ranks), 1)
    hit = {k: sum(1 for r in ranks if r is not None and r <= k) / n for k in (1, 5, 10)}
    return {
        "cases": len(ranks),
        "hit@1": round(hit[1], 3),
        "hit@5": round(hit[5], 3),
        "hit@10": round(hit[10], 3),
        "mrr": round(sum(1.0 / r for r in ranks if r is not None) / n, 3),
    }


def function_ranks(found: list[tuple[str, str]], answers: list[tuple[str, str]]) -> list[int]:
    """The rank of each answer definition found (missing ones left out)."""
    at = {key: i for i, key in reversed(list(enumerate(found, 1)))}
    return [at[a] for a in answers if a in at]


def function_metrics(results: list[tuple[list[int], int]]) -> dict[str, float]:
    """Acc@k (every answer in the top k) and Hit@k (any) over ``(ranks found, answers)``."""
    n = max(len(results), 1)
    out: dict[str, float] = {"cases": len(results)}
    for k in (5, 10):
        out[f"acc@{k}"] = round(
            sum(1 for ranks, total in results if sum(r <= k for r in ranks) == total) / n, 3
        )
        out[f"hit@{k}"] = round(sum(1 for ranks, _ in results if any(r <= k for r in ranks)) / n, 3)
    return out


# --- one repository --------------------------------------------------------------------------


def measure(
    repo: Repository, work: Path, mirrors: Path, semantic: bool, rebuild: bool = False
) -> dict[str, Any]:
    from cuedeck import open_workspace
    from cuedeck_code.search_tool import search_code

    found = load_cases(repo, work, mirrors)
    cases = found["cases"]
    root = base_tree(repo, found, work, mirrors)
    started = time.perf_counter()
    workspace = open_workspace(root)
    workspace.refresh(rebuild=rebuild)
    engine = workspace.service("search")
    engine.sync(rebuild=rebuild)  # its saved sections are keyed by the file's bytes
    engine.keyword_scores("warm")
    row: dict[str, Any] = {
        "repository": repo.name,
        "split": repo.split,
        "language": repo.language,
        "base": found["base"],
        "files indexed": len(workspace.index.paths),
        "index s": round(time.perf_counter() - started, 1),
    }
    if semantic:
        started = time.perf_counter()
        row["sections embedded"] = engine.embed_all()
        row["embed s"] = round(time.perf_counter() - started, 1)
    modes = MODES if semantic else ("keyword",)
    queries = [c["query"] for c in cases]
    per_case: dict[str, Any] = {}

    # file level
    files: dict[str, Any] = {}
    for mode in modes:
        ranks, times = [], []
        for case in cases:
            started = time.perf_counter()
            results = workspace.search(case["query"], mode=mode, limit=DEPTH)
            times.append((time.perf_counter() - started) * 1000)
            ranks.append(file_rank([r.path for r in results], case["files"]))
        files[mode] = {**file_metrics(ranks), "p50 ms": round(statistics.median(times), 1)}
        per_case[f"file {mode}"] = ranks
    sources = source_paths(root, repo)
    peer = BM25([(root / p).read_text(errors="replace") for p in sources])
    ranks = [
        file_rank([sources[i] for i in peer.top(q)], c["files"])
        for q, c in zip(queries, cases, strict=True)
    ]
    files["bm25s files"] = file_metrics(ranks)
    per_case["file bm25s"] = ranks
    row["file level"] = files

    # function level
    with_functions = [c for c in cases if c["functions"]]
    functions: dict[str, Any] = {}
    for mode in modes:
        results = []
        for case in with_functions:
            hits = search_code(workspace, case["query"], mode=mode, limit=DEPTH)["results"]
            answers = [(f["path"], f["name"]) for f in case["functions"]]
            found_keys = [(h["path"], h["symbol"]) for h in hits]
            results.append((function_ranks(found_keys, answers), len(answers)))
        functions[mode] = function_metrics(results)
        per_case[f"function {mode}"] = [r for r, _ in results]
    keys, texts = function_documents(root, sources)
    peer = BM25(texts)
    results = []
    for case in with_functions:
        answers = [(f["path"], f["name"]) for f in case["functions"]]
        results.append(
            (function_ranks([keys[i] for i in peer.top(case["query"])], answers), len(answers))
        )
    functions["bm25s functions"] = function_metrics(results)
    per_case["function bm25s"] = [r for r, _ in results]
    row["function level"] = functions

    # exact names, in the default mode (hybrid when embedded)
    mode = "hybrid" if semantic else "keyword"
    first_file = first_code = 0
    missed = []
    for definition in found["definitions"]:
        name, path = definition["name"], definition["path"]
        results = workspace.search(name, mode=mode, limit=DEPTH)
        top = results[0] if results else None
        file_ok = top is not None and top.path == path and top.anchors[:1] == (name,)
        hits = search_code(workspace, name, mode=mode, limit=1)["results"]
        code_ok = bool(hits) and (hits[0]["path"], hits[0]["symbol"]) == (path, name)
        first_file += file_ok
        first_code += code_ok
        if not (file_ok and code_ok):
            missed.append(
                {
                    "name": name,
                    "path": path,
                    "search": (top.path, top.anchors[:1]) if top else None,
                    "search_code": (hits[0]["path"], hits[0]["symbol"]) if hits else None,
                }
            )
    row["exact names"] = {
        "definitions": len(found["definitions"]),
        "search first": first_file,
        "search_code first": first_code,
        "missed": missed,
    }
    row["per case"] = per_case
    return row


# --- tables ----------------------------------------------------------------------------------


def print_tables(rows: list[dict[str, Any]]) -> None:
    print("\n| repository | split | cases | ranker | Hit@1 | Hit@5 | Hit@10 | MRR |")
    print("| --- | --- | ---: | --- | ---: | ---: | ---: | ---: |")
    for row in rows:
        for ranker, m in row["file level"].items():
            print(
                f"| {row['repository']} | {row['split']} | {m['cases']} | {ranker} | "
                f"{m['hit@1']:.3f} | {m['hit@5']:.3f} | {m['hit@10']:.3f} | {m['mrr']:.3f} |"
            )
    print("\n| repository | split | cases | ranker | Acc@5 | Acc@10 | Hit@5 | Hit@10 |")
    print("| --- | --- | ---: | --- | ---: | ---: | ---: | ---: |")
    for row in rows:
        for ranker, m in row["function level"].items():
            print(
                f"| {row['repository']} | {row['split']} | {m['cases']} | {ranker} | "
                f"{m['acc@5']:.3f} | {m['acc@10']:.3f} | {m['hit@5']:.3f} | {m['hit@10']:.3f} |"
            )
    print("\n| repository | definitions | search first | search_code first |")
    print("| --- | ---: | ---: | ---: |")
    for row in rows:
        e = row["exact names"]
        print(
            f"| {row['repository']} | {e['definitions']} | {e['search first']} | "
            f"{e['search_code first']} |"
        )
    for split in ("tune", "test"):
        chosen = [r for r in rows if r["split"] == split]
        if not chosen:
            continue
        print(f"\nmean over {split} ({len(chosen)}):")
        for ranker in chosen[0]["file level"]:
            mrr = statistics.mean(r["file level"][ranker]["mrr"] for r in chosen)
            hit5 = statistics.mean(r["file level"][ranker]["hit@5"] for r in chosen)
            print(f"  file {ranker:12} MRR {mrr:.3f}  Hit@5 {hit5:.3f}")
        for ranker in chosen[0]["function level"]:
            acc5 = statistics.mean(r["function level"][ranker]["acc@5"] for r in chosen)
            print(f"  function {ranker:16} Acc@5 {acc5:.3f}")
        total = sum(r["exact names"]["definitions"] for r in chosen)
        first = sum(r["exact names"]["search first"] for r in chosen)
        code = sum(r["exact names"]["search_code first"] for r in chosen)
        print(f"  exact names: search {first}/{total}, search_code {code}/{total}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--work", type=Path, required=True, help="cases and trees (not in git)")
    parser.add_argument("--mirrors", type=Path, default=MIRRORS)
    parser.add_argument("--split", choices=("tune", "test", "all"), default="all")
    parser.add_argument("--repos", default="", help="comma-separated names (overrides --split)")
    parser.add_argument("--skip-semantic", action="store_true", help="keyword only (no model)")
    parser.add_argument(
        "--rebuild",
        action="store_true",
        help="parse and split every file again (the index and search keep a file's parse while "
        "its bytes and the parsers' names and patterns are unchanged: a parser's code change "
        "needs this)",
    )
    parser.add_argument("--out", type=Path, default=HERE / "results" / "code_ranking.json")
    args = parser.parse_args()
    if args.repos:
        chosen = [repository(n) for n in args.repos.split(",")]
    else:
        chosen = [r for r in REPOSITORIES if args.split in ("all", r.split)]
    rows = []
    for repo in chosen:
        print(f"== {repo.name} ({repo.split})", flush=True)
        row = measure(repo, args.work, args.mirrors, not args.skip_semantic, args.rebuild)
        rows.append(row)
        summary = {k: v for k, v in row.items() if k not in ("per case",)}
        summary["exact names"] = {k: v for k, v in row["exact names"].items() if k != "missed"}
        print(json.dumps(summary, indent=1), flush=True)
    print_tables(rows)
    args.out.parent.mkdir(exist_ok=True)
    args.out.write_text(json.dumps({"rows": rows}, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
