"""`cue mcp --team`: the command line of a team server."""

from __future__ import annotations

import subprocess
from typing import TYPE_CHECKING

from tests.mcp.conftest import CUE, environment

if TYPE_CHECKING:
    from pathlib import Path


def test_a_team_is_served_over_http_only(home: Path) -> None:
    done = subprocess.run(
        [CUE, "-C", str(home), "mcp", "--team", str(home)],
        capture_output=True, text=True, env=environment(), check=False,
    )  # fmt: skip
    assert done.returncode == 1
    assert "error[1004]" in done.stderr and "--transport http" in done.stderr
