"""Over a thousand generated hostile calls across every tool, through the real stdio client.

The workspace is a git repository with secrets planted in files, file names, a branch
and a commit, links into ``.git``, into CueDeck's control files and out of the
workspace, and an ``access.toml``. Every reply must be a valid result or a JSON-RPC error
with a CueDeck code (never an internal error, never a missing reply); no planted secret
may appear in any reply, error or line of the server's stderr, even when a call sends
the secret itself; and nothing outside the workspace, inside ``.git`` or among
CueDeck's control files may change, nor may the root become a git directory. Regular-
expression bombs, lookbehinds after a secret's start, a guessed prefix of one, a git
directory's files and a client-written `.gitignore` git would skip lines of (issue 35)
are among the calls. A second test sends raw lines the client could not (lone
surrogates, ids of every type, deep nesting) and wants one answer for each.
"""

from __future__ import annotations

import hashlib
import json
import random
import shlex
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import MCPError
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from cuedeck.system.git import is_git_directory
from tests.mcp.conftest import CUE, environment

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

CALLS = 1100
SEED = 20261123
#: Every secret planted in the workspace, one per masking family worth checking.
PLANTED = {
    "stripe": "sk_live_4eC39HqLyjWDarjtT1zdp7dcTYooMQauvdEDq54NiTphI7jx",  # in the demo
    "aws": "AKIAQYLPMN5HHHFPZAM2",
    "github": "ghp_R4nd0mT0k3nV4lu3F0rTh3Fuzz3rT3st1ngX",
    "password": "Fuzz3dPassw0rdValue",
}
HOSTILE_STRINGS = [
    "",
    " ",
    "\x00",
    "a\x00b.md",
    "../../etc/passwd",
    "/etc/passwd",
    "C:\\Windows\\win.ini",
    ".git/config",
    "~/.ssh/id_rsa",
    "%2e%2e/%2e%2e/etc/passwd",
    "\u202eevil\u202c",
    "\u200f\u2066bidi\u2069\u202a",
    "zero\u200bwidth",
    "\U0001f600\U0001f4a9",  # astral characters (surrogate pairs in UTF-16)
    "x" * 100_000,
    "n" * 300 + ".txt",
    "9999999999d",
    "2024-13-45",
    "-1",
    "NaN",
    "null",
    "' OR 1=1 --",
    "$(rm -rf /)",
    "<script>alert(1)</script>",
    "#anchor",
    "docs/api.md#",
    "@card/zzzzzz",
    # links planted in the workspace, into .git, CueDeck's control files and out of it
    "docs/gitdir/config",
    "docs/gitdir/hooks/pre-commit",
    "docs/deck/access.toml",
    "docs/deck/config.toml",
    "docs/deck/.cache/index.sqlite3",
    ".cuedeck/access.toml",
    ".cuedeck/config.toml",
    ".cuedeck/state.json",
    "docs/outside/secret.txt",
    "loop-a",
    "docs",
    # refspecs and options where refs go
    "+main:feature",
    "main:feature",
    "main..feature",
    "HEAD:README.md",
    "-f",
    "--output=/tmp/fuzzed",
    "main@{1}",
    # secrets, alone and glued to names
    f"postgres://ledger:{PLANTED['password']}@db.internal:5432/ledger",
    PLANTED["aws"],
    f"token {PLANTED['github']}",
    f"notes_{PLANTED['github']}.md",
    f"leak-{PLANTED['github']}",
    f"keys/{PLANTED['aws']}_backup.txt",
    # patterns: regular-expression bombs, one that matches everywhere, lookbehinds after a
    # secret's known start, globs git skips
    "(?:(?:(?:(?:a{65535}){65535}){65535}){65535})",
    "(?:(?:a{1000}){1000}){10}",
    "((a{1000}){1000})",
    "(?:)",
    r"(?<=ghp_)\w{36}",
    r"(?<=postgres://app:)[^@]+",
    "[z-a]",
    "!",
    "\\",
    "*a*a*a*a*a*a*a*b",
    # a git directory's files, at the root and in a folder
    "HEAD",
    "objects/info/packs",
    "refs/heads/main",
    "vendor/x/HEAD",
]
#: Strings that pass the published patterns (ids, date filters, anchors) but sit at
#: their extremes, so calls get past the schema into the tools' own code.
EDGE_STRINGS = [
    "9999999999d",
    ">9999999999999999999999d",
    "<0d",
    "<=99999y",
    "9999-12-31",
    "0001-01-01",
    ">0001-01-01T00:00:00+14:00",
    "zzzzzz",
    "000000",
    "k3x9q2",
    "docs/api.md#nope",
    ".cuedeck/docs/vault.md",
    ".cuedeck/cards/fz0001.md",
    "fuzz",
    "main",
    "HEAD~1",
    "origin",
    "README.md",
    "docs/leaky.md",
]
HOSTILE_NUMBERS = [-1, 0, 1, -(2**63), 2**63, 2**64 + 1, 10**300, 3.5, float("1e308")]


def _deep(levels: int) -> Any:
    value: Any = "bottom"
    for _ in range(levels):
        value = [value]
    return value


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env=environment(
        GIT_AUTHOR_NAME="Ada", GIT_AUTHOR_EMAIL="ada@example.org",
        GIT_COMMITTER_NAME="Ada", GIT_COMMITTER_EMAIL="ada@example.org",
        GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1",
    ))  # fmt: skip


def _plant(root: Path, outside: Path) -> None:
    cards = root / ".cuedeck" / "cards"
    (cards / "fz0001.md").write_text(
        f"---\ntitle: rotate {PLANTED['aws']}\nstatus: todo\npriority: high\n"
        f"tags: [fuzz]\n---\nUse {PLANTED['github']} for the mirror.\n"
    )
    (root / ".cuedeck" / "docs" / "vault.md").write_text(
        "# Vault\n\n## Database\n\n"
        f"DATABASE_URL=postgres://app:{PLANTED['password']}@db.internal:5432/app\n"
    )
    (root / "docs" / f"notes_{PLANTED['github']}.md").write_text("# Notes\n\nGlued names.\n")
    (root / "keys").mkdir()
    (root / "keys" / f"{PLANTED['aws']}_backup.txt").write_text("backup\n")
    config = root / ".cuedeck" / "config.toml"
    limits = "".join(
        f"\n[rate_limits.{tool}]\nper_minute = 0\nburst = 0\n"
        for tool in ("read_context", "read_doc", "list_tasks", "update_task")
    )
    config.write_text(config.read_text() + '\n[mcp]\nlocal_role = "admin"\n' + limits)
    (root / ".cuedeck" / "access.toml").write_text(
        f'[[token]]\nname = "ci"\nrole = "read"\nsha256 = "{"a" * 64}"\n'
    )
    _git(root, "init", "--quiet", "--initial-branch", "main")
    _git(root, "add", "--all")
    _git(root, "commit", "--quiet", "-m", f"demo with {PLANTED['github']}")
    _git(root, "branch", f"leak-{PLANTED['github']}")
    (root / "docs" / "leaky.md").write_text(f"# Leaky\n\nkey_{PLANTED['github']} here\n")
    outside.mkdir()
    (outside / "secret.txt").write_text(f"outside {PLANTED['password']}\n")
    (root / "docs" / "gitdir").symlink_to("../.git", target_is_directory=True)
    (root / "docs" / "deck").symlink_to("../.cuedeck", target_is_directory=True)
    (root / "docs" / "outside").symlink_to(outside, target_is_directory=True)
    (root / "loop-a").symlink_to("loop-b")
    (root / "loop-b").symlink_to("loop-a")


def _fingerprint(root: Path, outside: Path) -> dict[str, str]:
    """Hashes of what no tool may change: the outside folder, .git's config and hooks,
    CueDeck's control files."""
    watched = [
        *sorted(outside.rglob("*")),
        root / ".git" / "config",
        *sorted((root / ".git" / "hooks").rglob("*")),
        root / ".cuedeck" / "access.toml",
        root / ".cuedeck" / "config.toml",
    ]
    return {
        str(path): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in watched
        if path.is_file()
    } | {"outside-listing": ",".join(sorted(p.name for p in outside.parent.iterdir()))}


#: Calls the issue reported as internal errors: always part of the run.
KNOWN_CASES: list[tuple[str, dict[str, Any]]] = [
    ("list_tasks", {"created": "9999999999d"}),
    ("list_tasks", {"updated": ">99999999999999999999w"}),
    ("read_doc", {"path": "docs/a\x00pi.md"}),
    ("read_context", {"query": "x\x00y"}),
    ("get_task_dependencies", {"id": "k3x9q2", "reverse": "yes"}),
    ("update_task", {"id": "k3x9q2", "title": "bidi \u202e override"}),
    ("get_file_content", {"file_path": "n" * 300 + ".txt"}),
    ("create_file", {"file_path": "docs", "content": "x"}),
    ("get_file_content", {"file_path": "loop-a"}),
    ("git_log", {"author": "a\x00b"}),
    ("git_log", {"since": "2024\x00"}),
    ("git_commit", {"message": "m", "author": "A <a\x00@b>"}),
    ("git_pull", {"branch": "+main:feature"}),
    ("edit_file", {"file_path": "docs/gitdir/config", "old_string": "[core]",
                   "new_string": "[core]\n\tfsmonitor = touch /tmp/PWNED",
                   "content_hash": "0" * 64}),
    ("create_file", {"file_path": "docs/deck/access.toml", "content": "[[token]]"}),
    ("list_tasks", {"status": _deep(200)}),
    # issue 35: bombs, lookbehinds, a guessed prefix, a git directory, a bad .gitignore
    ("regex_search", {"pattern": "(?:(?:(?:(?:a{65535}){65535}){65535}){65535})"}),
    ("regex_search", {"pattern": "(?:(?:a{1000}){1000}){10}"}),
    ("regex_search", {"pattern": r"(?<=ghp_)\w{36}", "context_lines": 3}),
    ("regex_search", {"pattern": r"(?<=postgres://app:)[^@]+"}),
    ("regex_search", {"pattern": "(?:)", "max_matches": 1000}),
    ("git_search_diffs", {"text": PLANTED["github"][:10]}),
    ("git_search_diffs", {"text": "((a{1000}){1000})", "match": "regex"}),
    ("git_search_commits", {"message": PLANTED["github"][:10]}),
    ("create_file", {"file_path": "HEAD", "content": "ref: refs/heads/main\n"}),
    ("create_file", {"file_path": "objects/info/packs", "content": "\n"}),
    ("create_file", {"file_path": "refs/heads/main", "content": ""}),
    ("create_file", {"file_path": ".gitignore", "content": "[z-a]\n!\n\\\n*.log\n"}),
    ("list_files", {"globs": ["[z-a]"]}),
    ("no_such_tool", {}),
]  # fmt: skip


def _wrong_value(rng: random.Random, schema: dict[str, Any]) -> Any:
    """A value that is wrong, or hostile, for a property of ``schema``."""
    kind = schema.get("type")
    choices: list[Any] = [
        None,
        True,
        [],
        {},
        {"nested": {"deeper": [1, "two", None]}},
        _deep(11),
        _deep(40),
        {"k": _deep(120)},
        rng.choice(HOSTILE_NUMBERS),
        rng.choice(HOSTILE_STRINGS),
    ]
    if kind == "string" or "enum" in schema:
        choices += [rng.choice(HOSTILE_STRINGS) for _ in range(4)]
        choices += [rng.choice(EDGE_STRINGS) for _ in range(5)]
    if kind in ("integer", "number"):
        choices += [rng.choice(HOSTILE_NUMBERS) for _ in range(3)] + ["5", "ten"]
    if kind == "boolean":
        choices += ["yes", "true", 1, 0]
    if kind == "array":
        choices += [
            rng.choice(HOSTILE_STRINGS),
            [rng.choice(HOSTILE_STRINGS) for _ in range(3)],
            [rng.choice(EDGE_STRINGS) for _ in range(2)],
            [None, 1, {}],
            ["x"] * 5000,
        ]
    return rng.choice(choices)


def _bad_arguments(rng: random.Random, schema: dict[str, Any]) -> dict[str, Any]:
    properties: dict[str, Any] = schema.get("properties") or {}
    required = list(schema.get("required") or [])
    names = list(properties)
    mutation = rng.randrange(5)
    if mutation == 0 or not names:  # required arguments left out, an unknown one added
        arguments: dict[str, Any] = {"no_such_argument": rng.choice(HOSTILE_STRINGS)}
        return arguments if rng.random() < 0.5 or not required else {}
    arguments = {name: _wrong_value(rng, properties[name]) for name in required}
    for name in rng.sample(names, k=rng.randint(1, len(names))):
        arguments[name] = _wrong_value(rng, properties[name])
    if mutation == 1:
        arguments["unexpected"] = 1
    return arguments


def _reply_text(value: Any) -> str:
    return json.dumps(value, default=str, ensure_ascii=False)


def _served_with_stderr(root: Path, log: Path) -> StdioServerParameters:
    """`cue mcp --tools all` on ``root`` over stdio, its stderr written to ``log``."""
    command = " ".join(
        shlex.quote(part) for part in (CUE, "-C", str(root), "mcp", "--tools", "all")
    )
    return StdioServerParameters(
        command="sh", args=["-c", f"exec {command} 2>>{shlex.quote(str(log))}"], env=environment()
    )


async def test_generated_bad_calls_get_clean_answers(demo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    _plant(demo, outside)
    log = tmp_path / "stderr.log"
    log.touch()
    before = _fingerprint(demo, outside)
    rng = random.Random(SEED)
    problems: list[str] = []
    codes: dict[int | str, int] = {}
    async with Client(_served_with_stderr(demo, log), mode="legacy") as client:
        tools = (await client.list_tools()).tools
        assert len(tools) >= 45  # every tool: files, git, memory and the destructive ones
        calls = [(name, arguments) for name, arguments in KNOWN_CASES]
        for number in range(CALLS):
            tool = tools[number % len(tools)]
            calls.append((tool.name, _bad_arguments(rng, tool.input_schema)))
        for name, arguments in calls:
            label = f"{name}({_reply_text(arguments)[:160]})"
            try:
                with anyio.fail_after(60):
                    result = await client.call_tool(name, arguments)
            except TimeoutError:
                problems.append(f"no reply: {label}")
                continue
            except MCPError as failure:
                error = failure.error
                codes[error.code] = codes.get(error.code, 0) + 1
                text = _reply_text([error.message, error.data])
                if error.code == 1000 or "internal error" in error.message:
                    problems.append(f"internal error {error.message[:200]}: {label}")
                elif name == "no_such_tool" and error.code == -32602:
                    pass  # an unknown tool is a protocol error, as the specification says
                elif not (error.code == 429 or 1001 <= error.code <= 1999):
                    problems.append(f"non-CueDeck code {error.code} {error.message[:120]}: {label}")
            else:
                codes["ok"] = codes.get("ok", 0) + 1
                text = _reply_text([result.structured_content, result.content])
                if result.is_error:
                    problems.append(f"error result without a code {text[:200]}: {label}")
            leaked = [name for name, secret in PLANTED.items() if secret in text]
            if leaked:
                problems.append(f"leaked {leaked}: {label}")
    stderr = log.read_text(encoding="utf-8", errors="replace")
    problems += [f"stderr leaked {name}" for name, secret in PLANTED.items() if secret in stderr]
    if "Traceback" in stderr:
        problems.append("a traceback on stderr: " + stderr[stderr.index("Traceback") :][:400])
    assert not problems, f"{len(problems)} bad replies, e.g.\n" + "\n".join(problems[:15])
    assert _fingerprint(demo, outside) == before  # nothing outside, in .git or control files
    assert not Path("/tmp/PWNED").exists()
    assert not is_git_directory(str(demo))  # the root did not become a repository
    # The fuzzing reached the tools' own validation, not just one kind of refusal.
    assert len(calls) >= 1000
    assert codes.get(1004, 0) > CALLS // 3, codes
    assert codes.get(1013, 0) > 0 and codes.get("ok", 0) > 0, codes


#: Raw lines the client cannot send (lone surrogates) or would not (ids of every type).
RAW_IDS: list[Any] = [1, "two", {"a": 1}, 1.5, None, True, False, [3], -(2**63), "\u202e"]


def _raw_lines(rng: random.Random) -> list[tuple[Any, str]]:
    lines = []
    for number in range(120):
        request_id = rng.choice(RAW_IDS)
        if isinstance(request_id, int) and not isinstance(request_id, bool):
            request_id = number + 100
        arguments = rng.choice(
            [
                '{"path":"\\ud800.md"}',
                '{"query":"a\\udfffb"}',
                '{"status":' + "[" * rng.choice([5, 70, 200, 2000]) + "]" * 0 + "}",
                '{"id":"k3x9q2"}',
                f'{{"file_path":"docs/deck/access.toml","content":"{PLANTED["aws"]}"}}',
            ]
        )
        if "[" in arguments:  # close what was opened
            arguments = arguments[:-1] + "]" * arguments.count("[") + "}"
        tool = rng.choice(["read_doc", "read_context", "list_tasks", "create_file"])
        line = (
            f'{{"jsonrpc":"2.0","id":{json.dumps(request_id)},"method":"tools/call",'
            f'"params":{{"name":"{tool}","arguments":{arguments}}}}}'
        )
        lines.append((request_id, line))
    return lines


async def test_raw_hostile_lines_each_get_one_answer(demo: Path) -> None:
    rng = random.Random(SEED)
    lines = _raw_lines(rng)
    initialize = (
        '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":'
        '"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n'
        '{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
    )
    done = subprocess.run(
        [CUE, "-C", str(demo), "mcp", "--tools", "all"],
        input=initialize + "\n".join(line for _, line in lines) + "\n",
        capture_output=True,
        text=True,
        timeout=300,
        env=environment(),
        check=False,
    )
    replies = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert len(replies) == len(lines) + 1  # the initialize, and one answer per request
    expected = []  # replies come in any order: the id each request is answered with
    for sent, line in lines:
        try:
            json.loads(line)
            readable = isinstance(sent, str | int) and not isinstance(sent, bool)
        except RecursionError:  # too deep to read an id at all: -32700 with id null
            readable = False
        expected.append(json.dumps(sent if readable else None))
    assert sorted(json.dumps(reply["id"]) for reply in replies[1:]) == sorted(expected)
    for reply in replies[1:]:
        if "error" in reply:
            code = reply["error"]["code"]
            assert code in (-32700, -32600) or 1001 <= code <= 1999, reply
    text = done.stdout + done.stderr
    assert not [name for name, secret in PLANTED.items() if secret in text]
    assert "Traceback" not in done.stderr
