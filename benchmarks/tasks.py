"""Task-card benchmark: graph build + validation, filtered list, update, create.

    uv run python benchmarks/tasks.py [--runs 7] [--sizes 100 5000] [--json PATH]

For each size a workspace of generated cards (about three dependencies each, always on
older cards, so the graph is acyclic) is written to a temporary directory. Every figure
is the median of ``--runs`` runs:

- ``cold``: a new CardStore, as a new process starts: file stats plus the card cache in
  ``.cuedeck/.cache/cards.sqlite3`` (written by an earlier run), no YAML parsing;
- ``warm``: the same store again, as a long-lived MCP server sees it;
- ``first parse``: no card cache at all (after ``cue clean``), every card parsed.

Updates and creates run on a warm store and include the lock, the sha256 check, the
dependency check and an fsync'ed atomic write. Results go to a table and to
benchmarks/results/tasks.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cuedeck.workspace import open_workspace
from cuedeck_tasks.filters import CardFilter
from cuedeck_tasks.store import CACHE_FILE, CardChanges, CardStore

HERE = Path(__file__).resolve().parent
#: Seconds each operation should stay under, per size (from the issue).
TARGETS: dict[int, dict[str, float]] = {
    100: {"list": 0.020, "update": 0.030, "validate": 0.050},
    5000: {"*": 0.500},
}
STATUSES = ("todo", "todo", "active", "done", "done", "archived")
PRIORITIES = ("low", "medium", "medium", "high", "critical")
TAGS = ("api", "auth", "db", "ui", "docs", "infra", "billing", "search")
PEOPLE = ("dana", "lee", "@sam", "Kim", None)


def generate(root: Path, count: int, seed: int = 7) -> tuple[list[str], int]:
    """Write ``count`` cards with about three dependencies each; return ids and edges."""
    rng = random.Random(seed)
    cards = root / ".cuedeck" / "cards"
    cards.mkdir(parents=True)
    ids: list[str] = []
    edges = 0
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    taken: set[str] = set()
    for index in range(count):
        card_id = "".join(rng.choice(alphabet) for _ in range(6))
        while card_id in taken:
            card_id = "".join(rng.choice(alphabet) for _ in range(6))
        taken.add(card_id)
        deps = rng.sample(ids, min(len(ids), rng.randint(1, 5))) if ids else []
        edges += len(deps)
        day = 1 + index * 700 // max(count, 1)
        created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1_700_000_000 + day * 86400))
        person = rng.choice(PEOPLE)
        tags = rng.sample(TAGS, rng.randint(0, 3))
        lines = [
            "---",
            f"id: {card_id}",
            f"title: 'Card {index}: {rng.choice(TAGS)} work item'",
            f"status: {rng.choice(STATUSES)}",
            f"priority: {rng.choice(PRIORITIES)}",
            *([f"assignee: '{person}'"] if person else []),
            f"tags: [{', '.join(tags)}]",
            f"depends_on: [{', '.join(deps)}]",
            f"created: '{created}'",
            f"updated: '{created}'",
            "---",
            f"# Card {index}",
            "",
            "Some acceptance criteria.",
            "",
        ]
        (cards / f"{card_id}.md").write_text("\n".join(lines), encoding="utf-8")
        ids.append(card_id)
    return ids, edges


def median_of(
    runs: int, action: Callable[[], Any], setup: Callable[[], Any] | None = None
) -> float:
    times = []
    for _ in range(runs):
        if setup is not None:
            setup()
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def bench_size(count: int, runs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="cuedeck-tasks-bench-") as tmp:
        root = Path(tmp)
        ids, edges = generate(root, count)
        rng = random.Random(11)
        filters: dict[str, Any] = {
            "status": "todo",
            "tags": ["api", "auth"],
            "created": ">2024-01-01",
        }

        def drop_cache() -> None:
            (root / CACHE_FILE).unlink(missing_ok=True)

        def validate(store: CardStore) -> None:
            graph = store.graph()
            assert not graph.cycles()
            graph.missing()

        results: dict[str, float] = {}
        results["first parse: build + validate"] = median_of(
            max(1, runs // 3), lambda: validate(CardStore(root)), setup=drop_cache
        )
        CardStore(root).all()  # leave the card cache in place for the cold runs
        results["cold: build + validate"] = median_of(runs, lambda: validate(CardStore(root)))
        warm = CardStore(root)
        warm.all()
        results["warm: build + validate"] = median_of(runs, lambda: validate(warm))
        results["cold: filtered list"] = median_of(
            runs, lambda: CardStore(root).select(CardFilter.build(**filters))
        )
        results["warm: filtered list"] = median_of(
            runs, lambda: warm.select(CardFilter.build(**filters))
        )
        workspace = open_workspace(root)
        list_tasks = workspace.plugins.tools()["list_tasks"]
        list_tasks.call(workspace, filters)  # build the pydantic model outside the timing
        results["warm: list_tasks tool"] = median_of(
            runs, lambda: list_tasks.call(workspace, filters)
        )
        results["warm: update (status + note)"] = median_of(
            runs,
            lambda: warm.update(
                rng.choice(ids),
                CardChanges(status=rng.choice(("todo", "active")), note="benchmark note"),
            ),
        )
        results["warm: update adding a dependency"] = median_of(
            runs,
            lambda: warm.update(ids[-1], CardChanges(add_depends_on=(rng.choice(ids[:-1]),))),
        )
        results["warm: create with 3 dependencies"] = median_of(
            runs, lambda: warm.create("New card", depends_on=rng.sample(ids, 3))
        )
        return {
            "cards": count,
            "avg_dependencies": round(edges / count, 2),
            "seconds": results,
        }


def target_for(count: int, name: str) -> float | None:
    targets = TARGETS.get(count, {})
    if "*" in targets:
        return targets["*"] if not name.startswith("first parse") else None
    if "list" in name and "tool" not in name:
        return targets.get("list")
    if "update" in name:
        return targets.get("update")
    if "validate" in name and not name.startswith("first parse"):
        return targets.get("validate")
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 5000])
    parser.add_argument("--json", type=Path, default=HERE / "results" / "tasks.json")
    args = parser.parse_args()
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        print("note: PYTHONDONTWRITEBYTECODE is set; unset it for timings", file=sys.stderr)
    report: dict[str, Any] = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "runs": args.runs,
        "sizes": [],
    }
    print(f"{'operation':<38} {'cards':>6} {'median ms':>10} {'target ms':>10}  ok")
    for count in args.sizes:
        result = bench_size(count, args.runs)
        report["sizes"].append(result)
        for name, seconds in result["seconds"].items():
            target = target_for(count, name)
            ok = "" if target is None else ("yes" if seconds < target else "NO")
            shown = "" if target is None else f"{target * 1000:.0f}"
            print(f"{name:<38} {count:>6} {seconds * 1000:>10.2f} {shown:>10}  {ok}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"\nwritten to {args.json}")


if __name__ == "__main__":
    main()
