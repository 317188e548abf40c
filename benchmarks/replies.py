"""Replies as a model receives them: tokens of a fixed set of calls, and their budgets.

    uv run python benchmarks/replies.py [--corpora DIR] [--json PATH] [--compare BEFORE.json]

A workspace is made of the fastapi docs corpus and the installed Click package's source
(real code), in a git repository with a second commit that changes three files, a card
citing a dozen docs and two methods, and 40 memory segments. A real `cue mcp` (stdio,
``--tools all``) is driven by the official MCP client through a fixed set of calls; for
each reply it counts, in exact o200k tokens:

- ``text``: the reply's text content, what most clients hand their model;
- ``structured``: its structured content as sent (compact JSON), what some clients hand
  their model instead, and what programs read;
- ``content``: the text the reply carries (a page, a scene, a map), alone.

``--compare`` adds the same figures from an earlier run (another CueDeck: run this file
with that installation's Python) and the tokens saved. Writes benchmarks/results/replies.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

import anyio

HERE = Path(__file__).resolve().parent
# Run as a script, this file's folder comes first on sys.path: keep "mcp" the SDK's.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != HERE]

from mcp.client import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

CUE = str(Path(sys.executable).with_name("cue"))
CARD = "rep001"
DOCS = [
    "tutorial/body.md", "tutorial/query-params.md", "tutorial/path-params.md",
    "tutorial/handling-errors.md", "tutorial/dependencies/index.md",
    "tutorial/security/oauth2-jwt.md", "advanced/settings.md", "advanced/middleware.md",
    "deployment/docker.md", "tutorial/sql-databases.md", "tutorial/bigger-applications.md",
    "advanced/testing-dependencies.md",
]  # fmt: skip
#: The fixed set: (label, tool, arguments).
CORE, TYPES = "src/click/core.py", "src/click/types.py"
MEMORY = {"project_id": "p", "task_id": CARD}
CALLS: list[tuple[str, str, dict[str, Any]]] = [
    ("read_doc, one method", "read_doc", {"file_path": CORE, "anchor": "Option.get_default"}),
    ("read_doc, one method", "read_doc", {"file_path": CORE, "anchor": "Option._parse_decls"}),
    ("read_doc, a page of docs", "read_doc", {"file_path": "docs/tutorial/body.md"}),
    ("read_doc, max_tokens 1000", "read_doc", {"file_path": TYPES, "max_tokens": 1000}),
    ("get_file_content, code", "get_file_content", {"file_path": "src/click/parser.py"}),
    ("build_scene 3000", "build_scene", {"token_limit": 3000}),
    ("build_scene 4000, since", "build_scene", {"token_limit": 4000, "since": "HEAD~1"}),
    ("build_scene 16000", "build_scene", {"token_limit": 16000}),
    ("read_context, keyword", "read_context", {"query": "HTTPException", "mode": "keyword"}),
    ("search_code, keyword", "search_code", {"query": "process value option", "mode": "keyword"}),
    ("repo_map 1024", "repo_map", {}),
    ("list_tasks", "list_tasks", {}),
    ("context_restore", "context_restore", {**MEMORY, "max_tokens": 2000}),
    ("git_diff HEAD~1", "git_diff", {"from_ref": "HEAD~1"}),
    ("git_log", "git_log", {"limit": 5}),
    ("regex_search", "regex_search", {"pattern": r"def process_value", "context_lines": 3}),
]  # fmt: skip
#: Where each reply keeps the text it carries.
CONTENT_KEYS = ("content", "text", "diff", "tree")


def corpora_dir(explicit: str | None) -> Path:
    for candidate in (explicit, os.environ.get("CUEDECK_CORPORA"), "/work/shared/corpora"):
        if candidate and (Path(candidate) / "fastapi-docs-en.tar.gz").is_file():
            return Path(candidate)
    raise SystemExit("shared corpora not found: pass --corpora DIR or set CUEDECK_CORPORA")


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=b", "-c", "user.email=b@example.com", *args],
        cwd=root, check=True, capture_output=True,
    )  # fmt: skip


def make_workspace(corpora: Path, root: Path) -> Path:
    """The workspace the calls run on (see the module)."""
    import click

    (root / ".cuedeck" / "cards").mkdir(parents=True)
    with tarfile.open(corpora / "fastapi-docs-en.tar.gz") as archive:
        archive.extractall(root / "corpus", filter="data")
    shutil.move(root / "corpus" / "fastapi-docs-en", root / "docs")
    shutil.rmtree(root / "corpus")
    source = Path(click.__file__).parent
    shutil.copytree(source, root / "src" / "click", ignore=shutil.ignore_patterns("__pycache__"))
    (root / ".cuedeck" / "config.toml").write_text(
        "".join(f"[rate_limits.{tool}]\nper_minute = 0\n" for tool in {c[1] for c in CALLS})
    )
    cited = "\n".join(f"- @docs/{doc}" for doc in DOCS)
    (root / ".cuedeck" / "cards" / f"{CARD}.md").write_text(
        f"---\nid: {CARD}\ntitle: Option errors name their parameter\nstatus: active\n---\n"
        "# Option errors name their parameter\n\nA value that fails to convert should say "
        f"which option it was given to.\n\n{cited}\n"
        f"- @code/{CORE}#Option.process_value\n- @code/{TYPES}#ParamType.fail\n"
    )
    git(root, "init", "--quiet", "--initial-branch=main")
    git(root, "add", "-A")
    git(root, "commit", "--quiet", "-m", "base")
    for rel in ("src/click/core.py", "src/click/types.py", "docs/tutorial/body.md"):
        path = root / rel
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        mark = "  # revised\n" if rel.endswith(".py") else " (revised)\n"
        for n in range(10, len(lines), 40):
            lines[n] = lines[n].rstrip("\n") + mark
        path.write_text("".join(lines), encoding="utf-8")
    git(root, "commit", "--quiet", "-am", "revise")
    return root


def segments(root: Path) -> list[dict[str, Any]]:
    """40 paragraphs of the cited docs, as memory segments of the card's task."""
    found = [
        p.strip()
        for doc in DOCS
        for p in (root / "docs" / doc).read_text(encoding="utf-8").split("\n\n")
        if len(p.strip()) > 200
    ]
    return [{"text": p, "task_id": CARD, "type": "note"} for p in found[:40]]


def _count() -> Any:
    from cuedeck.token_counts import O200kCounter

    counter = O200kCounter.load()
    if counter is None:
        raise SystemExit("the replies are measured in exact o200k tokens: install bpe-openai")
    return counter.count


async def measure(root: Path) -> list[dict[str, Any]]:
    count = _count()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUEDECK_", "CUE_"))}
    env["CUEDECK_MCP_RESIDENT"] = "0"
    params = StdioServerParameters(
        command=CUE, args=["-C", str(root), "mcp", "--tools", "all"], env=env
    )
    rows = []
    async with Client(params, mode="legacy") as client:
        await client.call_tool(
            "context_capture", {"project_id": "p", "task_id": CARD, "segments": segments(root)}
        )
        for label, tool, arguments in CALLS:
            result = await client.call_tool(tool, arguments)
            text = "".join(block.text for block in result.content if block.type == "text")
            value = result.structured_content
            sent = json.dumps(value, ensure_ascii=False, separators=(",", ":")) if value else ""
            carried = next(
                (value[k] for k in CONTENT_KEYS if isinstance((value or {}).get(k), str)), None
            )
            if carried is None:
                carried = json.loads(text)["text"] if tool == "build_scene" else ""
            rows.append(
                {
                    "label": label,
                    "tool": tool,
                    "arguments": arguments,
                    "text": count(text),
                    "structured": count(sent) if sent else count(text),
                    "content": count(carried) if carried else None,
                    "error": bool(result.is_error),
                }
            )
    return rows


def table(rows: list[dict[str, Any]], before: list[dict[str, Any]] | None) -> str:
    """The figures as a markdown table, after an earlier run's when given."""
    head, rule = "| call |", "| --- |"
    if before is not None:
        head += " before: content | before: text (= JSON) |"
        rule += " ---: | ---: |"
    head += " content | text | structured |"
    rule += " ---: | ---: | ---: |"
    if before is not None:
        head += " text saved |"
        rule += " ---: |"
    lines = [head, rule]
    total = {"now": 0, "before": 0}

    def tokens(value: int | None) -> str:
        return "" if value is None else f"{value:,}"

    for n, row in enumerate(rows):
        line = f"| {row['label']} |"
        if before is not None:
            then = before[n]
            line += f" {tokens(then['content'])} | {then['text']:,} |"
        line += f" {tokens(row['content'])} | {row['text']:,} | {row['structured']:,} |"
        if before is not None:
            then_text = before[n]["text"]
            total["now"] += row["text"]
            total["before"] += then_text
            saved = then_text - row["text"]
            line += f" {saved:,} ({saved / then_text:.0%}) |"
        lines.append(line)
    if before is not None:
        saved = total["before"] - total["now"]
        lines.append(
            f"| **all {len(rows)} calls** | | **{total['before']:,}** | | **{total['now']:,}** "
            f"| | **{saved:,} ({saved / total['before']:.0%})** |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora")
    parser.add_argument("--json", default=str(HERE / "results" / "replies.json"))
    parser.add_argument("--compare", help="the JSON of an earlier run, to show beside")
    options = parser.parse_args()
    corpora = corpora_dir(options.corpora)
    with tempfile.TemporaryDirectory() as tmp:
        root = make_workspace(corpora, Path(tmp) / "project")
        rows = anyio.run(measure, root)
    before = json.loads(Path(options.compare).read_text())["rows"] if options.compare else None
    print(table(rows, before))
    out = Path(options.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
