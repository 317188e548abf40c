"""Every byte the CLI prints is masked, whatever printed it: one exit point."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from cuedeck_cli.app import make_cli
from tests.conftest import MakeWorkspace

KEY = "sk_live_4eC39HqLyjWDarjtT1zdp7dcTYooMQauvdEDq54NiTphI7jx"
PASSWORD = "Hunter2Hunter2xyzzy"


def _cue(*args: str) -> object:
    return CliRunner().invoke(make_cli(), list(args))


def test_card_list_masks_what_card_show_masks(make_workspace: MakeWorkspace) -> None:
    pytest.importorskip("cuedeck_tasks")
    card = f"---\ntitle: rotate {KEY}\nstatus: todo\ntags: [{KEY}]\n---\n# rotate\n"
    root = str(make_workspace({".cuedeck/cards/aaa111.md": card}))
    for args in (["card", "list"], ["card", "list", "--json"], ["card", "show", "aaa111"]):
        result = _cue("-C", root, *args)
        assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
        assert KEY not in result.output  # type: ignore[attr-defined]
        assert "[REDACTED:stripe-secret-key#1]" in result.output  # type: ignore[attr-defined]
    listed = json.loads(_cue("-C", root, "card", "list", "--json").stdout)  # type: ignore[attr-defined]
    assert listed[0]["title"] == "rotate [REDACTED:stripe-secret-key#1]"


def test_an_error_echoing_a_normalised_argument_is_masked(make_workspace: MakeWorkspace) -> None:
    pytest.importorskip("cuedeck_example_plugin")
    root = str(make_workspace({"docs/a.md": "# A\n"}))
    url = f"postgres://ledger:{PASSWORD}@db.internal:5432/ledger.md"
    # word-count normalises its path (// becomes /, which the database-URL rule no
    # longer matches) and echoes it in its error; the command line is learnt first.
    normalised = _cue("-C", root, "word-count", url)
    echoed = _cue("-C", root, "scene", url)
    outside = _cue("-C", f"/nonexistent/{url}", "doctor")  # no workspace to mask with
    assert "postgres:/ledger:" in normalised.output  # type: ignore[attr-defined]
    for done in (normalised, echoed, outside):
        assert done.exit_code == 1  # type: ignore[attr-defined]
        assert PASSWORD not in done.output  # type: ignore[attr-defined]
        assert "[REDACTED:" in done.output  # type: ignore[attr-defined]
