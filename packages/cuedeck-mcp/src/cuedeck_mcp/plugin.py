"""The CueDeck plugin of cuedeck-mcp (entry point ``cuedeck = mcp``): the ``[mcp]``
config section, the ``whoami`` tool and ``cue mcp`` (:mod:`cuedeck_mcp.commands`).

Kept import-light: ``cue --help`` loads every plugin module, so fastmcp is imported only
when a command runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuedeck.hookspecs import hookimpl

if TYPE_CHECKING:
    from cuedeck.hookspecs import RegisterCommand, RegisterNamed, RegisterTool


@hookimpl
def register_settings(register: RegisterNamed) -> None:
    from cuedeck_mcp.settings import McpSettings

    register("mcp", McpSettings)


@hookimpl
def register_tools(register: RegisterTool) -> None:
    register("cuedeck_mcp.tools:whoami", category="guide", read_only=True, idempotent=True)


@hookimpl
def register_commands(register: RegisterCommand) -> None:
    from cuedeck_mcp.commands import mcp

    register(mcp)
