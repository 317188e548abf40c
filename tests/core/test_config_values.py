"""Config values that type-check but cannot work: doctor and the command say the same."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from cuedeck_cli.app import make_cli
from tests.conftest import MakeWorkspace, needs_extras

CARD = "---\ntitle: A card\nstatus: active\n---\n# A card\n"


def _cue(root: Any, *args: str) -> Any:
    return CliRunner().invoke(make_cli(), ["-C", str(root), *args])


@pytest.mark.parametrize(
    ("config", "key", "line", "command", "reason"),
    [
        ("[scene]\ntoken_limit = 0\n", "scene.token_limit", 2, ["scene", "-d"], "at least 1"),
        pytest.param(
            "[search]\nfusion = 'rrf'\nlimit = -3\n",
            "search.limit",
            3,
            ["scene", "-d"],
            "at least",
            marks=needs_extras,
        ),
        pytest.param(
            "\n[mcp]\nport = 70000\n",
            "mcp.port",
            3,
            ["scene", "-d"],
            "at most 65535",
            marks=needs_extras,
        ),
        ("[scene]\npruner = 'squeeze'\n", "scene.pruner", 2, ["scene", "-d"], "'squeeze'"),
        ("[tokens]\ncounter = 'words'\n", "tokens.counter", 2, ["scene", "-d"], "'words'"),
    ],
)
def test_a_value_that_cannot_work_is_an_error_at_its_line(
    make_workspace: MakeWorkspace,
    config: str,
    key: str,
    line: int,
    command: list[str],
    reason: str,
) -> None:
    root = make_workspace({".cuedeck/cards/aaa111.md": CARD}, config=config)
    doctor = _cue(root, "doctor", "--json")
    ran = _cue(root, *command)
    found = [p for p in json.loads(doctor.stdout)["problems"] if p["severity"] == "error"]
    assert doctor.exit_code == 1
    assert [(p["code"], p["path"], p["line"]) for p in found] == [
        (1004, ".cuedeck/config.toml", line)
    ]
    assert key in found[0]["message"] and reason in found[0]["message"]
    assert found[0]["help"]
    assert ran.exit_code == 1
    assert ran.stderr.startswith(f"error[1004] .cuedeck/config.toml:{line}: ")
    assert key in ran.stderr and "help:" in ran.stderr


def test_an_unknown_search_mode_is_an_error_at_its_line(make_workspace: MakeWorkspace) -> None:
    pytest.importorskip("cuedeck_search")
    root = make_workspace({"docs/a.md": "# A\n"}, config="[search]\nmode = 'fuzzy'\n")
    doctor = _cue(root, "doctor", "--json")
    searched = _cue(root, "search", "anything")
    found = [p for p in json.loads(doctor.stdout)["problems"] if p["severity"] == "error"]
    assert [(p["code"], p["line"]) for p in found] == [(1004, 2)]
    assert "'fuzzy'" in found[0]["message"] and "hybrid" in found[0]["message"]
    assert searched.exit_code == 1
    assert searched.stderr.startswith("error[1004] .cuedeck/config.toml:2: ")
