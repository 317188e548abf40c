"""The idle limits the README and docs give for background processes are the defaults."""

from __future__ import annotations

import attrs

from tests.conftest import REPO, needs_extras


@needs_extras
def test_the_idle_limits_the_pages_give_are_the_settings_defaults() -> None:
    from cuedeck.settings import WatchSettings
    from cuedeck_mcp.settings import McpSettings

    watcher = attrs.fields(WatchSettings).watcher_idle_seconds.default
    resident = attrs.fields(McpSettings).resident_seconds.default
    for page in ("README.md", "docs/freshness.md", "docs/mcp.md"):
        text = (REPO / page).read_text(encoding="utf-8")
        assert f"`[mcp] resident_seconds` ({resident})" in text, page
        if page != "docs/mcp.md":
            assert f"`[watch] watcher_idle_seconds` ({watcher})" in text, page
