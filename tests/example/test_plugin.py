"""The example plugin, end to end: its config section, its error, its rate-limited tool
and its tryfirst masker, each through what a user or an agent really runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cuedeck import hookimpl
from cuedeck.plugins.host import PluginHost
from cuedeck.workspace import open_workspace
from cuedeck_cli.app import make_cli
from tests.conftest import REPO, MakeWorkspace, needs_extras

pytestmark = needs_extras

Client = pytest.importorskip("fastmcp").Client
MCPError = pytest.importorskip("mcp").MCPError

KEY = "exk_4eC39HqLyjWDarjtT1zdp7dcTYooMQau"


def _cue(root: Path, *args: str) -> Any:
    return CliRunner().invoke(make_cli(), ["-C", str(root), *args])


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    root = tmp_path / "demo"
    ignore = shutil.ignore_patterns(".cache", "state.json")
    shutil.copytree(REPO / "examples" / "demo", root, ignore=ignore)
    return root


def test_its_section_is_written_by_init_checked_by_doctor_and_read_by_its_tool(
    make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    assert _cue(fresh, "init").exit_code == 0
    template = (fresh / ".cuedeck" / "config.toml").read_text(encoding="utf-8")
    assert "[example]\n# word_count refuses a doc with fewer words" in template
    assert "# min_words = 0\n" in template

    root = make_workspace({"docs/short.md": "# Short\n\nFive words in this doc.\n"})
    assert json.loads(_cue(root, "word-count", "docs/short.md", "--json").output)["words"] == 7

    (root / ".cuedeck" / "config.toml").write_text("[example]\nmin_words = -1\n")
    report = json.loads(_cue(root, "doctor", "--json").output)
    assert [(p["code"], p["line"]) for p in report["problems"]] == [(1004, 2)]
    assert "example.min_words" in report["problems"][0]["message"]


def test_its_error_has_its_own_code_in_the_cli_python_and_mcp(
    make_workspace: MakeWorkspace,
) -> None:
    from cuedeck_example_plugin.errors import TooFewWords

    root = make_workspace(
        {"docs/short.md": "# Short\n\nFive words in this doc.\n"},
        config="[example]\nmin_words = 100\n",
    )
    failed = _cue(root, "word-count", "docs/short.md", "--json")
    assert failed.exit_code == 1
    error = json.loads(failed.output)["error"]
    assert (error["code"], error["words"], error["min_words"]) == (1040, 7, 100)

    workspace = open_workspace(root)
    with pytest.raises(TooFewWords) as caught:
        workspace.plugins.tools()["word_count"].call(workspace, {"path": "docs/short.md"})
    assert caught.value.code == 1040


@pytest.mark.anyio
async def test_its_tool_is_rate_limited_as_registered_and_config_overrides_it(
    demo: Path,
) -> None:
    from cuedeck_mcp.paths import RATE_LIMITS_DB
    from cuedeck_mcp.server import build_server

    arguments = {"path": "docs/deployment.md"}
    async with Client(build_server(open_workspace(demo))) as client:
        for _ in range(20):  # the burst it declared
            await client.call_tool("word_count", arguments)
        with pytest.raises(MCPError) as caught:
            await client.call_tool("word_count", arguments)
    assert caught.value.error.code == 429
    assert caught.value.error.data["limit"] == 60

    # Buckets persist across restarts (a restart refills nothing): start this phase full.
    (demo / RATE_LIMITS_DB).unlink()
    config = demo / ".cuedeck" / "config.toml"
    config.write_text(
        config.read_text() + "\n[rate_limits.word_count]\nper_minute = 1\nburst = 1\n"
    )
    async with Client(build_server(open_workspace(demo))) as client:
        await client.call_tool("word_count", arguments)
        with pytest.raises(MCPError) as caught:
            await client.call_tool("word_count", arguments)
    assert caught.value.error.data["limit"] == 1


class _SameMaskerNotFirst:
    """The example's masker registered without ``tryfirst``."""

    @hookimpl
    def register_maskers(self, register: Any) -> None:
        from cuedeck_example_plugin import ExampleKeyMasker

        register("example-key", ExampleKeyMasker())


def test_its_tryfirst_masker_names_a_secret_a_builtin_rule_also_matches(
    make_workspace: MakeWorkspace,
) -> None:
    root = make_workspace(
        {
            ".cuedeck/cards/abc123.md": "---\nstatus: active\n---\n# Card\n\n@docs/keys.md\n",
            "docs/keys.md": f"# Keys\n\nkey: {KEY}\n\nalone {KEY} here\n",
        }
    )
    scene = _cue(root, "scene", "-d")
    assert scene.exit_code == 0, scene.output
    # Called first, its rule names the span the generic built-in rule matches as well.
    assert "key: [REDACTED:example-key#1]" in scene.output
    assert KEY not in scene.output

    # The same masker without tryfirst, loaded as an entry point is (before core, so
    # called after it): core's maskers are called first and their rule names the secret.
    plugins = PluginHost()
    plugins.register(_SameMaskerNotFirst(), name="not-first")
    plugins.load_defaults()
    masked = open_workspace(root, plugins=plugins).mask(f"key: {KEY}")
    assert masked == "key: [REDACTED:secret-assignment#1]"


def test_cue_plugins_json_shows_what_it_registers(make_workspace: MakeWorkspace) -> None:
    report = json.loads(_cue(make_workspace(), "plugins", "--json").output)
    example = next(p for p in report["plugins"] if p["name"] == "example")
    assert example["hooks"] == [
        "register_commands",
        "register_maskers",
        "register_parsers",
        "register_settings",
        "register_tools",
    ]
    assert example["markers"] == {"register_maskers": ["tryfirst"]}
    assert example["errors"] == {"TooFewWords": 1040}
    registered = report["registered"]
    assert registered["settings"]["example"] == "example"
    assert registered["tools"]["word_count"] == "example"
    assert list(registered["maskers"]) == ["example-key", "builtin"]  # tryfirst: first
    assert report["rate_limits"]["word_count"] == {"per_minute": 60, "burst": 20}
