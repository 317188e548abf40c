"""Loading .cuedeck/config.toml: defaults, errors naming key and line, env overrides."""

from __future__ import annotations

import logging
import re
import tomllib
from collections.abc import Iterator
from typing import Any

import attrs
import pytest

from cuedeck import hookimpl
from cuedeck.config import (
    load_config,
    registered_sections,
    render_default_config,
    toml_key,
)
from cuedeck.errors import CueError, InvalidInput
from cuedeck.plugins.host import make_plugin_host
from cuedeck.settings import TableSection, setting
from tests.conftest import REPO, MakeWorkspace, needs_extras


@needs_extras
def test_defaults_without_a_file(make_workspace: MakeWorkspace) -> None:
    from cuedeck_search.settings import SearchSettings

    config = load_config(make_workspace(), environ={})
    assert config.scene.token_limit == 32000
    assert config.watch.debounce_ms == 500
    assert config.section("search", SearchSettings).mode == "hybrid"
    assert config.index.include == ["**/*"]
    assert config.masking.enabled is True
    assert config.warnings == ()


def test_core_alone_has_core_sections(make_workspace: MakeWorkspace) -> None:
    config = load_config(make_workspace(), environ={}, plugins=make_plugin_host(entry_points=False))
    assert list(config.sections) == [
        "scene",
        "index",
        "tokens",
        "watch",
        "masking",
        "files",
        "docs",
    ]
    with pytest.raises(CueError, match=r"no installed plugin has the config section \[search\]"):
        config.section("search")


@needs_extras
def test_values_from_the_file(make_workspace: MakeWorkspace) -> None:
    from cuedeck_search.settings import SearchSettings

    root = make_workspace(
        config='[scene]\ntoken_limit = 8000\nglobal = ["a.md"]\n[search]\nsemantic_weight = 1\n'
    )
    config = load_config(root, environ={})
    assert config.scene.token_limit == 8000
    assert config.scene.global_docs == ["a.md"]
    assert config.section("search", SearchSettings).semantic_weight == 1.0


def test_unknown_keys_are_warnings_with_lines(make_workspace: MakeWorkspace) -> None:
    text = "[scene]\ntoken_limit = 100\ncolour = 'red'\n\n[nonsense]\nx = 1\n"
    root = make_workspace(config=text)
    config = load_config(root, environ={})
    found = {(w.message, w.line) for w in config.warnings}
    assert found == {
        ("unknown config key 'scene.colour' (ignored)", 3),
        ("unknown config section [nonsense] (ignored)", 5),
    }
    assert all(w.severity == "warning" for w in config.warnings)


def test_wrong_type_names_the_key_and_line(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(config="[scene]\npruner = 'greedy'\ntoken_limit = 'lots'\n")
    with pytest.raises(InvalidInput) as caught:
        load_config(root, environ={})
    error = caught.value
    assert error.code == 1004
    assert error.data["field"] == "scene.token_limit"
    assert error.path == ".cuedeck/config.toml"
    assert error.line == 3
    assert "expected an integer" in error.message


@needs_extras
def test_bad_choice_is_rejected(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(config="[search]\nfusion = 'average'\n")
    with pytest.raises(InvalidInput, match="expected one of rrf, weighted"):
        load_config(root, environ={})


def test_toml_syntax_error_names_the_line(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(config="[scene]\ntoken_limit = 100\nbroken = = 3\n")
    with pytest.raises(InvalidInput) as caught:
        load_config(root, environ={})
    assert caught.value.line == 3
    assert "not valid TOML" in caught.value.message


@needs_extras
def test_environment_overrides_the_file(make_workspace: MakeWorkspace) -> None:
    from cuedeck_search.settings import SearchSettings

    root = make_workspace(config="[scene]\ntoken_limit = 100\n")
    config = load_config(
        root,
        environ={
            "CUEDECK_SCENE_TOKEN_LIMIT": "16000",
            "CUEDECK_SCENE_CLIPBOARD": "off",
            "CUEDECK_INDEX_EXCLUDE": "vendor/, tmp/",
            "CUEDECK_SEARCH_KEYWORD_WEIGHT": "0.5",
            "CUEDECK_MASKING_ALLOW_VALUES": '["a", "b"]',
            "CUEDECK_MCP_TOKEN": "not a config key, ignored",
        },
    )
    assert config.scene.token_limit == 16000
    assert config.scene.clipboard is False
    assert config.index.exclude == ["vendor/", "tmp/"]
    assert config.section("search", SearchSettings).keyword_weight == 0.5
    assert config.masking.allow_values == ["a", "b"]


def test_bad_environment_value_names_the_variable(make_workspace: MakeWorkspace) -> None:
    with pytest.raises(InvalidInput) as caught:
        load_config(make_workspace(), environ={"CUEDECK_WATCH_DEBOUNCE_MS": "soon"})
    assert caught.value.data["field"] == "CUEDECK_WATCH_DEBOUNCE_MS"


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("CUEDECK_SCENE_TOKEN_LIMIT", "lots", "expected an integer"),
        pytest.param(
            "CUEDECK_SEARCH_KEYWORD_WEIGHT", "heavy", "expected a number", marks=needs_extras
        ),
        ("CUEDECK_INDEX_EXCLUDE", '["a", ', 'expected a list such as a,b or ["a", "b"]'),
        ("CUEDECK_MASKING_ENABLED", "maybe", "expected true or false"),
    ],
)
def test_bad_environment_values_say_what_is_expected_in_cuedecks_words(
    make_workspace: MakeWorkspace, name: str, value: str, expected: str
) -> None:
    with pytest.raises(InvalidInput) as caught:
        load_config(make_workspace(), environ={name: value})
    error = caught.value
    assert error.message == f"environment variable {name} has a bad value {value!r}: {expected}"
    assert "invalid literal" not in error.message and "could not convert" not in error.message
    assert error.help is not None and error.help.startswith(f"fix or unset {name}")


def test_a_section_appended_to_the_template_is_valid(make_workspace: MakeWorkspace) -> None:
    text = (
        render_default_config() + "\n[scene]\ntoken_limit = 16000\n\n[watch]\ndebounce_ms = 900\n"
    )
    config = load_config(make_workspace(config=text), environ={})
    assert config.scene.token_limit == 16000
    assert config.watch.debounce_ms == 900
    assert config.warnings == ()


def test_a_table_declared_twice_says_how_to_merge_not_to_overwrite(
    make_workspace: MakeWorkspace,
) -> None:
    root = make_workspace(config="[scene]\nformat = 'xml'\n\n[scene]\ntoken_limit = 5\n")
    with pytest.raises(InvalidInput) as caught:
        load_config(root, environ={})
    assert caught.value.line == 4
    assert caught.value.help == (
        "[scene] appears twice: move the keys of the second [scene] into the first "
        "and delete the second header"
    )
    assert "--force" not in (caught.value.help or "")


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.fixture
def logged() -> Iterator[list[str]]:
    records = Records()
    logger = logging.getLogger("cuedeck")
    logger.addHandler(records)
    try:
        yield records.messages
    finally:
        logger.removeHandler(records)


def test_a_misspelled_key_is_warned_once_where_it_is_read(
    make_workspace: MakeWorkspace, logged: list[str]
) -> None:
    root = make_workspace(
        config="pruner = 'greedy'\n[scene]\ntoken_limt = 8000\n\n[maskng]\nenabled = true\n"
    )
    first = load_config(root, environ={})
    load_config(root, environ={})  # once per process
    assert logged == [
        ".cuedeck/config.toml:1: unknown config key 'pruner' (ignored); "
        "it belongs under [scene]: uncomment or add that header",
        ".cuedeck/config.toml:3: unknown config key 'scene.token_limt' (ignored); "
        "did you mean 'scene.token_limit'?",
        ".cuedeck/config.toml:5: unknown config section [maskng] (ignored); "
        "did you mean [masking]?",
    ]
    assert [p.line for p in first.warnings] == [1, 3, 5]


@needs_extras
def test_default_config_is_valid_commented_toml(make_workspace: MakeWorkspace) -> None:
    from cuedeck_mcp.settings import declared_rate_limits

    text = render_default_config()
    assert all(table == {} for table in tomllib.loads(text).values())  # keys commented out
    uncommented = re.sub(r"(?m)^# (\[[\w.]+\]|\w+ = .*)$", r"\1", text)
    parsed = tomllib.loads(uncommented)
    assert parsed["scene"]["token_limit"] == 32000
    assert parsed["scene"]["global"] == []
    assert parsed["watch"]["debounce_ms"] == 500
    assert parsed["rate_limits"]["read_doc"] == {"per_minute": 30, "burst": 50}
    assert parsed["rate_limits"]["read_context"] == {"per_minute": 10, "burst": 15}
    assert parsed["search"]["mode"] == "hybrid"  # a plugin's section, shown like core's
    root = make_workspace(config=uncommented)
    config = load_config(root, environ={})
    default = load_config(make_workspace(config=""), environ={})
    assert config.warnings == ()
    # Every key at its default; the rate limits written out are those the tools declare.
    assert config.section("rate_limits").limits == declared_rate_limits(make_plugin_host())
    unlimited = {**config.sections, "rate_limits": default.section("rate_limits")}
    assert attrs.evolve(config, sections=unlimited) == default


@needs_extras
def test_every_key_is_documented() -> None:
    """Every section of CueDeck's own plugins (a third party documents its own)."""
    docs = (REPO / "docs" / "config.md").read_text(encoding="utf-8")
    pm = make_plugin_host()
    for section, cls in registered_sections(pm).items():
        if pm.source_of("register_settings", section) == "example":
            continue
        if issubclass(cls, TableSection):  # its keys are names the user picks
            assert f"## `[{section}.<" in docs, section
            continue
        body = docs.split(f"## `[{section}]`", 1)[1].split("\n## ", 1)[0]
        for field in attrs.fields(cls):
            assert f"| `{toml_key(field.name)}` |" in body, f"{section}.{field.name}"


@needs_extras
def test_a_list_may_be_one_comma_separated_string(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(config='[mcp]\ntools = "core, git"\n[scene]\nglobal = "a.md"\n')
    config = load_config(root, environ={})
    assert config.section("mcp").tools == ["core", "git"]
    assert config.scene.global_docs == ["a.md"]


@needs_extras
def test_a_plugin_section_is_read_typed_not_by_attribute(make_workspace: MakeWorkspace) -> None:
    from cuedeck_git.settings import GitSettings

    config = load_config(make_workspace(config="[git]\ntimeout = 5\n"), environ={})
    assert config.section("git", GitSettings).timeout == 5.0
    with pytest.raises(AttributeError):  # a plugin's section is read by name, typed
        _ = config.git  # type: ignore[attr-defined]
    with pytest.raises(InvalidInput, match=r"\[git\] is a GitSettings, not a SceneSettings"):
        config.section("git", type(config.scene))
    with pytest.raises(AttributeError):
        _ = config.nonsense  # type: ignore[attr-defined]


@needs_extras
def test_a_moved_key_still_applies_with_a_warning(make_workspace: MakeWorkspace) -> None:
    text = "[scene]\nmemory = false\n\n[mcp]\nread_doc_max_tokens = 900\n"
    config = load_config(make_workspace(config=text), environ={})
    assert config.section("memory").scene is False
    assert config.docs.max_tokens == 900
    assert {(w.message, w.line) for w in config.warnings} == {
        ("config key 'scene.memory' has moved to 'memory.scene'", 2),
        ("config key 'mcp.read_doc_max_tokens' has moved to 'docs.max_tokens'", 5),
    }
    # The new key wins over the old one; the old environment variable still works.
    both = "[scene]\nmemory = false\n[memory]\nscene = true\n"
    assert load_config(make_workspace(config=both), environ={}).section("memory").scene is True
    env = load_config(make_workspace(), environ={"CUEDECK_SCENE_MEMORY": "off"})
    assert env.section("memory").scene is False


@attrs.frozen
class _Wrapped:
    """``[wrapped]``: a section whose docstring, like its keys' help,
    runs over two lines.

    A second paragraph, left out of config.toml."""

    key: int = setting(1, "Help text that a plugin\n    wrapped.")


class _WrappedPlugin:
    @hookimpl
    def register_settings(self, register: Any) -> None:
        register("wrapped", _Wrapped)


def test_default_config_comments_stay_on_their_lines() -> None:
    host = make_plugin_host(entry_points=False)
    host.register(_WrappedPlugin(), name="wrapped")
    text = render_default_config(host)
    assert tomllib.loads(text) == {}  # nothing escaped its comment
    assert (
        "# A section whose docstring, like its keys' help, runs over two lines.\n"
        "# [wrapped]\n# Help text that a plugin wrapped.\n# key = 1\n"
    ) in text


@attrs.frozen
class _Aliases:
    """``[aliases.<name>]``: names the user picks, each a table of its own."""

    targets: dict[str, str] = attrs.field(factory=dict)

    @classmethod
    def from_table(cls, table: dict[str, Any], fail: Any) -> _Aliases:
        targets = {}
        for name, spec in table.items():
            if not isinstance(spec, dict) or not isinstance(spec.get("to"), str):
                raise fail(f"aliases.{name}", "expected a table with to", spec)
            targets[name] = spec["to"]
        return cls(targets)

    @classmethod
    def template(cls, plugins: Any) -> list[str]:
        return ["# [aliases.<name>]", '# to = "target"']


class _AliasPlugin:
    @hookimpl
    def register_settings(self, register: Any) -> None:
        register("aliases", _Aliases)


def test_a_section_of_named_tables_reads_its_own_table(make_workspace: MakeWorkspace) -> None:
    host = make_plugin_host(entry_points=False)
    host.register(_AliasPlugin(), name="aliases")
    assert isinstance(_Aliases, type) and issubclass(_Aliases, TableSection)
    text = '[scene]\ntoken_limit = 900\n\n[aliases.docs]\nto = "docs/"\n'
    config = load_config(make_workspace(config=text), environ={}, plugins=host)
    assert config.section("aliases", _Aliases).targets == {"docs": "docs/"}
    assert config.warnings == ()
    empty = load_config(make_workspace(), environ={}, plugins=host)
    assert empty.section("aliases", _Aliases) == _Aliases()
    assert '# [aliases.<name>]\n# to = "target"\n' in render_default_config(host)
    root = make_workspace(config="[scene]\ntoken_limit = 900\n[aliases.docs]\nto = 3\n")
    with pytest.raises(InvalidInput) as caught:
        load_config(root, environ={}, plugins=host)
    assert caught.value.data["field"] == "aliases.docs"
    assert caught.value.line == 3
