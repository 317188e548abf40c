"""Hundreds of generated bad calls across every tool, through the real stdio client.

Every reply must be a valid result or a JSON-RPC error with a CueDeck code (never an
internal error, never a missing reply), and no planted secret may appear in any reply,
even when a call sends the secret itself as an argument.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import MCPError
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from tests.mcp.conftest import CUE, environment

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

CALLS = 520
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
    "zero\u200bwidth",
    "x" * 100_000,
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
    f"postgres://ledger:{PLANTED['password']}@db.internal:5432/ledger",
    PLANTED["aws"],
    f"token {PLANTED['github']}",
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
]
HOSTILE_NUMBERS = [-1, 0, 1, -(2**63), 2**63, 2**64 + 1, 10**300, 3.5, float("1e308")]


def _plant(root: Path) -> None:
    cards = root / ".cuedeck" / "cards"
    (cards / "fz0001.md").write_text(
        f"---\ntitle: rotate {PLANTED['aws']}\nstatus: todo\npriority: high\n"
        f"tags: [fuzz]\n---\nUse {PLANTED['github']} for the mirror.\n"
    )
    (root / ".cuedeck" / "docs" / "vault.md").write_text(
        "# Vault\n\n## Database\n\n"
        f"DATABASE_URL=postgres://app:{PLANTED['password']}@db.internal:5432/app\n"
    )
    config = root / ".cuedeck" / "config.toml"
    limits = "".join(
        f"\n[rate_limits.{tool}]\nper_minute = 0\nburst = 0\n"
        for tool in ("read_context", "read_doc", "list_tasks", "update_task")
    )
    config.write_text(config.read_text() + limits)


#: Calls the issue reported as internal errors: always part of the run.
KNOWN_CASES: list[tuple[str, dict[str, Any]]] = [
    ("list_tasks", {"created": "9999999999d"}),
    ("list_tasks", {"updated": ">99999999999999999999w"}),
    ("read_doc", {"path": "docs/a\x00pi.md"}),
    ("read_context", {"query": "x\x00y"}),
    ("get_task_dependencies", {"id": "k3x9q2", "reverse": "yes"}),
    ("update_task", {"id": "k3x9q2", "title": "bidi \u202e override"}),
]


def _wrong_value(rng: random.Random, schema: dict[str, Any]) -> Any:
    """A value that is wrong, or hostile, for a property of ``schema``."""
    kind = schema.get("type")
    choices: list[Any] = [
        None,
        True,
        [],
        {},
        {"nested": {"deeper": [1, "two", None]}},
        [[[[[[[[[[["deep"]]]]]]]]]]],
        rng.choice(HOSTILE_NUMBERS),
        rng.choice(HOSTILE_STRINGS),
    ]
    if kind == "string" or "enum" in schema:
        choices += [rng.choice(HOSTILE_STRINGS) for _ in range(3)]
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


async def test_generated_bad_calls_get_clean_answers(demo: Path) -> None:
    _plant(demo)
    rng = random.Random(SEED)
    params = StdioServerParameters(
        command=CUE, args=["-C", str(demo), "mcp", "--tools", "all"], env=environment()
    )
    problems: list[str] = []
    codes: dict[int | str, int] = {}
    async with Client(params, mode="legacy") as client:
        tools = (await client.list_tools()).tools
        assert len(tools) >= 14  # every tool: the file tools too
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
                elif not (error.code == 429 or 1001 <= error.code <= 1099):
                    problems.append(f"non-CueDeck code {error.code} {error.message[:120]}: {label}")
            else:
                codes["ok"] = codes.get("ok", 0) + 1
                text = _reply_text([result.structured_content, result.content])
                if result.is_error:
                    problems.append(f"error result without a code {text[:200]}: {label}")
            leaked = [name for name, secret in PLANTED.items() if secret in text]
            if leaked:
                problems.append(f"leaked {leaked}: {label}")
    assert not problems, f"{len(problems)} bad replies, e.g.\n" + "\n".join(problems[:15])
    # The fuzzing reached the tools' own validation, not just one kind of refusal.
    assert codes.get(1004, 0) > CALLS // 3, codes
