"""Agents racing for cards over MCP, as separate processes: every card done exactly once,
no card held by two agents at any moment, expired claims taken over within one lease
(all checked from the audit trail). A short run of benchmarks/claims.py's race; the
benchmark runs 16 agents on 200 cards for a minute and reports the speed."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("cuedeck_mcp")

from benchmarks.claims import audit, figures, make_workspace, race, takeover_calls

LEASE = 2.0


@pytest.mark.slow
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_racing_agents_do_every_card_exactly_once(transport: str, tmp_path: Path) -> None:
    root = tmp_path / "race"
    make_workspace(root, 40, priorities=("medium",))
    run = race(
        root, transport=transport, agents=8, lease=LEASE, work=(0.0, 0.3), die=0.1, seconds=240
    )
    checked = audit(root, LEASE)
    report = figures(run, checked)
    assert checked["done_once"] == 40, report
    assert checked["done_twice"] == checked["never_done"] == checked["not_done_on_disk"] == []
    assert checked["overlaps"] == [], report  # never two holders of one card at once
    died = [r for r in run["records"] if r["event"] == "died"]
    assert died, "no agent died: raise die or the card count"
    assert len(checked["takeovers"]) >= len(died) - 1  # the last may die after all is done
    # Each expired card was taken over by a next_task call made within one lease of the
    # expiry: agents with nothing to do ask every lease/8, and an expired card goes first.
    late = [delay for delay in takeover_calls(run, checked) if delay > LEASE]
    assert late == [], report
