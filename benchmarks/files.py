"""File and git tools benchmark: `cue mcp --tools all` over stdio on a real git repository.

    uv run python benchmarks/files.py [--calls 100] [--corpora DIR] [--json PATH]

The fastapi docs corpus is extracted into a temporary workspace and committed to a git
repository. Through a real stdio subprocess driven by the MCP SDK client it measures
get_file_content, edit_file (each edit with the hash the previous reply returned) and
git_status (clean, and with 20 modified files), then git_diff on a 5,000-line change,
read page by page. The peer in the same run is the git executable itself: `git status
--porcelain=v2` and `git diff` timed as plain subprocesses, the floor any git tool pays.
"""

from __future__ import annotations

import argparse
import json
import os
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
# Run as a script, this file's folder comes first on sys.path; keep it off, as mcp.py does.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != HERE]

from mcp.client import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

REPO = HERE.parent
CUE = str(Path(sys.executable).with_name("cue"))
TARGETS_MS = {"get_file_content": 10.0, "edit_file": 20.0, "git_status (clean)": 50.0}
GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.org",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.org",
}


def corpora_dir(explicit: str | None) -> Path:
    for candidate in (
        explicit,
        os.environ.get("CUEDECK_CORPORA"),
        REPO.parent / "shared" / "corpora",
    ):
        if candidate and (Path(candidate) / "fastapi-docs-en.tar.gz").is_file():
            return Path(candidate)
    raise SystemExit("shared corpora not found: pass --corpora DIR or set CUEDECK_CORPORA")


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUEDECK_", "CUE_"))}
    return {**env, **GIT_ENV}


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, env=_env(), check=True, capture_output=True, text=True
    ).stdout


def make_repository(corpora: Path, into: Path) -> Path:
    """The fastapi docs, committed, with a .cuedeck folder and CueDeck's cache ignored."""
    with tarfile.open(corpora / "fastapi-docs-en.tar.gz") as archive:
        archive.extractall(into, filter="data")
    root = into / "fastapi-docs-en"
    (root / ".cuedeck" / "cards").mkdir(parents=True)
    (root / ".cuedeck" / "config.toml").write_text('[mcp]\ntools = ["all"]\n')
    (root / ".gitignore").write_text(".cuedeck/.cache/\n")
    git(root, "init", "--quiet", "-b", "main")
    git(root, "add", "--all")
    git(root, "commit", "--quiet", "-m", "fastapi docs")
    return root


def p50(samples: list[float]) -> float:
    return statistics.median(samples)


def subprocess_ms(root: Path, args: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(["git", *args], cwd=root, env=_env(), check=True, capture_output=True)
        times.append((time.perf_counter() - started) * 1000)
    return p50(times)


async def measure(root: Path, calls: int) -> dict[str, Any]:
    docs = sorted(
        p.relative_to(root).as_posix() for p in root.rglob("*.md") if ".cuedeck" not in p.parts
    )
    params = StdioServerParameters(command=CUE, args=["-C", str(root), "mcp"], env=_env())
    results: dict[str, Any] = {}
    async with Client(params, mode="legacy") as client:

        async def timed(tool: str, arguments: dict[str, Any]) -> tuple[float, dict[str, Any]]:
            started = time.perf_counter()
            result = await client.call_tool(tool, arguments)
            elapsed = (time.perf_counter() - started) * 1000
            if result.is_error or result.structured_content is None:
                raise SystemExit(f"{tool} failed: {result.content}")
            return elapsed, result.structured_content

        await timed("git_status", {})  # warm-up
        reads = [
            (await timed("get_file_content", {"file_path": docs[n % len(docs)]}))[0]
            for n in range(calls)
        ]
        results["get_file_content"] = reads

        target = "benchmark-notes.md"
        (root / target).write_text("counter: 0\n")
        _, page = await timed("get_file_content", {"file_path": target})
        digest = page["content_hash"]
        edits = []
        for n in range(calls):
            elapsed, reply = await timed(
                "edit_file",
                {
                    "file_path": target,
                    "old_string": f"counter: {n}",
                    "new_string": f"counter: {n + 1}",
                    "content_hash": digest,
                },
            )
            digest = reply["new_content_hash"]
            edits.append(elapsed)
        results["edit_file"] = edits
        (root / target).unlink()

        results["git_status (clean)"] = [(await timed("git_status", {}))[0] for _ in range(calls)]
        for path in docs[:20]:
            with (root / path).open("a") as handle:
                handle.write("\nA local change.\n")
        results["git_status (20 modified)"] = [
            (await timed("git_status", {}))[0] for _ in range(calls)
        ]
        git(root, "checkout", "--quiet", "--", ".")

        big = root / "generated.py"
        big.write_text(
            "".join(f"VALUE_{n} = {n}  # a generated line of the big change\n" for n in range(5000))
        )
        git(root, "add", "generated.py")
        started = time.perf_counter()
        offset, pages, tokens = 1, 0, 0
        while True:
            _, reply = await timed("git_diff", {"staged": True, "offset": offset})
            pages += 1
            tokens += reply["estimated_tokens"]
            if not reply["has_more"]:
                break
            offset = reply["offset"] + reply["returned_lines"]
        results["git_diff 5,000 lines, every page"] = (time.perf_counter() - started) * 1000
        results["git_diff pages"] = pages
        results["git_diff tokens"] = tokens
        first, _ = await timed("git_diff", {"staged": True})
        results["git_diff 5,000 lines, first page"] = first
    results["git status --porcelain=v2 (subprocess)"] = subprocess_ms(
        root, ["status", "--porcelain=v2"], calls
    )
    results["git diff --cached (subprocess)"] = subprocess_ms(root, ["diff", "--cached"], 20)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--corpora")
    parser.add_argument("--json", type=Path, default=REPO / "benchmarks" / "results" / "files.json")
    options = parser.parse_args()
    corpora = corpora_dir(options.corpora)
    with tempfile.TemporaryDirectory() as tmp:
        root = make_repository(corpora, Path(tmp))
        results = anyio.run(measure, root, options.calls)
    print(f"{'call':42} {'p50':>10} {'p95':>10} {'target':>10}")
    for label, value in results.items():
        if isinstance(value, list):
            ordered = sorted(value)
            p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
            target = TARGETS_MS.get(label)
            goal = f"< {target:g} ms" if target else ""
            print(f"{label:42} {p50(value):8.1f}ms {p95:8.1f}ms {goal:>10}")
        elif "pages" in label or "tokens" in label:
            print(f"{label:42} {value:>10}")
        else:
            print(f"{label:42} {value:8.1f}ms")
    options.json.parent.mkdir(parents=True, exist_ok=True)
    summary = {k: (p50(v) if isinstance(v, list) else v) for k, v in results.items()}
    options.json.write_text(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
