"""Scenes that carry code on many repositories' own histories, against bm25s packing.

    uv run python benchmarks/code_scenes.py --work DIR [--split tune|test|all]
        [--repos a,b] [--budgets 8000] [--skip-aider] [--rebuild] [--mirrors DIR]

The repositories, their tuning/test split and their cases are benchmarks/code_cases.py's
(``DIR/cases/<owner>+<name>.json``, mined when missing): each case a change on the
repository's main line, its title the card's text, its non-test source files the answer,
the lines it modified there (``lines`` of the case) what is counted. Every case of a
repository is answered in one clone checked out at its base commit, with the history up
to it (``DIR/scenes/<owner>+<name>``), so recent changes are what git knew then.

At each budget, in one run, per repository: the **scene** (``build_scene`` of a card
holding only the title, ``[scene] code_share = 1.0``, as for Click), **bm25s packed**
(bm25s over the repository's non-test source files, identifiers split, its files packed
whole in rank order, each that still fits: the peer the issue names) and, unless
``--skip-aider``, **aider's map** (code_scenes.py's). Shares as code_scenes.py counts
them: modified lines shown, answer files held. Writes
``benchmarks/results/code_scenes_repos.json``.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from benchmarks.code_cases import (
    MIRRORS,
    REPOSITORIES,
    Repository,
    git_dir,
    load_cases,
    repository,
    source_file,
)
from benchmarks.code_scenes import (
    HERE,
    Scenario,
    aider_outputs,
    aider_python,
    bm25s_outputs,
    scene_outputs,
    shares,
)

#: The budget the issue's target is set at.
TARGET_BUDGET = 8000
#: Markdown fence names of code_cases.py's languages.
FENCES = {"javascript": "javascript", "typescript": "typescript", "go": "go", "rust": "rust"}


def checkout(repo: Repository, base: str, work: Path, mirrors: Path) -> Path:
    """A clone of ``repo`` at ``base`` with its history, made a CueDeck workspace
    (reused when it is already there)."""
    into = work / "scenes" / repo.slug
    marker = into / ".cuedeck" / "base"
    if marker.exists() and marker.read_text(encoding="utf-8").strip() == base:
        return into
    if into.exists():
        subprocess.run(["rm", "-rf", str(into)], check=True)
    into.parent.mkdir(parents=True, exist_ok=True)
    source = str(git_dir(repo, mirrors))
    subprocess.run(["git", "clone", "--quiet", "--no-checkout", source, str(into)], check=True)
    subprocess.run(["git", "-C", str(into), "checkout", "--quiet", base], check=True)
    with (into / ".git" / "info" / "exclude").open("a", encoding="utf-8") as out:
        out.write(".cuedeck/\n.aider*\n")
    for sub in ("cards", "docs"):
        (into / ".cuedeck" / sub).mkdir(parents=True, exist_ok=True)
    (into / ".cuedeck" / "config.toml").write_text(
        "[scene]\ncode_share = 1.0\nclipboard = false\n\n[memory]\nscene = false\n",
        encoding="utf-8",
    )
    marker.write_text(base + "\n", encoding="utf-8")
    return into


def scenarios(found: dict[str, Any]) -> list[Scenario]:
    """The cases with modified lines left to count, as scene cases."""
    return [
        Scenario(case["query"], tuple(case["files"]), {p: set(v) for p, v in case["lines"].items()})
        for case in found["cases"]
        if any(case["lines"].values())
    ]


def source_paths(root: Path, repo: Repository) -> list[str]:
    """The checkout's non-test source files git tracks, sorted."""
    listed = subprocess.run(
        ["git", "-C", str(root), "ls-files", "-z"], capture_output=True, check=True
    ).stdout.decode("utf-8", errors="replace")
    return sorted(p for p in listed.split("\0") if p and source_file(p, repo))


def measure(
    repo: Repository,
    work: Path,
    mirrors: Path,
    budgets: list[int],
    python: Path | None,
    rebuild: bool = False,
) -> dict[str, Any]:
    """Every peer's shares on ``repo`` at each budget."""
    from cuedeck import open_workspace

    found = load_cases(repo, work, mirrors)
    cases = scenarios(found)
    root = checkout(repo, found["base"], work, mirrors)
    started = time.perf_counter()
    workspace = open_workspace(root)
    workspace.refresh(rebuild=rebuild)
    if rebuild:  # search's saved sections and the code graph are keyed by the files' bytes
        from cuedeck_code.codegraph import GRAPH_FILE

        workspace.service("search").sync(rebuild=True)
        (root / GRAPH_FILE).unlink(missing_ok=True)
    indexed = time.perf_counter() - started
    paths = source_paths(root, repo)
    result: dict[str, Any] = {
        "split": repo.split,
        "language": repo.language,
        "base": found["base"],
        "cases": len(cases),
        "modified lines": sum(len(v) for case in cases for v in case.lines.values()),
        "source files": len(paths),
        "index s": round(indexed, 1),
        "budgets": {},
    }
    for budget in budgets:
        row: dict[str, Any] = {}
        outputs, used, times = scene_outputs(root, cases, budget)
        row["scene"] = {
            **shares(cases, outputs),
            "max tokens": max(used),
            "median build ms": round(1000 * statistics.median(times), 1),
        }
        fence = FENCES.get(repo.language, repo.language)
        outputs, used = bm25s_outputs(root, paths, cases, budget, fence)
        row["bm25s packed"] = {**shares(cases, outputs), "max tokens": max(used)}
        if python is not None:
            outputs, used = aider_outputs(python, root, paths, cases, budget)
            row["aider map"] = {
                **shares(cases, outputs),
                "max tokens": max(used),
                "over budget": sum(1 for u in used if u > budget),
            }
        result["budgets"][str(budget)] = row
    return result


def table(results: dict[str, Any], budget: int) -> str:
    """The markdown table at ``budget``: modified lines (over all of a repository's
    cases, and per case), answer files; the best of each bold."""
    key = str(budget)
    aider = any("aider map" in r["budgets"].get(key, {}) for r in results.values())
    peers = ["scene", "bm25s packed", *(["aider map"] if aider else [])]
    names = " / ".join(peers)
    out = [
        f"| repository | split | cases | modified lines: {names} | per case: {names} "
        f"| answer files: {names} |",
        "| --- | --- | ---: | --- | --- | --- |",
    ]

    def shown(values: list[float]) -> str:
        best = max(values)
        return " / ".join(f"**{v:.3f}**" if v == best else f"{v:.3f}" for v in values).replace(
            "0.", "."
        )

    for name, result in results.items():
        row = result["budgets"].get(key)
        if row is None:
            continue
        cells = [
            shown([row[p].get(measure, 0.0) for p in peers if p in row])
            for measure in ("modified lines", "modified lines per case", "answer files")
        ]
        out.append(
            f"| {name} | {result['split']} | {result['cases']} | " + " | ".join(cells) + " |"
        )
    return "\n".join(out)


def run(
    work: Path,
    mirrors: Path,
    split: str,
    names: str,
    budgets: list[int],
    skip_aider: bool,
    rebuild: bool = False,
) -> None:
    """Measure the chosen repositories, print the table, write the results."""
    chosen = [repository(n) for n in names.split(",") if n] or [
        r for r in REPOSITORIES if split in ("all", r.split)
    ]
    work.mkdir(parents=True, exist_ok=True)
    python = None if skip_aider else aider_python(work)
    out = HERE / "results" / "code_scenes_repos.json"
    saved: dict[str, Any] = {}
    if out.exists():
        saved = json.loads(out.read_text(encoding="utf-8")).get("repositories", {})
    results: dict[str, Any] = {}
    for repo in chosen:
        print(f"== {repo.name} ({repo.split})", flush=True)
        results[repo.name] = measure(repo, work, mirrors, budgets, python, rebuild)
        print(json.dumps(results[repo.name]["budgets"]), flush=True)
        saved[repo.name] = results[repo.name]
        out.parent.mkdir(exist_ok=True)
        out.write_text(
            json.dumps({"machine": {"cores": os.cpu_count()}, "repositories": saved}, indent=2)
            + "\n",
            encoding="utf-8",
        )
    for budget in budgets:
        print(f"\n{budget} tokens\n" + table(results, budget))
    print(f"wrote {out}")


def main_args(args: Any) -> None:
    """Run from code_scenes.py's parsed arguments."""
    budgets = [int(b) for b in args.budgets.split(",")] if args.budgets else [TARGET_BUDGET]
    run(args.work, args.mirrors or MIRRORS, args.split or "all", args.repos or "", budgets,
        args.skip_aider, args.rebuild)  # fmt: skip
