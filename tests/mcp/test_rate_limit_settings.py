"""``[rate_limits.<tool>]``: the MCP plugin's settings, over what each tool declares."""

from __future__ import annotations

import pytest

from cuedeck import open_workspace
from cuedeck.config import load_config
from cuedeck.errors import InvalidInput
from cuedeck.plugins.host import make_plugin_host
from cuedeck.settings import RateLimit
from cuedeck_mcp.settings import RateLimitSettings, rate_limits
from tests.conftest import MakeWorkspace, needs_extras

pytestmark = needs_extras


def test_declared_limits_apply_without_a_table(make_workspace: MakeWorkspace) -> None:
    limits = rate_limits(open_workspace(make_workspace()))
    assert limits["read_context"] == RateLimit(10, 15)  # declared where each tool registers
    assert limits["read_doc"] == RateLimit(30, 50)


def test_a_table_overrides_the_declared_limit(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(config="[rate_limits.read_doc]\nper_minute = 5\nburst = 6\n")
    workspace = open_workspace(root)
    assert workspace.config.section("rate_limits", RateLimitSettings).limits == {
        "read_doc": RateLimit(5, 6)
    }
    limits = rate_limits(workspace)
    assert limits["read_doc"] == RateLimit(5, 6)
    assert limits["read_context"] == RateLimit(10, 15)


def test_a_bad_table_names_its_key_and_line(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(config="[rate_limits.read_doc]\nper_minute = 'x'\n")
    with pytest.raises(InvalidInput) as caught:
        load_config(root, environ={})
    assert caught.value.data["field"] == "rate_limits.read_doc"
    assert caught.value.line == 1


def test_without_the_mcp_plugin_core_has_no_rate_limits(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(config="[rate_limits.read_doc]\nper_minute = 5\n")
    config = load_config(root, environ={}, plugins=make_plugin_host(entry_points=False))
    assert "rate_limits" not in config.sections
    assert [w.message for w in config.warnings] == [
        "unknown config section [rate_limits] (ignored)"
    ]
