"""`cue search`: readable and JSON output, options, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cuedeck_cli.app import make_cli


def run(root: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(make_cli(), ["-C", str(root), "search", *args])
    return result.exit_code, result.stdout, result.stderr


def test_json_output(small_workspace: Path) -> None:
    code, out, _ = run(small_workspace, "refresh_access_token", "--mode", "keyword", "--json")
    assert code == 0, out
    data = json.loads(out)
    assert (data["query"], data["mode"]) == ("refresh_access_token", "keyword")
    assert (data["answered_by"], data["semantic_coverage"]) == ("keyword", None)
    first = data["results"][0]
    assert set(first) == {
        "path", "title", "hash", "tokens", "anchors", "line", "score",
        "keyword_score", "semantic_score", "semantic_coverage", "answered_by", "snippet",
    }  # fmt: skip
    assert first["answered_by"] == "keyword"
    assert first["path"] == ".cuedeck/docs/auth.md"
    assert first["anchors"][0] == "Token refresh"
    assert "refresh_access_token()" in first["snippet"]


def test_readable_output_shows_path_line_anchor_score_and_snippet(small_workspace: Path) -> None:
    code, out, _ = run(small_workspace, "refunds", "--mode", "keyword")
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0].startswith(" 1. .cuedeck/docs/billing.md:")
    assert "§ Refunds" in lines[0]
    assert "A refund returns money" in lines[1]


def test_filters_and_limit(small_workspace: Path) -> None:
    code, out, _ = run(
        small_workspace, "rates tests", "--mode", "keyword", "--tag", "ci", "--tag", "payments",
        "--assignee", "alice", "--json",
    )  # fmt: skip
    assert code == 0, out
    assert [r["path"] for r in json.loads(out)["results"]] == [".cuedeck/cards/a1b2c3.md"]
    code, out, _ = run(small_workspace, "rates refunds", "--mode", "keyword", "-n", "1", "--json")
    assert code == 0
    assert len(json.loads(out)["results"]) == 1


def test_no_result_is_said_plainly(small_workspace: Path) -> None:
    code, out, _ = run(small_workspace, "xylophone", "--mode", "keyword")
    assert (code, out.strip()) == (0, "no results for 'xylophone' (keyword)")


@pytest.mark.parametrize(
    ("args", "message"),
    [(("x", "--mode", "fuzzy"), "fuzzy"), (("x", "--limit", "0"), "--limit")],
)
def test_bad_options_are_usage_errors(
    small_workspace: Path, args: tuple[str, ...], message: str
) -> None:
    code, _, err = run(small_workspace, *args)
    assert code == 1  # like every other failure (docs/errors.md)
    assert err.startswith("error[1004]")
    assert message in err


def test_an_empty_query_is_error_1004(small_workspace: Path) -> None:
    code, _, err = run(small_workspace, "  ")
    assert code == 1
    assert "error[1004]" in err
