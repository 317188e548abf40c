"""The server's own parts without a client: change detection and token buckets."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from cuedeck.config import RateLimit
from cuedeck.errors import InvalidInput
from cuedeck.workspace import open_workspace
from cuedeck_mcp.errors import RateLimited
from cuedeck_mcp.freshness import Freshness
from cuedeck_mcp.ratelimit import RateLimiter

if TYPE_CHECKING:
    from pathlib import Path

    from cuedeck_mcp.asgi import Deployment
    from tests.conftest import MakeWorkspace


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_freshness_by_stamps_refreshes_only_when_something_changed(
    make_workspace: MakeWorkspace,
) -> None:
    """The fallback when no watcher can run: stamps of what the last refresh saw."""
    root = make_workspace({"docs/a.md": "# A\n", ".cuedeck/docs/b.md": "# B\n"})
    (root / "src" / "deep").mkdir(parents=True)
    workspace = open_workspace(root)
    clock = Clock()
    freshness = Freshness(workspace, watch=False, full_every=2.0, clock=clock)
    assert freshness.ensure() is True  # first call: a full refresh
    assert freshness.ensure() is False  # nothing changed
    (root / "docs" / "a.md").write_text("# A\n\nMore.\n")  # edited in place
    assert freshness.ensure() is True
    assert workspace.document("docs/a.md").line_count == 3
    (root / ".cuedeck" / "docs" / "c.md").write_text("# C\n")  # created in a known folder
    assert freshness.ensure() is True
    assert ".cuedeck/docs/c.md" in workspace.documents
    (root / "docs" / "a.md").unlink()  # deleted
    assert freshness.ensure() is True
    assert "docs/a.md" not in workspace.documents
    # A folder that never held markdown is not watched: the periodic full refresh finds it.
    (root / "src" / "deep" / "d.md").write_text("# D\n")
    assert freshness.ensure() is False
    clock.now += 2.5
    assert freshness.ensure() is True
    assert "src/deep/d.md" in workspace.documents


def test_token_bucket_refills_and_reports_when_to_retry() -> None:
    clock = Clock()
    limiter = RateLimiter({"read_doc": RateLimit(per_minute=6, burst=2)}, clock=clock)
    limiter.check("s1", "read_doc")
    limiter.check("s1", "read_doc")
    with pytest.raises(RateLimited) as caught:
        limiter.check("s1", "read_doc")
    assert caught.value.code == 429
    assert caught.value.data["retry_after_seconds"] == 10  # one token every 10 s
    assert caught.value.data["current_count"] == 2
    limiter.check("s2", "read_doc")  # another session has its own bucket
    limiter.check("s1", "list_tasks")  # an unlimited tool
    clock.now += 10
    limiter.check("s1", "read_doc")  # refilled one token
    with pytest.raises(RateLimited):
        limiter.check("s1", "read_doc")
    clock.now += 61
    assert RateLimiter({"x": RateLimit(0, 0)}).limits == {}  # 0 per minute: no limit
    limiter.check("s1", "read_doc")


def test_deployment_file_takes_lists_or_one_string_and_refuses_typos(tmp_path: Path) -> None:
    from cuedeck_mcp.asgi import CONFIG_ENV, deployment_from_environment

    (tmp_path / "api").mkdir()
    config = tmp_path / "mcp.toml"

    def load(text: str) -> Deployment:
        config.write_text(text + f'\n[workspaces]\napi = "{tmp_path / "api"}"\n')
        return deployment_from_environment({CONFIG_ENV: str(config)})

    assert load('tools = "core, git"').tools == ["core", "git"]
    assert load('tools = ["all"]\nallowed_hosts = "cuedeck.internal"').allowed_hosts == [
        "cuedeck.internal"
    ]
    assert load("").tools is None  # each workspace's own [mcp] tools
    for text, field in (
        ('tool = "all"', "tool"),
        ("tools = 3", "tools"),
        ('port = "8765"', "port"),
        ('insecure = "yes"', "insecure"),
    ):
        with pytest.raises(InvalidInput) as caught:
            load(text)
        assert caught.value.data["field"] == field, text
