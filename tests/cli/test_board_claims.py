"""The board shows who holds which card, since and until when, as claims come and go."""

from __future__ import annotations

import shutil
import subprocess
from datetime import datetime
from pathlib import Path

import pytest

# What the board's own tests need (they skip without it): imported from there below.
for module in ("cuedeck_tasks", "playwright.sync_api", "httpx2"):
    pytest.importorskip(module)

from tests.cli.test_board import CUE, DEMO, _browsed, _served  # noqa: E402
from tests.cli.test_board import pytestmark as board_marks  # noqa: E402

pytestmark = board_marks  # slow, and skipped without Debian's chromium (as the board's)


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    root = tmp_path / "demo"
    shutil.copytree(DEMO, root, ignore=shutil.ignore_patterns(".cache", "state.json"))
    return root


def _cue(root: Path, *args: str) -> str:
    done = subprocess.run(
        [CUE, "-C", str(root), *args], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_claim_shows_on_its_card_while_the_page_is_open(demo: Path) -> None:
    with _served(demo) as address, _browsed(address) as (tab, errors):
        card = tab.locator('.card[data-id="w4n8t1"]')
        assert card.locator(".claim").count() == 0
        _cue(demo, "card", "claim", "w4n8t1", "--agent", "robot-7", "--lease", "600",
             "--path", "src/refunds.py")  # fmt: skip
        # The claims file changed: the page hears it and loads the cards again.
        claim = card.locator(".claim")
        claim.wait_for()
        text = claim.inner_text()
        assert text.startswith("held by robot-7 · since ") and " · until " in text
        title = claim.get_attribute("title") or ""
        assert "src/refunds.py" in title
        since, until = title.split(" since ")[1].split("; ")[0].split(" until ")
        lease = datetime.fromisoformat(until[:-1]) - datetime.fromisoformat(since[:-1])
        assert lease.total_seconds() == pytest.approx(600, abs=0.01)
        shown = _cue(demo, "card", "show", "w4n8t1")
        assert "held by" in shown and "robot-7" in shown and until in shown
        _cue(demo, "card", "release", "w4n8t1", "--agent", "robot-7")
        card.locator(".claim").wait_for(state="detached")
        assert errors == []
