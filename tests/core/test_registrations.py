"""The registry: named items, items that name themselves (tools, commands), taken names."""

from __future__ import annotations

import click
import pytest

from cuedeck.errors import InvalidInput
from cuedeck.plugins.registrations import Registry


@click.command("hello")
def hello() -> None:
    """Say hello."""


@click.command("hello")
def other_hello() -> None:
    """Say hello differently."""


def test_a_command_is_named_by_its_name_and_records_its_plugin() -> None:
    registry = Registry("register_commands")
    registry.registrar("greeter")(hello)
    registry.registrar("greeter")(hello, name="hi")
    assert {name: (e.item, e.plugin) for name, e in registry.items.items()} == {
        "hello": (hello, "greeter"),
        "hi": (hello, "greeter"),
    }


def test_a_taken_command_name_names_both_plugins_unless_replaced() -> None:
    registry = Registry("register_commands")
    registry.registrar("first")(hello)
    with pytest.raises(
        InvalidInput, match=r"register_commands: 'hello' is registered by both 'first' and 'second'"
    ):
        registry.registrar("second")(other_hello)
    registry.registrar("second")(other_hello, replace=True)
    assert (registry.items["hello"].item, registry.items["hello"].plugin) == (
        other_hello,
        "second",
    )


def test_a_tool_is_named_by_its_function_with_options_kept() -> None:
    def word_count(workspace: object, text: str) -> int:
        """Count words."""
        return len(text.split())

    registry = Registry("register_tools")
    registry.registrar("example")(word_count, category="docs", read_only=True)
    entry = registry.items["word_count"]
    assert (entry.plugin, entry.options) == ("example", {"category": "docs", "read_only": True})


def test_an_item_without_a_name_is_refused() -> None:
    nameless = click.Command(None)
    with pytest.raises(InvalidInput, match="registered an empty name"):
        Registry("register_commands").registrar("plugin")(nameless)
    with pytest.raises(InvalidInput, match="registered an empty name"):
        Registry("register_searchers").registrar("plugin")("", object())
