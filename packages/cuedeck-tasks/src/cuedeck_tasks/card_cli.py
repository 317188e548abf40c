"""What the ``cue card`` commands share: the workspace, the card store, a tool run as MCP
runs it, JSON output. Loaded by ``cue --help``: click alone at module level."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from cuedeck.hookspecs import CommandContext
    from cuedeck.workspace import Workspace
    from cuedeck_tasks.store import CardStore

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON (docs/tasks.md).")


def context() -> CommandContext:
    """What the CLI hands every command: the workspace, JSON and console output."""
    found: CommandContext = click.get_current_context().obj
    return found


def workspace() -> Workspace:
    """The workspace the command runs in."""
    found: Workspace = context().workspace  # the contract names no class (hooktypes)
    return found


def card_store() -> CardStore:
    """The workspace's card store."""
    from cuedeck_tasks.store import CardStore

    return CardStore.of(workspace())


def call(tool: str, **arguments: Any) -> Any:
    """Run the registered tool ``tool`` exactly as MCP clients do (validation included);
    arguments that are None are left out."""
    opened = workspace()
    given = {name: value for name, value in arguments.items() if value is not None}
    return opened.plugins.tools()[tool].call(opened, given)


def emit_json(value: Any) -> None:
    """Print ``value`` as indented JSON on stdout."""
    context().emit_json(value)
