"""Whole replies within their budgets, as a real `cue mcp` sends them to the official client.

A reply reaches a model as its text or, with some clients, as its structured content:
both are counted, by the workspace's own counter, against the budget the call gave (a
tool's argument, or the ``[files] max_tokens`` of the tools without one).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from cuedeck.workspace import open_workspace
from tests.conftest import needs_extras
from tests.mcp.conftest import CUE, REPO, environment

if TYPE_CHECKING:
    from collections.abc import Callable

    from mcp_types import CallToolResult

pytestmark = [pytest.mark.anyio, pytest.mark.slow, needs_extras]

#: The budget of the tools that take none: the workspace's ``[files] max_tokens``.
FILES_BUDGET = 600
#: Every tool whose reply is held to a budget, and where that budget comes from: the
#: argument named, or None for ``[files] max_tokens``.
BUDGETED: dict[str, str | None] = {
    "build_scene": "token_limit",
    "read_doc": "max_tokens",
    "repo_map": "token_limit",
    "directory_tree": "max_tokens",
    "regex_search": "max_tokens",
    "context_analyze_usage": "max_tokens",
    "context_capture": "max_tokens",
    "context_get_working_set": "max_tokens",
    "context_get_task_context": "max_tokens",
    "context_gc_analyze": "max_tokens",
    "context_search_stashed": "max_tokens",
    "context_retrieve_stashed": "max_tokens",
    "context_restore": "max_tokens",
    "get_file_content": None,
    "git_diff": None,
    "git_log": None,
}
CARD = "bud001"
DOCS = [
    "tutorial/body.md", "tutorial/query-params.md", "tutorial/path-params.md",
    "tutorial/handling-errors.md", "tutorial/dependencies/index.md",
    "tutorial/security/oauth2-jwt.md", "advanced/settings.md", "advanced/middleware.md",
    "deployment/docker.md", "tutorial/sql-databases.md", "tutorial/bigger-applications.md",
    "advanced/testing-dependencies.md",
]  # fmt: skip


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=root, check=True, capture_output=True,
    )  # fmt: skip


@pytest.fixture
def project(tmp_path: Path, fastapi_docs: Path) -> Path:
    """A git repository with the fastapi docs, real Python code (core's scene package),
    a card citing a dozen docs and two symbols, and a second commit changing some."""
    root = tmp_path / "project"
    (root / ".cuedeck" / "cards").mkdir(parents=True)
    shutil.copytree(fastapi_docs, root / "docs", ignore=shutil.ignore_patterns("LICENSE*"))
    scene = REPO / "packages" / "cuedeck-core" / "src" / "cuedeck" / "scene"
    shutil.copytree(scene, root / "src" / "scene", ignore=shutil.ignore_patterns("__pycache__"))
    (root / ".cuedeck" / "config.toml").write_text(
        f"[files]\nmax_tokens = {FILES_BUDGET}\n\n[scene]\ncode_share = 0.2\n",
        encoding="utf-8",
    )
    cited = "\n".join(f"- @docs/{doc}" for doc in DOCS)
    (root / ".cuedeck" / "cards" / f"{CARD}.md").write_text(
        f"---\nid: {CARD}\ntitle: Fit every reply to its budget\nstatus: active\n---\n"
        f"# Fit every reply to its budget\n\nThe scene fitter and what it packs.\n\n{cited}\n"
        "- @code/src/scene/fit.py#fit_to_budget\n- @code/src/scene/build.py#build_scene\n",
        encoding="utf-8",
    )
    git(root, "init", "--quiet", "--initial-branch=main")
    git(root, "add", "-A")
    git(root, "commit", "--quiet", "-m", "base")
    for rel in ("src/scene/fit.py", "src/scene/render.py", "docs/tutorial/body.md"):
        path = root / rel
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        mark = "  # revised\n" if rel.endswith(".py") else " (revised)\n"
        for n in range(5, len(lines), 25):
            lines[n] = lines[n].rstrip("\n") + mark
        path.write_text("".join(lines), encoding="utf-8")
    git(root, "commit", "--quiet", "-am", "revise")
    (root / "src" / "scene" / "fit.py").write_text(  # and an edit not committed yet
        (root / "src" / "scene" / "fit.py").read_text(encoding="utf-8") + "\n# unfinished\n",
        encoding="utf-8",
    )
    return root


def _sizes(result: CallToolResult, count: Callable[[str], int]) -> tuple[int, int]:
    """Tokens of the reply's text and of its structured content, as sent."""
    text = "".join(block.text for block in result.content if block.type == "text")
    structured = json.dumps(result.structured_content, ensure_ascii=False, separators=(",", ":"))
    return count(text), count(structured)


async def test_build_scene_replies_never_exceed_the_token_limit(project: Path) -> None:
    count = open_workspace(project).count_tokens
    params = StdioServerParameters(command=CUE, args=["-C", str(project), "mcp"], env=environment())
    found: dict[tuple[int, str | None], tuple[int, int, int]] = {}
    async with Client(params, mode="legacy") as client:
        for limit in (2000, 4000, 8000, 16000):
            for since in (None, "HEAD~1"):
                arguments: dict[str, Any] = {"token_limit": limit}
                if since is not None:
                    arguments["since"] = since
                result = await client.call_tool("build_scene", arguments)
                assert result.structured_content is not None
                text, structured = _sizes(result, count)
                found[limit, since] = (text, structured, result.structured_content["tokens"])
    for (limit, since), (text, structured, scene) in found.items():
        assert text <= limit and structured <= limit, (limit, since, text, structured)
        # The scene is fitted to what the reply costs, not left far below it.
        assert structured > 0.9 * limit or scene < 0.9 * limit, (limit, since)
    assert found[16000, "HEAD~1"] != found[16000, None]  # the changes since took room


async def test_every_budgeted_tool_fits_its_budget(project: Path) -> None:
    workspace = open_workspace(project)
    count = workspace.count_tokens
    # Every tool that takes a budget is here (a new one must join the table).
    for name, tool in workspace.plugins.tools().items():
        names = {p.name for p in tool.parameters}
        if "max_tokens" in names or ("token_limit" in names and "memory" not in tool.category):
            assert name in BUDGETED, f"{name} takes a budget: add it to BUDGETED"
    workspace.close()
    paragraphs = [
        p.strip()
        for doc in DOCS
        for p in (project / "docs" / doc).read_text(encoding="utf-8").split("\n\n")
        if len(p.strip()) > 200
    ][:80]
    segments = [{"text": p, "task_id": CARD, "tags": ["docs"]} for p in paragraphs]
    memory = {"project_id": "p", "task_id": CARD}
    calls: list[tuple[str, dict[str, Any]]] = [
        ("build_scene", {"since": "HEAD~31"}),
        ("read_doc", {"file_path": "docs/tutorial/sql-databases.md"}),
        ("read_doc", {"file_path": "src/scene/build.py", "anchor": "build_scene"}),
        ("repo_map", {}),
        ("directory_tree", {"path": "docs", "depth": 4}),
        ("regex_search", {"pattern": r"def \w+", "context_lines": 2}),
        # 20 segments: their ids come whole beyond any budget (what was written is always
        # said), and 40 random ids alone come within a few tokens of 700.
        ("context_capture", {"project_id": "p", "segments": segments[:20], "task_id": CARD}),
        ("context_analyze_usage", memory),
        ("context_get_working_set", memory),
        ("context_get_task_context", memory),
        ("context_gc_analyze", {**memory, "target_tokens": 500}),
        ("context_restore", memory),
        ("context_search_stashed", {"query": "request body"}),
        ("context_retrieve_stashed", {"project_id": "p", "query": "request body"}),
        ("get_file_content", {"file_path": "docs/tutorial/sql-databases.md"}),
        ("git_diff", {"from_ref": "HEAD~31"}),
        ("git_log", {"limit": 50}),
    ]
    assert {name for name, _ in calls} == set(BUDGETED)
    params = StdioServerParameters(
        command=CUE, args=["-C", str(project), "mcp", "--tools", "all"], env=environment()
    )
    sizes: dict[str, list[tuple[int, int, int]]] = {}
    async with Client(params, mode="legacy") as client:
        await client.call_tool("context_capture", {**memory, "segments": segments[40:]})
        await client.call_tool("context_stash", {"project_id": "p", "query": "request"})
        for git_commit in range(30):  # a history longer than a page
            (project / "notes.md").write_text(f"# Notes\n\n{paragraphs[git_commit]}\n")
            git(project, "add", "notes.md")
            git(project, "commit", "--quiet", "-m", f"note {git_commit}", "-m", paragraphs[-1])
        for name, arguments in calls:
            budget_name = BUDGETED[name]
            for budget in (700, 2500) if budget_name else (FILES_BUDGET,):
                given = {**arguments, budget_name: budget} if budget_name else arguments
                result = await client.call_tool(name, given)
                assert not result.is_error, (name, result.content)
                text, structured = _sizes(result, count)
                sizes.setdefault(name, []).append((budget, text, structured))
    for name, measured in sizes.items():
        for budget, text, structured in measured:
            assert text <= budget and structured <= budget, (name, budget, text, structured)
        print(name, measured)
    # The text a model reads costs less than the escaped JSON of the same reply.
    assert sum(m[-1][1] for m in sizes.values()) < sum(m[-1][2] for m in sizes.values())
