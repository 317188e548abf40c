"""The CueDeck plugin of cuedeck-team (entry point ``cuedeck = team``): the team's tools,
its private folder and the ``team`` service a team server serves (docs/teams.md).

Kept import-light: ``cue --help`` loads every plugin module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cuedeck.hookspecs import hookimpl

if TYPE_CHECKING:
    from cuedeck.hookspecs import RegisterCommand, RegisterNamed, RegisterPath, RegisterTool
    from cuedeck.workspace import Workspace


@hookimpl
def register_tools(register: RegisterTool) -> None:
    # Served by a team server only (categories repositories and users).
    # Permissions as the code-indexer specification gives them (docs/teams.md): shared
    # repositories are an admin's; a member's own copies need activate_repos, even to
    # delete one (it is theirs); seeing the members is an admin's.
    team = "cuedeck_team.tools:"
    admin, own = "manage_golden_repos", "activate_repos"
    register(team + "add_golden_repo", category="repositories", permission=admin)
    for name in ("list_global_repos", "global_repo_status"):
        register(team + name, category="repositories", read_only=True, idempotent=True)
    register(
        team + "refresh_golden_repo", category="repositories", idempotent=True, permission=admin
    )
    register(
        team + "set_global_repo_description",
        category="repositories",
        idempotent=True,
        permission=admin,
    )
    register(
        team + "remove_golden_repo", category="repositories", destructive=True, permission=admin
    )
    register(team + "activate_repository", category="repositories", permission=own)
    register(
        team + "list_activated_repos", category="repositories", read_only=True, idempotent=True
    )
    register(team + "sync_repository", category="repositories", idempotent=True, permission=own)
    register(team + "manage_composite_repository", category="repositories", permission=own)
    register(
        team + "deactivate_repository", category="repositories", destructive=True, permission=own
    )
    register(
        team + "list_users",
        category="users",
        read_only=True,
        idempotent=True,
        permission="manage_users",
    )


@hookimpl
def register_commands(register: RegisterCommand) -> None:
    register(
        "cuedeck_team.commands:team",
        help="A team's members, audit trail and store (moving it to PostgreSQL).",
    )


@hookimpl
def register_settings(register: RegisterNamed) -> None:
    from cuedeck_team.settings import TeamSettings

    register("team", TeamSettings)


@hookimpl
def register_paths(register: RegisterPath) -> None:
    from cuedeck_team.paths import TEAM_FOLDER

    register(f"{TEAM_FOLDER}/", "private")  # a team server's registry and copies


@hookimpl
def register_services(register: RegisterNamed) -> None:
    register("team", _team_of)


def _team_of(workspace: Workspace) -> Any:
    """The team whose home is ``workspace``, as a server serves it (one per workspace
    object: the server and the tools share it)."""
    from cuedeck_team.home import Team
    from cuedeck_team.serving import TeamServing

    return TeamServing(Team.of(workspace))
