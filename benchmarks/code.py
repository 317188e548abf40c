"""Code benchmark: CueDeck on real source trees, against universal-ctags, ripgrep and bm25s.

    uv run python benchmarks/code.py [--sdists DIR] [--click-repo GIT_DIR] [--skip-semantic]

Trees: the source of Django (thousands of files) and of Click, from their PyPI sdists
(``pip download --no-binary :all: --no-deps django click -d DIR``; fetched into a temp
folder when ``--sdists`` is not given). For each tree:

- cold and warm index, ``cue index --json`` as a whole process (every core), against
  ``ctags -R`` (universal-ctags, Debian's ``universal-ctags``) on the same tree;
- a one-file refresh in process (an edited file; ``Workspace.refresh_paths``, what the
  MCP server and ``cue watch`` do, and a full ``refresh`` that stats every file);
- the cache size on disk against the source it indexes;
- ``search_code`` p50/p95 over a real ``cue mcp`` stdio session (keyword and hybrid; hybrid
  answers at once from the vectors there are);
- ``regex_search`` against ripgrep (``rg -n``) on the same pattern.

Localization quality: the set of benchmarks/localization.py built from Click's own history
(``--click-repo``: a git directory of pallets/click, e.g. the workplace's ``fetch``
snapshot), answered against its base tree: file-level Hit@1/@5/@10 and MRR of keyword,
semantic and hybrid (``Workspace.search``, the engine's own ranking of files) and of the
SWE-bench retrieval baseline, bm25s over whole files with identifiers split. Writes
benchmarks/results/code.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
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
REPO = HERE.parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != HERE]
sys.path.insert(0, str(REPO))

from mcp.client import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

from benchmarks.localization import base_tree, build_cases, score  # noqa: E402

CUE = str(Path(sys.executable).parent / "cue")
TARGETS = {"cold / ctags": 2.0, "refresh_paths ms": 50.0, "search_code p50 ms": 20.0}
QUERIES = {
    "django": [
        "QuerySet filter",
        "parse_header_parameters",
        "CsrfViewMiddleware",
        "get_object_or_404",
        "migration autodetector renamed field",
        "password hasher salt",
        "send_mail",
        "template variable resolve",
        "ModelAdmin get_queryset",
        "paginator page range",
        "URL resolver reverse",
        "cache key version",
        "timezone aware datetime",
        "form field clean validation",
        "select_related prefetch",
        "HttpResponseRedirect",
        "session engine save",
        "database connection cursor",
        "slugify unicode",
        "signal receiver",
    ],
    "click": [
        "parse args",
        "Option default value",
        "echo color",
        "prompt confirmation",
        "Context invoke",
        "shell completion",
        "progressbar",
        "ParamType convert",
        "MultiCommand",
        "get_terminal_size",
    ],
}
REGEX = {"django": r"def (get|set)_\w+\(self", "click": r"def (get|set)_\w+\(self"}


def env() -> dict[str, str]:
    found = {k: v for k, v in os.environ.items() if not k.startswith(("CUEDECK_", "CUE_"))}
    found.pop("PYTHONDONTWRITEBYTECODE", None)
    return found


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)


def sdist_tree(sdists: Path, name: str, into: Path) -> Path:
    archive = next(sdists.glob(f"{name}-*.tar.gz"), None) or next(
        sdists.glob(f"{name.capitalize()}-*.tar.gz")
    )
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    root = next(into.iterdir())
    (root / ".cuedeck" / "docs").mkdir(parents=True, exist_ok=True)
    (root / ".cuedeck" / "cards").mkdir(parents=True, exist_ok=True)
    (root / ".cuedeck" / "config.toml").write_text(
        "[rate_limits.search_code]\nper_minute = 0\n", encoding="utf-8"
    )
    return root


def timed(args: list[str], **kwargs: Any) -> tuple[float, subprocess.CompletedProcess[bytes]]:
    started = time.perf_counter()
    done = subprocess.run(args, capture_output=True, check=False, **kwargs)
    return time.perf_counter() - started, done


def index_figures(root: Path) -> dict[str, Any]:
    row: dict[str, Any] = {}
    shutil.rmtree(root / ".cuedeck" / ".cache", ignore_errors=True)
    cold, done = timed([CUE, "-C", str(root), "index", "--json"], env=env())
    report = json.loads(done.stdout)
    warm, _ = timed([CUE, "-C", str(root), "index", "--json"], env=env())
    tags = Path(tempfile.mkdtemp()) / "tags"
    ctags, _ = timed(["ctags", "-R", "-f", str(tags), str(root)])
    row.update(
        {
            "files indexed": report["seen"],
            "languages": report["languages"],
            "not indexed": report["passed_over"],
            "cold index s": round(cold, 2),
            "warm index s": round(warm, 2),
            "ctags -R s": round(ctags, 2),
            "cold / ctags": round(cold / ctags, 2),
            "ctags tags": sum(
                1
                for line in tags.read_text(errors="replace").splitlines()
                if not line.startswith("!")
            ),
        }
    )
    source = sum(
        f.stat().st_size for f in root.rglob("*") if f.is_file() and ".cuedeck" not in f.parts
    )
    cache = sum(f.stat().st_size for f in (root / ".cuedeck" / ".cache").rglob("*") if f.is_file())
    row["source MB"] = round(source / 1e6, 1)
    row["cache MB"] = round(cache / 1e6, 1)
    return row


def refresh_figures(root: Path) -> dict[str, Any]:
    from cuedeck import open_workspace

    workspace = open_workspace(root)
    workspace.refresh()
    symbols = sum(len(d.symbols) for d in workspace.index.documents.values())
    path = next(p for p in workspace.index.paths if p.endswith(".py") and "/" in p)
    target = root / path
    original = target.read_bytes()
    one, full = [], []
    for n in range(5):
        target.write_bytes(original + f"\n# edit {n}\n".encode())
        started = time.perf_counter()
        workspace.refresh_paths([path])
        one.append((time.perf_counter() - started) * 1000)
        target.write_bytes(original + f"\n# edit again {n}\n".encode())
        started = time.perf_counter()
        workspace.refresh()
        full.append((time.perf_counter() - started) * 1000)
    target.write_bytes(original)
    return {
        "symbols": symbols,
        "refresh_paths ms": round(statistics.median(one), 1),
        "full refresh after one edit ms": round(statistics.median(full), 1),
    }


async def mcp_figures(root: Path, queries: list[str], pattern: str) -> dict[str, Any]:
    params = StdioServerParameters(
        command=CUE, args=["-C", str(root), "mcp", "--tools", "core,files"], env=env()
    )
    row: dict[str, Any] = {}
    async with Client(params, mode="legacy") as client:
        for mode in ("keyword", "hybrid"):
            await client.call_tool("search_code", {"query": queries[0], "mode": mode})
            times = []
            for _ in range(3):
                for query in queries:
                    started = time.perf_counter()
                    await client.call_tool("search_code", {"query": query, "mode": mode})
                    times.append((time.perf_counter() - started) * 1000)
            row[f"search_code {mode} p50 ms"] = p(times, 0.5)
            row[f"search_code {mode} p95 ms"] = p(times, 0.95)
        times = []
        matches = 0
        for _ in range(3):
            started = time.perf_counter()
            reply = await client.call_tool(
                "regex_search", {"pattern": pattern, "max_matches": 1000, "max_tokens": 100000}
            )
            times.append((time.perf_counter() - started) * 1000)
            matches = reply.structured_content["returned"] if reply.structured_content else 0
        row["regex_search ms"] = round(statistics.median(times), 1)
        row["regex_search matches"] = matches
    row["search_code p50 ms"] = row["search_code keyword p50 ms"]
    rg = shutil.which("rg")
    if rg:
        times = []
        for _ in range(3):
            elapsed, done = timed([rg, "-n", "-e", pattern, str(root)])
            times.append(elapsed * 1000)
        row["ripgrep ms"] = round(statistics.median(times), 1)
        row["ripgrep matches"] = len(done.stdout.splitlines())
    return row


# --- localization --------------------------------------------------------------------------

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+")
_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def split_identifiers(text: str) -> list[str]:
    """Words of ``text`` with identifiers split (snake and camel case), lower case."""
    out: list[str] = []
    for word in _IDENTIFIER.findall(text):
        parts = [x.lower() for x in _PARTS.findall(word)]
        out.extend(parts)
        if len(parts) > 1:
            out.append(word.lower())
    return out


def bm25s_files(root: Path, paths: list[str]) -> Any:
    """The SWE-bench retrieval baseline: bm25s over whole files, identifiers split."""
    import bm25s

    stop = set(bm25s.stopwords.STOPWORDS_EN)
    corpus = [
        [t for t in split_identifiers((root / path).read_text(errors="replace")) if t not in stop]
        for path in paths
    ]
    retriever = bm25s.BM25()
    retriever.index(corpus, show_progress=False)

    def rank(query: str) -> list[str]:
        tokens = [t for t in split_identifiers(query) if t not in stop]
        if not tokens:
            return []
        scores = retriever.get_scores(tokens)
        order = sorted(range(len(paths)), key=lambda i: (-scores[i], paths[i]))[:10]
        return [paths[i] for i in order if scores[i] > 0]

    return rank


def localization(repo: Path, work: Path, semantic: bool) -> dict[str, Any]:
    from cuedeck import open_workspace

    base, cases = build_cases(repo)
    root = base_tree(repo, base, work / "click-base")
    workspace = open_workspace(root)
    workspace.refresh()
    engine = workspace.service("search")
    if semantic:
        engine.embed_all()
    paths = [p for p in workspace.index.paths]
    results: dict[str, Any] = {"base": base, "cases": len(cases)}
    modes = ["keyword", "semantic", "hybrid"] if semantic else ["keyword"]
    for mode in modes:
        ranked = [[r.path for r in workspace.search(c.query, mode=mode, limit=10)] for c in cases]
        results[mode] = score(ranked, cases)
    baseline = bm25s_files(root, paths)
    results["bm25s whole files (identifiers split)"] = score(
        [baseline(c.query) for c in cases], cases
    )
    return results


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sdists", type=Path, help="folder holding the django and click sdists")
    parser.add_argument("--click-repo", type=Path, help="git directory of pallets/click")
    parser.add_argument("--skip-semantic", action="store_true", help="keyword only (no model)")
    parser.add_argument("--trees", default="django,click")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="cuedeck-code-bench-"))
    sdists = args.sdists
    if sdists is None:
        sdists = work / "sdists"
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps",
             "-d", str(sdists), "django", "click"],
            check=True, capture_output=True,
        )  # fmt: skip
    results: dict[str, Any] = {"machine": {"cores": os.cpu_count()}}
    for name in args.trees.split(","):
        print(f"== {name}", flush=True)
        root = sdist_tree(sdists, name, work / name)
        row = index_figures(root)
        row.update(refresh_figures(root))
        row.update(anyio.run(mcp_figures, root, QUERIES[name], REGEX[name]))
        row["targets"] = {k: (row.get(k), v) for k, v in TARGETS.items()}
        results[name] = row
        print(json.dumps(row, indent=2), flush=True)
    if args.click_repo:
        print("== localization (click history)", flush=True)
        results["localization"] = localization(args.click_repo, work, not args.skip_semantic)
        print(json.dumps(results["localization"], indent=2), flush=True)
    out = HERE / "results" / "code.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    shutil.rmtree(work, ignore_errors=True)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
