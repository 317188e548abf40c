"""Scene benchmark: building scenes and masking secrets on the fastapi corpus, against repomix.

    uv run python benchmarks/scene.py [--runs 15] [--corpora DIR] [--json PATH] [--no-repomix]

The corpus is extracted into a temporary workspace with two cards: one referencing 20
docs, one referencing all 155 (markdown links between corpus pages are not followed by
default, so the card's own references decide the scene). After one cold index:

* ``scene (fresh workspace)``: build_scene() with a new Workspace each run and a warm
  index on disk, as one `cue scene` does after its imports;
* ``scene (warm workspace)``: build_scene() again on the same Workspace, as `cue watch`
  and the MCP server do;
* ``cue scene -d (process)``: the whole command in a new process, start-up included;
* masking: the built-in rule set over the corpus cut into 32 KB pieces (ms per piece,
  MB/s overall);
* ``npx --yes repomix``, installed from the npm registry on first use, packing the same
  files in the same run (skipped with a note when npm is absent), process against
  process. Medians of ``--runs`` runs; p95 where it says so.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

HERE = Path(__file__).resolve().parent
REPOMIX = "repomix@1.18.1"
TARGETS = {"scene_20": 0.050, "scene_155": 0.200, "mask_ms_per_32kb": 1.0}
PIECE = 32 * 1024


def corpora_dir(given: str | None) -> Path:
    for candidate in (
        given,
        os.environ.get("CUEDECK_CORPORA"),
        HERE.parent.parent / "shared" / "corpora",
        "/work/shared/corpora",
    ):
        if candidate and (Path(candidate) / "fastapi-docs-en.tar.gz").is_file():
            return Path(candidate)
    sys.exit("fastapi-docs-en.tar.gz not found: pass --corpora DIR or set CUEDECK_CORPORA")


def make_workspace(corpora: Path, base: Path) -> tuple[Path, list[str]]:
    root = base / "ws"
    (root / ".cuedeck" / "cards").mkdir(parents=True)
    with tarfile.open(corpora / "fastapi-docs-en.tar.gz") as archive:
        archive.extractall(root, filter="data")
    docs = sorted(
        p.relative_to(root).as_posix() for p in root.rglob("*.md") if ".cuedeck" not in p.parts
    )
    for ident, title, chosen, status in (
        ("all155", "Everything", docs, "active"),
        ("some20", "Twenty", docs[:20], "todo"),
    ):
        refs = "\n".join(f"- @{path}" for path in chosen)
        (root / ".cuedeck" / "cards" / f"{ident}.md").write_text(
            f"---\nid: {ident}\ntitle: {title}\nstatus: {status}\n---\n# {title}\n\n{refs}\n",
            encoding="utf-8",
        )
    return root, docs


def seconds(run: Callable[[], object], runs: int) -> list[float]:
    found = []
    for _ in range(runs):
        started = time.perf_counter()
        run()
        found.append(time.perf_counter() - started)
    return found


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"median": statistics.median(ordered), "p95": p95, "min": ordered[0]}


def bench_scenes(root: Path, runs: int) -> dict[str, object]:
    from cuedeck import open_workspace
    from cuedeck.plugins.host import make_plugin_host
    from cuedeck.scene import build_scene

    plugins = make_plugin_host()
    warm = open_workspace(root, plugins=plugins)
    started = time.perf_counter()
    warm.refresh()
    cold_index = time.perf_counter() - started
    results: dict[str, object] = {"cold_index_s": cold_index, "counter": warm.token_counter.name}
    for card in ("some20", "all155"):
        for pruner in ("outline", "greedy"):
            scene = build_scene(warm, card, pruner=pruner)  # warm the caches of this process

            def fresh_build(card: str = card, pruner: str = pruner) -> object:
                return build_scene(open_workspace(root, plugins=plugins), card, pruner=pruner)

            def warm_build(card: str = card, pruner: str = pruner) -> object:
                return build_scene(warm, card, pruner=pruner)

            fresh = seconds(fresh_build, runs)
            again = seconds(warm_build, runs)
            results[f"{card}/{pruner}"] = {
                "fresh_workspace": summary(fresh),
                "warm_workspace": summary(again),
                "tokens": scene.tokens,
                "placed": {
                    mode: sum(c["placed"] == mode for c in scene.manifest["candidates"])
                    for mode in ("whole", "section", "outline", "dropped")
                },
            }
    return results


def bench_masking(root: Path, docs: list[str], runs: int) -> dict[str, float]:
    from cuedeck.masking.builtin import BuiltinMasker

    text = "\n".join((root / path).read_text(encoding="utf-8") for path in docs)
    pieces = [text[i : i + PIECE] for i in range(0, len(text), PIECE)]
    masker = BuiltinMasker()
    masker.find_secrets("warm up")
    per_piece = []
    for _ in range(max(3, runs // 3)):
        for piece in pieces:
            started = time.perf_counter()
            masker.find_secrets(piece)
            per_piece.append(time.perf_counter() - started)
    total = sum(per_piece) / max(3, runs // 3)
    size = len(text.encode("utf-8"))
    found = sum(len(masker.find_secrets(piece)) for piece in pieces)
    return {
        "bytes": size,
        "pieces": len(pieces),
        "ms_per_32kb_median": statistics.median(per_piece) * 1000,
        "ms_per_32kb_p95": summary(per_piece)["p95"] * 1000,
        "mb_per_s": size / 1e6 / total,
        "secrets_found": found,
    }


def bench_cli(root: Path, runs: int) -> dict[str, dict[str, float]]:
    results = {}
    for card in ("some20", "all155"):
        command = [sys.executable, "-m", "cuedeck_cli", "-C", str(root), "scene", card, "-d"]
        subprocess.run(command, check=True, capture_output=True)
        results[card] = summary(
            seconds(
                partial(subprocess.run, command, check=True, capture_output=True),
                runs,
            )
        )
    return results


def bench_repomix(root: Path, docs: list[str], runs: int) -> dict[str, object]:
    npx = shutil.which("npx")
    if npx is None:
        return {"skipped": "npm is not installed (npx not found)"}
    out = root.parent / "repomix-out.xml"
    results: dict[str, object] = {"package": REPOMIX}
    for card, chosen in (("some20", docs[:20]), ("all155", docs)):
        include = ",".join(chosen)
        command = [
            npx,
            "--yes",
            REPOMIX,
            str(root),
            "--include",
            include,
            "--output",
            str(out),
            "--quiet",
        ]
        try:
            subprocess.run(
                command, check=True, capture_output=True, timeout=600, cwd=root
            )  # installs
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
            detail = getattr(exc, "stderr", b"") or b""
            return {"skipped": f"repomix failed: {detail.decode(errors='replace')[-300:] or exc}"}
        timing = seconds(
            partial(subprocess.run, command, check=True, capture_output=True, cwd=root),
            runs,
        )
        results[card] = {**summary(timing), "output_bytes": out.stat().st_size}
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--corpora")
    parser.add_argument("--json", default=str(HERE / "results" / "scene.json"))
    parser.add_argument("--no-repomix", action="store_true")
    args = parser.parse_args()
    corpora = corpora_dir(args.corpora)
    with tempfile.TemporaryDirectory(prefix="cuedeck-scene-bench-") as tmp:
        root, docs = make_workspace(corpora, Path(tmp))
        scenes = bench_scenes(root, args.runs)
        masking = bench_masking(root, docs, args.runs)
        cli = bench_cli(root, max(5, args.runs // 3))
        repomix = (
            {"skipped": "--no-repomix"}
            if args.no_repomix
            else bench_repomix(root, docs, max(5, args.runs // 3))
        )

    rows = []
    for key in ("some20/outline", "some20/greedy", "all155/outline", "all155/greedy"):
        value = scenes[key]
        assert isinstance(value, dict)
        target = TARGETS["scene_20" if key.startswith("some20") else "scene_155"]
        fresh, warm = value["fresh_workspace"], value["warm_workspace"]
        rows.append(
            (
                f"scene {key} (fresh workspace)",
                f"{fresh['median'] * 1000:.1f} ms",
                f"p95 {fresh['p95'] * 1000:.1f} ms",
                f"< {target * 1000:.0f} ms",
            )
        )
        rows.append(
            (
                f"scene {key} (warm workspace)",
                f"{warm['median'] * 1000:.1f} ms",
                f"p95 {warm['p95'] * 1000:.1f} ms",
                f"< {target * 1000:.0f} ms",
            )
        )
    rows.append(
        (
            "masking, ms per 32 KB",
            f"{masking['ms_per_32kb_median']:.3f} ms",
            f"p95 {masking['ms_per_32kb_p95']:.3f} ms",
            "< 1 ms",
        )
    )
    rows.append(
        (
            "masking throughput",
            f"{masking['mb_per_s']:.1f} MB/s",
            f"{masking['bytes'] / 1e6:.2f} MB",
            "",
        )
    )
    for card, timing in cli.items():
        rows.append(
            (
                f"cue scene {card} -d (process)",
                f"{timing['median'] * 1000:.0f} ms",
                f"p95 {timing['p95'] * 1000:.0f} ms",
                "",
            )
        )
    if "skipped" in repomix:
        rows.append(("npx repomix", "skipped", str(repomix["skipped"]), ""))
    else:
        for card in ("some20", "all155"):
            packed = repomix[card]
            assert isinstance(packed, dict)
            timing = packed
            ratio = timing["median"] / cli[card]["median"]
            rows.append(
                (
                    f"npx {REPOMIX} {card} (process)",
                    f"{timing['median'] * 1000:.0f} ms",
                    f"p95 {timing['p95'] * 1000:.0f} ms",
                    f"{ratio:.1f}x cue scene",
                )
            )
    width = max(len(r[0]) for r in rows)
    print(
        f"fastapi-docs-en, {len(docs)} docs, counter {scenes['counter']}, "
        f"cold index {scenes['cold_index_s']:.2f} s"
    )
    for row in rows:
        print(f"{row[0]:<{width}}  {row[1]:>12}  {row[2]:>16}  {row[3]}")
    result = {
        "corpus": "fastapi-docs-en",
        "docs": len(docs),
        "runs": args.runs,
        "scenes": scenes,
        "masking": masking,
        "cli": cli,
        "repomix": repomix,
        "targets": TARGETS,
    }
    path = Path(args.json)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
