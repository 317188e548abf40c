"""What `cue search` shows for code: the line beside an anchor is where that anchor starts."""

from __future__ import annotations

from click.testing import CliRunner

from cuedeck import open_workspace
from cuedeck_cli.app import make_cli
from tests.conftest import MakeWorkspace, needs

MODULE = (
    '"""Retries: how often a request is retried after a timeout."""\n'
    "\n"
    "import time\n"
    "\n"
    "\n"
    "def send(request):\n"
    '    """Send once; the caller counts retries."""\n'
    "    return request\n"
)


@needs("cuedeck_search")
def test_a_module_head_that_matches_best_does_not_borrow_a_functions_name(
    make_workspace: MakeWorkspace,
) -> None:
    root = make_workspace({"client.py": MODULE})
    (result,) = open_workspace(root).search("retries timeout", mode="keyword", limit=1)
    # The module's docstring matches both words, send() only one: the result still points
    # at a named place, and its line is where that name starts.
    assert result.anchors[0] == "send"
    assert result.line == 6
    shown = CliRunner().invoke(
        make_cli(), ["-C", str(root), "search", "retries timeout", "--mode", "keyword"]
    )
    assert shown.exit_code == 0
    assert shown.output.splitlines()[0].startswith(" 1. client.py:6  § send  ")
