"""Scenes that carry code, against bm25s packing and aider's repository map, same budgets.

    uv run python benchmarks/code_scenes.py --click-repo GIT_DIR [--sdists DIR]
        [--budgets 4000,8000,16000] [--tune] [--skip-aider] [--skip-django]
        [--skip-coverage] [--work DIR]
    uv run python benchmarks/code_scenes.py --work DIR --split tune|test|all [--repos a,b]
        [--budgets 8000] [--skip-aider] [--mirrors DIR]

The second form measures the repositories of benchmarks/code_cases.py (many languages,
each its own history, split into tuning and test repositories before any tuning):
benchmarks/code_scenes_repos.py. The first, described here, is Click's set.

The set is benchmarks/localization.py's, built from Click's own history (``--click-repo``:
a git directory of pallets/click, e.g. the workplace's ``fetch`` snapshot): each case a
merged change, its title the card's text, its non-test source files the answer. Every
case is answered in one checkout of the base commit (the main line before the oldest
change), with the history up to it, so recent changes are what git knew then. For each
case the script also takes the lines the change modified: the lines its diff removes
(for a pure addition, the line it adds after), as text, leaving out lines of fewer than
four word characters and lines the base no longer holds.

At each budget (o200k tokens, the whole output counted as written):

- **scene**: a card holding only the title, built by ``build_scene`` with
  ``[scene] code_share = 1.0`` (a card that cites nothing: related code may take the
  budget; the default share is 0.25);
- **bm25s packed**: bm25s over whole source files with identifiers split (the SWE-bench
  retrieval baseline, as benchmarks/code.py), its files packed whole in rank order,
  each that still fits;
- **aider map**: ``aider-chat``'s RepoMap (PyPI, in its own virtual environment made
  here with ``uv``), ``get_ranked_tags_map`` over every source file, personalised on
  the title's words as mentioned identifiers, with the budget as ``max_map_tokens`` and
  the same o200k counter.

Two shares per budget: answer files (the output holds any part of the file: whole, a
section, signatures or map lines) and modified lines (their text appears among the lines
the output shows of that file). ``--tune`` also scores a grid of importance weights on
this set (the only set weights are chosen on) and prints the table docs/code.md quotes.
Then: the compression ratio of signatures on Click's and Django's code, and scene build
time on Django's sdist (``pip download --no-binary :all: --no-deps django``), warm (the
same workspace again) and fresh (a new one over the warm cache). Writes
benchmarks/results/code_scenes.json.
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
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != HERE]
sys.path.insert(0, str(REPO))

import attrs  # noqa: E402

from benchmarks.code import sdist_tree, split_identifiers  # noqa: E402
from benchmarks.localization import Case, build_cases, git  # noqa: E402

BUDGETS = (4000, 8000, 16000)
CARD = "bench1"
AIDER_VERSION = "aider-chat"
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_WORD = re.compile(r"\w")
#: The grid ``--tune`` scores: (text, graph, recent weights, what the graph walk
#: restarts at when the card cites nothing: see cuedeck_code.importance.UNCITED).
GRID = [
    (0.5, 0.25, 0.1, "none"),  # the weights chosen (cuedeck_code.importance.WEIGHTS)
    (1.0, 0.0, 0.0, "none"),
    (0.9, 0.0, 0.1, "none"),
    (0.8, 0.0, 0.2, "none"),
    (0.7, 0.0, 0.3, "none"),
    (0.8, 0.2, 0.0, "text"),
    (0.8, 0.2, 0.0, "uniform"),
    (0.9, 0.1, 0.0, "uniform"),
    (0.8, 0.1, 0.1, "uniform"),
]


def norm(line: str) -> str:
    return " ".join(line.split())


@attrs.frozen
class Scenario:
    """A card's text, the files that answer it and the lines the change modified there."""

    query: str
    answers: tuple[str, ...]
    lines: dict[str, set[str]]


# --- the set -------------------------------------------------------------------------------


def checkout(repo: Path, base: str, into: Path) -> Path:
    """A clone of ``repo`` at ``base`` with its history, made a CueDeck workspace."""
    subprocess.run(["git", "clone", "--quiet", "--no-checkout", str(repo), str(into)], check=True)
    subprocess.run(["git", "-C", str(into), "checkout", "--quiet", base], check=True)
    with (into / ".git" / "info" / "exclude").open("a", encoding="utf-8") as out:
        out.write(".cuedeck/\n.aider*\n")
    for sub in ("cards", "docs"):
        (into / ".cuedeck" / sub).mkdir(parents=True, exist_ok=True)
    (into / ".cuedeck" / "config.toml").write_text(
        "[scene]\ncode_share = 1.0\nclipboard = false\n\n[memory]\nscene = false\n",
        encoding="utf-8",
    )
    return into


def modified_lines(repo: Path, case: Case, root: Path) -> dict[str, set[str]]:
    """The lines ``case`` modified, per answer file (see the module docstring)."""
    parent = git(repo, "rev-parse", f"{case.commit}^1").strip()
    found: dict[str, set[str]] = {}
    for path in case.answers:
        diff = git(repo, "diff", "-U0", parent, case.commit, "--", path)
        old = git(repo, "show", f"{parent}:{path}").split("\n")
        base = {norm(line) for line in (root / path).read_text(errors="replace").split("\n")}
        lines: set[str] = set()
        for line in diff.split("\n"):
            hunk = _HUNK.match(line)
            if hunk:
                start, count = int(hunk.group(1)), int(hunk.group(2) or 1)
                if count == 0 and 1 <= start <= len(old):
                    lines.add(norm(old[start - 1]))
            elif line.startswith("-") and not line.startswith("---"):
                lines.add(norm(line[1:]))
        kept = {x for x in lines if len(_WORD.findall(x)) >= 4 and x in base}
        if kept:
            found[path] = kept
    return found


def shares(cases: list[Scenario], shown: list[dict[str, set[str]]]) -> dict[str, float]:
    """Answer-file and modified-line shares of the outputs ``shown`` (path -> lines)."""
    files = files_total = lines = lines_total = 0
    each: list[float] = []
    for case, output in zip(cases, shown, strict=True):
        files_total += len(case.answers)
        files += sum(1 for path in case.answers if path in output)
        held = wanted = 0
        for path, targets in case.lines.items():
            wanted += len(targets)
            held += len(targets & output.get(path, set()))
        lines_total += wanted
        lines += held
        each.append(held / max(wanted, 1))
    return {
        "answer files": round(files / max(files_total, 1), 3),
        "modified lines": round(lines / max(lines_total, 1), 3),
        # The same per case, then averaged: a case that modified many lines counts once.
        "modified lines per case": round(statistics.mean(each), 3) if each else 0.0,
    }


# --- CueDeck -------------------------------------------------------------------------------


def scene_outputs(
    root: Path,
    cases: list[Scenario],
    budget: int,
    weights: Any = None,
    uncited: str | None = None,
) -> tuple[list[dict[str, set[str]]], list[int], list[float]]:
    from cuedeck import open_workspace
    from cuedeck.scene import build_scene

    workspace = open_workspace(root)
    if weights is not None:
        from cuedeck.plugins.host import get_code_rankers

        ranker = get_code_rankers(workspace.plugins)["importance"]
        ranker.weights = weights
        ranker.uncited = uncited or ranker.uncited
    card = root / ".cuedeck" / "cards" / f"{CARD}.md"
    outputs, used, times = [], [], []
    for case in cases:
        title = case.query.replace('"', "'")
        card.write_text(
            f'---\nid: {CARD}\ntitle: "{title}"\nstatus: active\n---\n# {title}\n', encoding="utf-8"
        )
        workspace.invalidate([f".cuedeck/cards/{CARD}.md"])
        started = time.perf_counter()
        scene = build_scene(workspace, CARD, budget, record=False)
        times.append(time.perf_counter() - started)
        used.append(scene.tokens)
        shown: dict[str, set[str]] = {}
        for placement in scene.placements:
            if placement.mode != "dropped":
                shown.setdefault(placement.item.path, set()).update(
                    norm(x) for x in placement.text.split("\n")
                )
        outputs.append(shown)
    card.unlink()
    return outputs, used, times


# --- bm25s packing -------------------------------------------------------------------------


def bm25s_outputs(
    root: Path, paths: list[str], cases: list[Scenario], budget: int, language: str = "python"
) -> tuple[list[dict[str, set[str]]], list[int]]:
    import bm25s

    from cuedeck import open_workspace

    count = open_workspace(root).count_tokens
    stop = set(bm25s.stopwords.STOPWORDS_EN)
    texts = {path: (root / path).read_text(errors="replace") for path in paths}
    corpus = [[t for t in split_identifiers(texts[p]) if t not in stop] for p in paths]
    retriever = bm25s.BM25()
    retriever.index(corpus, show_progress=False)
    blocks = {path: f"## {path}\n\n```{language}\n{texts[path]}\n```\n" for path in paths}
    costs = {path: count(block) for path, block in blocks.items()}
    outputs, used = [], []
    for case in cases:
        tokens = [t for t in split_identifiers(case.query) if t not in stop]
        scores = retriever.get_scores(tokens) if tokens else [0.0] * len(paths)
        order = sorted(range(len(paths)), key=lambda i: (-scores[i], paths[i]))
        packed, total = [], 0
        for i in order:
            if scores[i] <= 0:
                break
            if total + costs[paths[i]] <= budget:
                packed.append(paths[i])
                total += costs[paths[i]]
        text = "".join(blocks[p] for p in packed)
        used.append(count(text) if text else 0)
        outputs.append({p: {norm(x) for x in texts[p].split("\n")} for p in packed})
    return outputs, used


# --- aider ---------------------------------------------------------------------------------

AIDER_SCRIPT = r"""
import json, re, sys
from aider.repomap import RepoMap
import tiktoken

root, budget = sys.argv[1], int(sys.argv[2])
job = json.load(sys.stdin)
encoding = tiktoken.get_encoding("o200k_base")

class Model:
    def token_count(self, text):
        return len(encoding.encode(text, disallowed_special=()))

class IO:
    def tool_output(self, *a, **k): pass
    def tool_warning(self, *a, **k): pass
    def tool_error(self, *a, **k): pass
    def read_text(self, path):
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()

repo_map = RepoMap(map_tokens=budget, root=root, main_model=Model(), io=IO(), refresh="always")
files = [f"{root}/{p}" for p in job["files"]]
out = []
for title in job["titles"]:
    idents = {w for w in re.split(r"\W+", title) if w}
    text = repo_map.get_ranked_tags_map([], files, budget, set(), idents) or ""
    out.append(text)
print(json.dumps(out))
"""


def aider_python(work: Path) -> Path:
    """A virtual environment holding aider-chat (made with uv the first time)."""
    venv = work / "aider-venv"
    python = venv / "bin" / "python"
    if not python.exists():
        uv = shutil.which("uv") or "uv"
        subprocess.run([uv, "venv", "--quiet", "--python", sys.executable, str(venv)], check=True)
        subprocess.run(
            [uv, "pip", "install", "--quiet", "--python", str(python), AIDER_VERSION], check=True
        )
    return python


def tiktoken_cache(work: Path) -> Path:
    """A tiktoken cache holding o200k_base, from the copy bpe-openai ships (nothing is
    downloaded): aider counts with the counter the scene uses."""
    import gzip
    import importlib.util

    from cuedeck.token_counts import O200K_CACHE_NAME, O200K_SHA256

    cache = work / "tiktoken-cache"
    target = cache / O200K_CACHE_NAME
    if not target.exists():
        spec = importlib.util.find_spec("bpe_openai")
        assert spec is not None
        assert spec.submodule_search_locations
        package = Path(next(iter(spec.submodule_search_locations)))
        data = gzip.decompress((package / "data" / "o200k_base.tiktoken.gz").read_bytes())
        import hashlib

        assert hashlib.sha256(data).hexdigest() == O200K_SHA256
        cache.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return cache


def aider_outputs(
    python: Path,
    root: Path,
    paths: list[str],
    cases: list[Scenario],
    budget: int,
) -> tuple[list[dict[str, set[str]]], list[int]]:
    from cuedeck import open_workspace

    count = open_workspace(root).count_tokens
    job = json.dumps({"files": paths, "titles": [case.query for case in cases]})
    cache = tiktoken_cache(root.parent)
    done = subprocess.run(
        [str(python), "-c", AIDER_SCRIPT, str(root), str(budget)],
        input=job,
        capture_output=True,
        text=True,
        check=True,
        cwd=root,
        env={**os.environ, "TIKTOKEN_CACHE_DIR": str(cache)},
    )
    maps = json.loads(done.stdout.strip().splitlines()[-1])
    outputs, used = [], []
    for text in maps:
        used.append(count(text) if text else 0)
        shown: dict[str, set[str]] = {}
        current: str | None = None
        for line in text.split("\n"):
            if line.endswith(":") and not line.startswith(("│", "⋮", " ")):
                current = line[:-1]
                shown.setdefault(current, set())
            elif current is not None and line.startswith("│"):
                shown[current].add(norm(line[1:]))
            elif line and not line.startswith(("│", "⋮")) and not line.endswith(":"):
                shown.setdefault(line.strip(), set())  # a file named without its lines
        outputs.append(shown)
    return outputs, used


# --- signatures and speed ------------------------------------------------------------------


def compression(root: Path) -> dict[str, Any]:
    """Tokens of each function, method and class whole, against its signatures form."""
    from cuedeck import open_workspace
    from cuedeck.scene.code import signature_forms

    workspace = open_workspace(root)
    workspace.refresh()
    count = workspace.count_tokens
    whole = small = 0
    ratios = []
    for document in workspace.index.documents.values():
        if document.language != "python":
            continue
        for symbol in document.symbols:
            if symbol.kind == "module" or symbol.tokens < 100:
                continue
            forms = signature_forms(document, symbol.line, symbol.end_line, symbol.name)
            if not forms:
                continue
            tokens = count(forms[0])
            whole += symbol.tokens
            small += tokens
            ratios.append(symbol.tokens / max(tokens, 1))
    return {
        "definitions of 100+ tokens": len(ratios),
        "tokens whole": whole,
        "tokens as signatures": small,
        "ratio (total)": round(whole / max(small, 1), 2),
        "ratio (median)": round(statistics.median(ratios), 2) if ratios else None,
    }


def django_speed(root: Path) -> dict[str, Any]:
    """Scene build time on Django: a card with a title, a cited symbol and a traceback."""
    from cuedeck import open_workspace
    from cuedeck.scene import build_scene

    card = root / ".cuedeck" / "cards" / "speed1.md"
    card.write_text(
        "---\nid: speed1\ntitle: QuerySet.filter drops Q objects on related fields\n"
        "status: active\nrefs:\n  - code/django/db/models/query.py#QuerySet.filter\n---\n"
        "# QuerySet.filter drops Q objects on related fields\n\n"
        "```\nTraceback (most recent call last):\n"
        '  File "/srv/app/django/db/models/query.py", line 1476, in filter\n'
        '  File "/srv/app/django/db/models/sql/query.py", line 1380, in build_filter\n'
        "FieldError: Cannot resolve keyword\n```\n",
        encoding="utf-8",
    )
    workspace = open_workspace(root)
    started = time.perf_counter()
    workspace.refresh()
    first = build_scene(workspace, "speed1", 16000, record=False)
    cold = time.perf_counter() - started
    warm = []
    for _ in range(7):
        started = time.perf_counter()
        build_scene(workspace, "speed1", 16000, record=False)
        warm.append((time.perf_counter() - started) * 1000)
    refresh = []
    walked = []
    for _ in range(7):
        started = time.perf_counter()
        workspace.refresh()  # a full refresh: the index stats every file
        refresh.append((time.perf_counter() - started) * 1000)
        build_scene(workspace, "speed1", 16000, record=False)
        walked.append((time.perf_counter() - started) * 1000)
    fresh = []
    for _ in range(5):
        started = time.perf_counter()
        build_scene(open_workspace(root), "speed1", 16000, record=False)
        fresh.append((time.perf_counter() - started) * 1000)
    return {
        "files": len(workspace.index.paths),
        "first scene s (index, graph and search cold)": round(cold, 1),
        "warm ms, workspace kept in step (a server; median of 7)": round(
            statistics.median(warm), 1
        ),
        "warm ms after a full refresh (median of 7)": round(statistics.median(walked), 1),
        "of which the full refresh ms (median of 7)": round(statistics.median(refresh), 1),
        "fresh workspace ms (median of 5)": round(statistics.median(fresh), 1),
        "related items": sum(1 for c in first.manifest["candidates"] if c["role"] == "related"),
        "target warm ms": 300,
    }


# --- main ----------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--click-repo", type=Path, help="git directory of pallets/click")
    parser.add_argument("--sdists", type=Path, help="folder holding the django sdist")
    parser.add_argument(
        "--budgets", help="comma-separated (default 4000,8000,16000; 8000 with --split)"
    )
    parser.add_argument(
        "--split", choices=("tune", "test", "all"), help="code_cases.py's repositories instead"
    )
    parser.add_argument("--repos", help="code_cases.py's repositories by name, comma-separated")
    parser.add_argument("--mirrors", type=Path, help="where the repositories' git dirs are")
    parser.add_argument("--tune", action="store_true", help="score the grid of weights too")
    parser.add_argument("--skip-aider", action="store_true")
    parser.add_argument("--skip-django", action="store_true")
    parser.add_argument("--skip-coverage", action="store_true", help="signatures and speed only")
    parser.add_argument("--work", type=Path, help="keep the work folder here (reused)")
    parser.add_argument(
        "--rebuild", action="store_true", help="with --split/--repos: parse every file again"
    )
    args = parser.parse_args()
    if args.split or args.repos:
        if args.work is None:
            parser.error("--split and --repos need --work")
        from benchmarks.code_scenes_repos import main_args

        main_args(args)
        return
    if args.click_repo is None:
        parser.error("--click-repo is needed (or --split/--repos with --work)")
    budgets = [int(b) for b in (args.budgets or ",".join(map(str, BUDGETS))).split(",")]
    work = args.work or Path(tempfile.mkdtemp(prefix="cuedeck-code-scenes-"))
    work.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {"machine": {"cores": os.cpu_count()}}

    print("== the set", flush=True)
    base, all_cases = build_cases(args.click_repo)
    root = work / "click-base"
    if not root.exists():
        checkout(args.click_repo, base, root)
    from cuedeck import open_workspace

    workspace = open_workspace(root)
    workspace.refresh()
    paths = [p for p in workspace.index.paths if p.endswith(".py")]
    cases = [
        Scenario(case.query, case.answers, lines)
        for case in all_cases
        if (lines := modified_lines(args.click_repo, case, root))
    ]
    results["set"] = {
        "base": base,
        "cases": len(all_cases),
        "cases with modified lines": len(cases),
        "modified lines": sum(len(v) for case in cases for v in case.lines.values()),
    }
    print(json.dumps(results["set"]), flush=True)

    python = None if args.skip_aider or args.skip_coverage else aider_python(work)
    table: dict[str, Any] = {}
    for budget in [] if args.skip_coverage else budgets:
        row: dict[str, Any] = {}
        outputs, used, times = scene_outputs(root, cases, budget)
        row["scene"] = {
            **shares(cases, outputs),
            "max tokens": max(used),
            "median build ms": round(1000 * statistics.median(times), 1),
        }
        outputs, used = bm25s_outputs(root, paths, cases, budget)
        row["bm25s packed"] = {**shares(cases, outputs), "max tokens": max(used)}
        if python is not None:
            outputs, used = aider_outputs(python, root, paths, cases, budget)
            row["aider map"] = {
                **shares(cases, outputs),
                "max tokens": max(used),
                "over budget": sum(1 for u in used if u > budget),
            }
        table[str(budget)] = row
        print(budget, json.dumps(row), flush=True)
    results["coverage"] = table

    if args.tune:
        from cuedeck_code.importance import WEIGHTS, Weights

        grid: dict[str, Any] = {}
        for text, graph, recent, uncited in GRID:
            weights = Weights(text=text, graph=graph, recent=recent, stack=WEIGHTS.stack)
            lines = []
            for budget in budgets:
                outputs, _, _ = scene_outputs(root, cases, budget, weights, uncited)
                lines.append(shares(cases, outputs)["modified lines"])
            key = f"text {text} graph {graph} ({uncited}) recent {recent}"
            grid[key] = {"by budget": lines, "mean": round(statistics.mean(lines), 3)}
            print(key, grid[key], flush=True)
        results["weights grid"] = grid

    print("== signatures", flush=True)
    results["signatures click"] = compression(root)
    print(json.dumps(results["signatures click"]), flush=True)
    if not args.skip_django:
        sdists = args.sdists
        if sdists is None:
            sdists = work / "sdists"
            if not any(sdists.glob("[Dd]jango-*.tar.gz")):
                pip = (
                    [shutil.which("pip")] if shutil.which("pip") else [sys.executable, "-m", "pip"]
                )
                download = ["download", "--no-binary", ":all:", "--no-deps", "-d", str(sdists)]
                subprocess.run([*pip, *download, "django"], check=True, capture_output=True)
        django = work / "django"
        if not django.exists():
            django = sdist_tree(sdists, "django", django)
        else:
            django = next(django.iterdir())
        results["signatures django"] = compression(django)
        print(json.dumps(results["signatures django"]), flush=True)
        print("== django scene speed", flush=True)
        results["django scene"] = django_speed(django)
        print(json.dumps(results["django scene"]), flush=True)

    out = HERE / "results" / "code_scenes.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
