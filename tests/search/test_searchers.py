"""Searchers are factories of the workspace: one default mode, one cap on ``limit``.

A third party's searcher is registered through ``register_searchers`` beside
cuedeck-search's (a real plugin on the host that loads the installed entry points), and
searched through ``Workspace.search``, ``read_context`` and ``cue search``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner

from cuedeck import hookimpl, open_workspace
from cuedeck.errors import InvalidInput
from cuedeck.models import SearchFilters, SearchResult
from cuedeck.plugins.host import PluginHost, make_plugin_host
from cuedeck.workspace import Workspace
from cuedeck_cli.app import make_cli
from cuedeck_search.searchers import EngineSearcher
from cuedeck_search.settings import MAX_LIMIT, SearchSettings
from cuedeck_search.tool import read_context


class TitleSearcher:
    """Files whose title holds the query, for one workspace."""

    made: ClassVar[list[Path]] = []  # the roots it was made for, one entry per factory call

    def __init__(self, workspace: Workspace) -> None:
        TitleSearcher.made.append(workspace.root)
        self.workspace = workspace

    def search(
        self, query: str, *, limit: int | None, filters: SearchFilters
    ) -> list[SearchResult]:
        if limit is not None and not 1 <= limit <= 3:
            raise InvalidInput("title search returns 1 to 3 files", field="limit")
        return [
            SearchResult(path=d.path, title=d.title, hash=d.sha256, tokens=d.tokens, score=1.0)
            for d in self.workspace.documents.values()
            if query.lower() in d.title.lower() and filters.accepts(d.frontmatter)
        ][: limit or 3]


class TitlePlugin:
    @hookimpl
    def register_searchers(self, register: Any) -> None:
        register("title", TitleSearcher)


@pytest.fixture
def host() -> PluginHost:
    """The installed plugins (cuedeck-search among them) and the third party's."""
    TitleSearcher.made.clear()
    found = make_plugin_host()
    found.register(TitlePlugin(), name="titles")
    return found


def _configure(root: Path, text: str) -> Path:
    (root / ".cuedeck" / "config.toml").write_text(text, encoding="utf-8")
    return root


def _cue_search(host: PluginHost, root: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(make_cli(host), ["-C", str(root), "search", *args])
    return result.exit_code, result.stdout + result.stderr


def test_a_third_party_searcher_is_made_once_per_workspace(
    host: PluginHost, small_workspace: Path
) -> None:
    workspace = open_workspace(small_workspace, plugins=host)
    assert [r.path for r in workspace.search("billing", mode="title")] == [
        ".cuedeck/docs/billing.md"
    ]
    workspace.search("deployment", mode="title")
    assert workspace.searcher("title") is workspace.searcher("title")
    assert TitleSearcher.made == [small_workspace]  # once, however often it searches
    other = open_workspace(small_workspace, plugins=host)
    other.search("billing", mode="title")
    assert TitleSearcher.made == [small_workspace, small_workspace]  # its own searcher
    assert host.source_of("register_searchers", "title") == "titles"
    # cuedeck-search's modes are views of the workspace's one engine.
    keyword, hybrid = workspace.searcher("keyword"), workspace.searcher("hybrid")
    assert isinstance(keyword, EngineSearcher) and isinstance(hybrid, EngineSearcher)
    assert keyword.engine is hybrid.engine is workspace.service("search")


def test_the_searcher_checks_its_own_request(host: PluginHost, small_workspace: Path) -> None:
    workspace = open_workspace(small_workspace, plugins=host)
    with pytest.raises(InvalidInput, match="1 to 3 files"):
        workspace.search("billing", mode="title", limit=4)  # core passes it on unchecked
    with pytest.raises(InvalidInput, match="unknown search mode 'fuzzy'") as caught:
        workspace.search("billing", mode="fuzzy")
    assert "title" in str(caught.value) and "keyword" in str(caught.value)


def test_one_default_mode_for_the_api_the_tool_and_the_command(
    host: PluginHost, small_workspace: Path
) -> None:
    workspace = open_workspace(small_workspace, plugins=host)
    assert workspace.default_search_mode() == SearchSettings().mode == "hybrid"
    # [search] mode may name the third party's mode: every way of searching follows it.
    root = _configure(small_workspace, '[search]\nmode = "title"\n')
    workspace = open_workspace(root, plugins=host)
    assert [r.path for r in workspace.search("billing")] == [".cuedeck/docs/billing.md"]
    reply = read_context(workspace, "billing")
    assert (reply["mode"], reply["answered_by"]) == ("title", "title")
    assert [r["path"] for r in reply["results"]] == [".cuedeck/docs/billing.md"]
    code, out = _cue_search(host, root, "billing", "--json")
    assert code == 0, out
    data = json.loads(out)
    assert (data["mode"], data["answered_by"]) == ("title", "title")
    assert [r["path"] for r in data["results"]] == [".cuedeck/docs/billing.md"]
    # and one of the engine's: the engine answers in it.
    _configure(root, '[search]\nmode = "keyword"\n')
    workspace = open_workspace(root, plugins=host)
    assert workspace.search("refunds")[0].answered_by == "keyword"
    assert read_context(workspace, "refunds")["mode"] == "keyword"
    code, out = _cue_search(host, root, "refunds", "--json")
    assert (code, json.loads(out)["mode"]) == (0, "keyword")


def test_a_default_mode_nothing_registers_is_refused_at_its_config_line(
    host: PluginHost, small_workspace: Path
) -> None:
    root = _configure(small_workspace, '[search]\nlimit = 4\nmode = "fuzzy"\n')
    for search in (
        lambda: open_workspace(root, plugins=host).search("billing"),
        lambda: read_context(open_workspace(root, plugins=host), "billing"),
    ):
        with pytest.raises(InvalidInput, match="'fuzzy'") as caught:
            search()
        assert (caught.value.data["field"], caught.value.data["line"]) == ("search.mode", 3)
        assert "title" in caught.value.message  # the modes there are, the third party's too
    code, out = _cue_search(host, root, "billing")
    assert code != 0 and "error[1004]" in out and "search.mode" in out


def test_one_cap_on_limit_refused_alike_everywhere(host: PluginHost, small_workspace: Path) -> None:
    workspace = open_workspace(small_workspace, plugins=host)
    tool = host.tools()["read_context"]
    too_many = MAX_LIMIT + 1
    refusals = {
        "Workspace.search": lambda: workspace.search("rates", mode="keyword", limit=too_many),
        "read_context in Python": lambda: read_context(workspace, "rates", too_many, "keyword"),
        "read_context served": lambda: tool.call(workspace, {"query": "x", "limit": too_many}),
    }
    for name, refused in refusals.items():
        with pytest.raises(InvalidInput) as caught:
            refused()
        assert (caught.value.code, caught.value.data["field"]) == (1004, "limit"), name
    assert len(workspace.search("the", mode="keyword", limit=MAX_LIMIT)) <= MAX_LIMIT
    code, out = _cue_search(host, small_workspace, "rates", "-n", str(too_many))
    assert code == 1 and "error[1004]" in out and f"1<=x<={MAX_LIMIT}" in out  # same range
    _configure(small_workspace, f"[search]\nlimit = {too_many}\n")
    with pytest.raises(InvalidInput, match="limit"):
        _ = open_workspace(small_workspace, plugins=host).config
