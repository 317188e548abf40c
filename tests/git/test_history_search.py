"""git_search_diffs and git_search_commits: bounded patterns, masked matches, and no
path no tool reads (issue 35, findings 3, 4 and 5).

Git searches the raw history, so a commit it finds only inside a secret would confirm a
guess of the secret's start; each commit found is checked again on its masked changes
or message. Its patterns are checked for size before git compiles them, and git runs
under a memory bound."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cuedeck.errors import PatternTooLarge
from tests.conftest import needs
from tests.git.conftest import Call, git

TOKEN = "ghp_R4nd0mT0k3nV4lu3F0rTh3Fuzz3rT3st1ngX"
PASSWORD = "Tr0ub4dor-and-3-horses"


@pytest.fixture
def history(repo: Path) -> Path:
    """Commits adding a token in code, a token in a message, a denied .env, a committed
    access.toml, and an ordinary change."""
    (repo / "src" / "settings.py").write_text(f"TOKEN = '{TOKEN}'  # the deploy token\n")
    git(repo, "add", "--all")
    git(repo, "commit", "--quiet", "-m", "add the deploy token")
    (repo / "src" / "app.py").write_text("def main():\n    return deploy_token()\n")
    git(repo, "commit", "--quiet", "-am", f"rotate: the old one was {TOKEN}")
    (repo / ".env").write_text(f"DB_PASSWORD={PASSWORD}\n")
    (repo / ".cuedeck" / "access.toml").write_text(f'[tokens.ci]\nhash = "{PASSWORD}"\n')
    git(repo, "add", "--force", ".env", ".cuedeck/access.toml")
    git(repo, "commit", "--quiet", "-m", "local settings")
    return repo


def subjects(found: dict[str, Any]) -> list[str]:
    return [commit["subject"] for commit in found["commits"]]


def test_a_guessed_prefix_of_a_secret_confirms_nothing(history: Path, call: Call) -> None:
    for guess in (TOKEN[:7], TOKEN):
        assert call("git_search_diffs", text=guess)["commits"] == [], guess
        assert call("git_search_diffs", text=f"{guess}[A-Za-z0-9]", match="regex")["commits"] == []
        assert call("git_search_commits", message=guess)["commits"] == [], guess
    # What is not secret in those commits is still found, and replies stay masked.
    found = call("git_search_diffs", text="the deploy token")
    assert subjects(found) == ["add the deploy token"]
    regex = call("git_search_diffs", text="deploy.?token", match="regex")
    assert set(subjects(regex)) >= {"add the deploy token", "rotate: the old one was " + TOKEN}
    rotated = call("git_search_commits", message="rotate")
    assert len(rotated["commits"]) == 1


@needs("cuedeck_mcp")
def test_denied_and_private_files_are_left_out_of_history(history: Path, call: Call) -> None:
    assert call("git_search_diffs", text=PASSWORD)["commits"] == []
    assert call("git_search_diffs", text="DB_PASSWORD", match="regex")["commits"] == []
    local = call("git_search_commits", message="local settings")
    assert [commit["files"] for commit in local["commits"]] == [[]]
    diff = call("git_diff", from_ref="HEAD~1", to_ref="HEAD")
    assert PASSWORD not in json.dumps(diff) and "access.toml" not in json.dumps(diff)
    assert diff["files"] == []


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("git_search_diffs", {"text": "(a{1000}){1000}", "match": "regex"}),
        ("git_search_diffs", {"text": "((a{100}){100}){100}", "match": "regex"}),
        ("git_search_commits", {"message": r"\(a\{1000\}\)\{1000\}"}),
        ("git_search_commits", {"author": r"\(\(a\{255\}\)\{255\}\)\{255\}"}),
        ("git_log", {"author": r"\(a\{1000\}\)\{1000\}"}),
    ],
)
def test_patterns_git_would_compile_too_large_are_refused(
    history: Path, call: Call, tool: str, arguments: dict[str, str]
) -> None:
    with pytest.raises(PatternTooLarge) as refused:
        call(tool, **arguments)
    assert refused.value.code == 1016


def test_a_repository_cannot_make_messages_perl(history: Path, call: Call) -> None:
    """`grep.patternType=perl` would hand the message pattern to PCRE, past the check."""
    git(history, "config", "grep.patternType", "perl")
    assert call("git_search_commits", message="rotate+")["commits"] == []  # + is a character
    assert len(call("git_search_commits", message=r"rotate\+")["commits"]) == 1


@pytest.mark.slow
@pytest.mark.anyio
async def test_over_stdio_under_a_memory_limit(history: Path) -> None:
    from mcp import MCPError
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters

    from cuedeck.system.spawn import memory_bounded
    from tests.mcp.conftest import CUE, environment

    argv = memory_bounded([CUE, "-C", str(history), "mcp", "--tools", "all"], 4 * 1024**3)
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=environment())
    async with Client(params, mode="legacy") as client:
        for bomb in ("((((a{65535}){65535}){65535}){65535})", "(a{1000}){1000}"):
            with pytest.raises(MCPError) as refused:
                await client.call_tool("git_search_diffs", {"text": bomb, "match": "regex"})
            assert refused.value.error.code == 1016
        found = await client.call_tool("git_search_diffs", {"text": TOKEN[:10]})
        assert found.structured_content == {
            "success": True, "commits": [], "offset": 0, "returned": 0, "has_more": False,
            "next_offset": None,
        }  # fmt: skip
        kept = await client.call_tool("git_search_diffs", {"text": "the deploy token"})
        assert kept.structured_content is not None
        assert [c["subject"] for c in kept.structured_content["commits"]] == [
            "add the deploy token"
        ]
