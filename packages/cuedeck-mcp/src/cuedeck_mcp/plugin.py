"""The CueDeck plugin of cuedeck-mcp (entry point ``cuedeck = mcp``): the ``[mcp]``
config section, the server's own tools (``whoami``, ``cidx_quick_reference``), the
team's tools and ``team`` service (docs/teams.md), ``cue mcp``
(:mod:`cuedeck_mcp.commands`) and its resident servers in ``cue status``.

Kept import-light: ``cue --help`` loads every plugin module, so fastmcp is imported only
when a command runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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
    # The team's tools, served by a team server only (docs/teams.md).
    team = "cuedeck_mcp.team.tools:"
    register(team + "add_golden_repo", category="repositories")
    for name in ("list_global_repos", "global_repo_status"):
        register(team + name, category="repositories", read_only=True, idempotent=True)
    register(team + "refresh_golden_repo", category="repositories", idempotent=True)
    register(team + "remove_golden_repo", category="repositories", destructive=True)
    register(team + "activate_repository", category="repositories")
    register(
        team + "list_activated_repos", category="repositories", read_only=True, idempotent=True
    )
    register(team + "sync_repository", category="repositories", idempotent=True)
    register(team + "manage_composite_repository", category="repositories")
    register(team + "deactivate_repository", category="repositories", destructive=True)
    register(team + "list_users", category="users", read_only=True, idempotent=True)


@hookimpl
def register_paths(register: RegisterPath) -> None:
    from cuedeck_mcp.paths import ACCESS_FILE, TEAM_FOLDER

    register(ACCESS_FILE, "private")  # the token hashes and roles the server trusts
    register(f"{TEAM_FOLDER}/", "private")  # a team server's registry and copies


@hookimpl
def register_services(register: RegisterNamed) -> None:
    register("team", _team_of)


def _team_of(workspace: Workspace) -> Any:
    """The team whose home is ``workspace`` (one per workspace object)."""
    from cuedeck_mcp.team.home import Team

    return Team.of(workspace)


def _residents(workspace: Workspace) -> list[BackgroundProcess]:
    from cuedeck_mcp.resident import listed

    return listed(workspace)


@hookimpl
def register_processes(register: RegisterNamed) -> None:
    register("mcp-resident", _residents)


@hookimpl
def register_commands(register: RegisterCommand) -> None:
    register(
        "cuedeck_mcp.commands:mcp", help="Serve this workspace's tools and resources over MCP."
    )
