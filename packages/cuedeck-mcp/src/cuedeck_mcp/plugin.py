"""The CueDeck plugin of cuedeck-mcp (entry point ``cuedeck = mcp``): the ``[mcp]``
config section, the server's own tools (``whoami``, ``cidx_quick_reference``), ``cue mcp``
(:mod:`cuedeck_mcp.commands`) and its resident servers in ``cue status``.

Kept import-light: ``cue --help`` loads every plugin module, so fastmcp is imported only
when a command runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuedeck.hookspecs import hookimpl

if TYPE_CHECKING:
    from cuedeck.hookspecs import RegisterCommand, RegisterNamed, RegisterPath, RegisterTool
    from cuedeck.models import BackgroundProcess
    from cuedeck.workspace import Workspace


@hookimpl
def register_settings(register: RegisterNamed) -> None:
    from cuedeck_mcp.settings import McpSettings, RateLimitSettings

    register("mcp", McpSettings)
    register("rate_limits", RateLimitSettings)


@hookimpl
def register_tools(register: RegisterTool) -> None:
    register("cuedeck_mcp.tools:whoami", category="guide", read_only=True, idempotent=True)
    register(
        "cuedeck_mcp.tools:cidx_quick_reference",
        category="reference",
        read_only=True,
        idempotent=True,
    )


@hookimpl
def register_paths(register: RegisterPath) -> None:
    from cuedeck_mcp.paths import ACCESS_FILE

    register(ACCESS_FILE, "private")  # the token hashes and roles the server trusts


def _residents(workspace: Workspace) -> list[BackgroundProcess]:
    from cuedeck_mcp.resident_registry import listed

    return listed(workspace)


@hookimpl
def register_processes(register: RegisterNamed) -> None:
    register("mcp-resident", _residents)


@hookimpl
def register_commands(register: RegisterCommand) -> None:
    register(
        "cuedeck_mcp.commands:mcp", help="Serve this workspace's tools and resources over MCP."
    )
