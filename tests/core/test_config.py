"""Loading .cuedeck/config.toml: defaults, errors naming key and line, env overrides."""

from __future__ import annotations

import re
import tomllib

import attrs
import pytest

from cuedeck.config import (
    DEFAULT_RATE_LIMITS,
    SECTIONS,
    RateLimit,
    load_config,
    render_default_config,
    toml_key,
)
from cuedeck.errors import InvalidInput
from tests.conftest import REPO, MakeWorkspace


def test_defaults_without_a_file(make_workspace: MakeWorkspace) -> None:
    config = load_config(make_workspace(), environ={})
    assert config.scene.token_limit == 32000
    assert config.watch.debounce_ms == 500
    assert config.search.mode == "hybrid"
    assert config.index.include == ["**/*"]
    assert config.masking.enabled is True
    assert config.rate_limits["read_context"] == RateLimit(10, 15)
    assert config.warnings == ()


def test_values_from_the_file(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(
        config='[scene]\ntoken_limit = 8000\nglobal = ["a.md"]\n'
        "[search]\nsemantic_weight = 1\n"
        "[rate_limits.read_doc]\nper_minute = 5\nburst = 6\n"
    )
    config = load_config(root, environ={})
    assert config.scene.token_limit == 8000
    assert config.scene.global_docs == ["a.md"]
    assert config.search.semantic_weight == 1.0
    assert config.rate_limits["read_doc"] == RateLimit(5, 6)
    assert config.rate_limits["read_context"] == DEFAULT_RATE_LIMITS["read_context"]


def test_unknown_keys_are_warnings_with_lines(make_workspace: MakeWorkspace) -> None:
    text = "[scene]\ntoken_limit = 100\ncolour = 'red'\n\n[nonsense]\nx = 1\n"
    root = make_workspace(config=text)
    config = load_config(root, environ={})
    found = {(w.message, w.line) for w in config.warnings}
    assert found == {
        ("unknown config key 'scene.colour'", 3),
        ("unknown config key 'nonsense'", 5),
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


def test_environment_overrides_the_file(make_workspace: MakeWorkspace) -> None:
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
    assert config.search.keyword_weight == 0.5
    assert config.masking.allow_values == ["a", "b"]


def test_bad_environment_value_names_the_variable(make_workspace: MakeWorkspace) -> None:
    with pytest.raises(InvalidInput) as caught:
        load_config(make_workspace(), environ={"CUEDECK_WATCH_DEBOUNCE_MS": "soon"})
    assert caught.value.data["field"] == "CUEDECK_WATCH_DEBOUNCE_MS"


def test_bad_rate_limit_table(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(config="[rate_limits.read_doc]\nper_minute = 'x'\n")
    with pytest.raises(InvalidInput) as caught:
        load_config(root, environ={})
    assert caught.value.data["field"] == "rate_limits.read_doc"
    assert caught.value.line == 1


def test_default_config_is_valid_commented_toml(make_workspace: MakeWorkspace) -> None:
    text = render_default_config()
    assert all(table == {} for table in tomllib.loads(text).values())  # keys commented out
    uncommented = re.sub(r"(?m)^# (\[rate_limits\.\w+\]|\w+ = .*)$", r"\1", text)
    parsed = tomllib.loads(uncommented)
    assert parsed["scene"]["token_limit"] == 32000
    assert parsed["scene"]["global"] == []
    assert parsed["watch"]["debounce_ms"] == 500
    assert parsed["rate_limits"]["read_doc"] == {"per_minute": 30, "burst": 50}
    root = make_workspace(config=uncommented)
    config = load_config(root, environ={})
    assert config.warnings == ()
    assert config == load_config(make_workspace(config=""), environ={})


def test_every_key_is_documented() -> None:
    docs = (REPO / "docs" / "config.md").read_text(encoding="utf-8")
    for section, cls in SECTIONS.items():
        body = docs.split(f"## `[{section}]`", 1)[1].split("\n## ", 1)[0]
        for field in attrs.fields(cls):
            assert f"| `{toml_key(field.name)}` |" in body, f"{section}.{field.name}"


def test_a_list_may_be_one_comma_separated_string(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(config='[mcp]\ntools = "core, git"\n[scene]\nglobal = "a.md"\n')
    config = load_config(root, environ={})
    assert config.mcp.tools == ["core", "git"]
    assert config.scene.global_docs == ["a.md"]
