"""The team's tools: shared repositories, activations, composites and users.

Each runs on the team's home workspace (a team server runs them there; from Python or
the CLI, the workspace given is the home) and acts as the calling user
(:data:`cuedeck_mcp.roles.CALLER`; ``python`` as admin outside a server). Who may call
which is in :mod:`cuedeck_mcp.roles` (permissions).
"""

# The tools' annotations are read at run time (their schemas): imported, not type-only.
# ruff: noqa: TC001

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from cuedeck.serving.confirmation import ConfirmationToken
from cuedeck_team.shapes import (
    Activated,
    ActivatedRepo,
    CompositeComponents,
    Deactivated,
    GlobalRepo,
    GlobalRepoStatus,
    GoldenRepoAdded,
    GoldenRepoRefreshed,
    GoldenRepoRemoved,
    RepoDescribed,
    Synced,
    User,
)

if TYPE_CHECKING:
    import pydantic

    from cuedeck.workspace import Workspace
    from cuedeck_team.home import Team
else:
    from cuedeck.plugins.tools import lazy_pydantic as pydantic

Alias = Annotated[
    str,
    pydantic.Field(
        description="A repository alias (list_global_repos, list_activated_repos)",
        min_length=1,
        max_length=80,
    ),
]
Token = ConfirmationToken


def _team(workspace: Workspace) -> Team:
    from cuedeck_team.home import Team
    from cuedeck_team.serving import TeamServing

    service = workspace.service("team")
    return service.team if isinstance(service, TeamServing) else Team.of(workspace)


def _user() -> str:
    from cuedeck_mcp.roles import CALLER

    caller = CALLER.get()
    return caller.name if caller is not None else "python"


def list_global_repos(workspace: Workspace) -> list[GlobalRepo]:
    """List the shared repositories (alias name-global) every member can search and read.

    Each has its alias, source (credentials removed), branch, head commit and when it
    was indexed. Pass an alias as repository_alias to any search, file or git history tool.
    """
    from cuedeck_team.shared import describe

    team = _team(workspace)
    return [describe(team, record) for record in team.registry.shared()]  # type: ignore[misc]


def global_repo_status(workspace: Workspace, repository_alias: Alias) -> GlobalRepoStatus:
    """Show one shared repository: source, head, files, disk use, branches, indexes.

    The indexes are those that exist: documents, keyword and semantic search (how many
    sections are embedded), the code graph and each SCIP index loaded.
    """
    from cuedeck_team.shared import describe, find

    team = _team(workspace)
    return describe(team, find(team, repository_alias), detail=True)  # type: ignore[return-value]


def set_global_repo_description(
    workspace: Workspace,
    repository_alias: Alias,
    description: Annotated[
        str,
        pydantic.Field(
            description="What the repository is, for members (empty: remove)", max_length=2000
        ),
    ],
) -> RepoDescribed:
    """Describe a shared repository for members (admin), in its catalog entry.

    Shown by list_global_repos and in the cidx-meta-global catalog
    (get_file_content('cidx-meta-global', 'NAME-global.md')); an empty text removes it.
    """
    from cuedeck_team.shared import set_description

    return set_description(_team(workspace), repository_alias, description)  # type: ignore[return-value]


def add_golden_repo(
    workspace: Workspace,
    repo_url: Annotated[
        str,
        pydantic.Field(
            description="A clone URL the server can reach, or a path on the server",
            min_length=1,
            max_length=2000,
        ),
    ],
    alias: Annotated[
        str, pydantic.Field(description="Its name; served as <alias>-global", max_length=80)
    ],
    branch: Annotated[
        str | None, pydantic.Field(description="The branch to serve (default: the source's)")
    ] = None,
    embed: Annotated[
        bool, pydantic.Field(description="Embed every section for semantic search now")
    ] = True,
) -> GoldenRepoAdded:
    """Register a repository as shared (alias-global), cloned and indexed once for all (admin).

    Its docs, code and vectors are indexed once; every member then searches and reads it.
    """
    from cuedeck_team.shared import register

    return register(  # type: ignore[return-value]
        _team(workspace), repo_url, alias, branch=branch, by=_user(), embed=embed
    )


def refresh_golden_repo(
    workspace: Workspace,
    repository_alias: Alias,
    embed: Annotated[bool, pydantic.Field(description="Embed new sections now")] = True,
) -> GoldenRepoRefreshed:
    """Bring a shared repository up to date with its source and re-index what changed (admin)."""
    from cuedeck_team.shared import refresh

    return refresh(_team(workspace), repository_alias, embed=embed)  # type: ignore[return-value]


def remove_golden_repo(
    workspace: Workspace, repository_alias: Alias, confirmation_token: Token = None
) -> GoldenRepoRemoved:
    """Remove a shared repository and its indexes (admin; asks for confirmation first).

    Activations and composites made from it are copies of their own and stay.
    """
    from cuedeck.serving.confirmation import confirm
    from cuedeck_team.shared import find, remove

    team = _team(workspace)
    record = find(team, repository_alias)
    warning = (
        f"{record.alias} and its indexes will be deleted; members can no longer search it "
        "(their activations stay)"
    )
    asked = confirm(
        workspace,
        warning=warning,
        token=confirmation_token,
        state=record.generation,
        resolved={"repository_alias": record.alias},
    )
    if asked is not None:
        return asked
    return remove(team, record.alias)  # type: ignore[return-value]


def activate_repository(
    workspace: Workspace,
    golden_repo_alias: Annotated[
        str | None, pydantic.Field(description="The shared repository (name-global)")
    ] = None,
    user_alias: Annotated[
        str | None,
        pydantic.Field(description="Your name for it (default: the shared name without -global)"),
    ] = None,
    branch_name: Annotated[
        str | None, pydantic.Field(description="The branch (default: the shared one's)")
    ] = None,
    composite: Annotated[
        bool, pydantic.Field(description="Make a composite that searches repositories as one")
    ] = False,
    golden_repo_aliases: Annotated[
        list[str] | None,
        pydantic.Field(description="The shared repositories of a composite", max_length=50),
    ] = None,
) -> Activated:
    """Make your own writable working copy of a shared repository, or a composite of several.

    A working copy is on a branch (default: the shared one's); a composite (``composite``,
    or several ``golden_repo_aliases``) searches its shared repositories as one corpus.
    Needs the write role (the specification's power_user).
    """
    from cuedeck.errors import InvalidInput
    from cuedeck_team import activations, composites

    team = _team(workspace)
    goldens = [*([golden_repo_alias] if golden_repo_alias else []), *(golden_repo_aliases or [])]
    if not goldens:
        raise InvalidInput(
            "name the shared repository: golden_repo_alias", field="golden_repo_alias"
        )
    if composite or len(goldens) > 1:
        if branch_name is not None:
            raise InvalidInput(
                "a composite follows its shared repositories' branches", field="branch_name"
            )
        name = user_alias or goldens[0].removesuffix("-global") + "-composite"
        return composites.create(team, _user(), name, goldens)  # type: ignore[return-value]
    return activations.activate(  # type: ignore[return-value]
        team, _user(), goldens[0], user_alias, branch_name
    )


def list_activated_repos(workspace: Workspace) -> list[ActivatedRepo]:
    """List your activated repositories and composites, with their branch and head."""
    from cuedeck_team.activations import describe

    team = _team(workspace)
    return [describe(team, record) for record in team.registry.activations(_user())]  # type: ignore[misc]


def deactivate_repository(
    workspace: Workspace, repository_alias: Alias, confirmation_token: Token = None
) -> Deactivated:
    """Delete one of your activated repositories or composites and its indexes.

    The reply says the space freed. When it holds work found nowhere else (changed files
    or unpushed commits; a composite's own cards and memory), the first call answers with
    a confirmation token and a warning naming it.
    """
    from cuedeck.serving.confirmation import confirm
    from cuedeck_team.activations import deactivate, find, unsaved_work

    team = _team(workspace)
    owner = _user()
    record = find(team, owner, repository_alias)
    lost = unsaved_work(team, record)
    if lost:
        warning = (
            f"{repository_alias} holds work that is nowhere else; deleting it loses: "
            + "; ".join(lost[:20])
            + (f" (and {len(lost) - 20} more)" if len(lost) > 20 else "")
        )
        state = "\n".join([record.generation, *lost])
        asked = confirm(  # bound to its owner too: one member's token confirms nothing else
            workspace,
            warning=warning,
            token=confirmation_token,
            state=state,
            resolved={"repository_alias": record.alias, "owner": owner},
        )
        if asked is not None:
            return asked
    return deactivate(team, owner, repository_alias)  # type: ignore[return-value]


def sync_repository(
    workspace: Workspace,
    repository_alias: Alias,
    prune: Annotated[
        bool, pydantic.Field(description="Drop remote-tracking branches gone from the remote")
    ] = False,
) -> Synced:
    """Fetch one of your activated repositories and say how far it is ahead or behind.

    Ahead and behind are counted against the branch's upstream; your files are not touched.
    A composite instead moves its components to their shared repositories' heads.
    """
    from cuedeck_team.activations import find, sync
    from cuedeck_team.composites import follow

    team = _team(workspace)
    record = find(team, _user(), repository_alias)
    if record.kind == "composite":
        return follow(team, record)  # type: ignore[return-value]
    return sync(team, _user(), repository_alias, prune=prune)  # type: ignore[return-value]


def manage_composite_repository(
    workspace: Workspace,
    composite_alias: Annotated[str, pydantic.Field(description="Your composite", max_length=80)],
    operation: Literal["add", "remove", "list"],
    component_repo: Annotated[
        str | None, pydantic.Field(description="The shared repository to add or remove")
    ] = None,
) -> CompositeComponents:
    """Add a shared repository to one of your composites, remove one, or list them."""
    from cuedeck_team.composites import manage

    return manage(  # type: ignore[return-value]
        _team(workspace), _user(), composite_alias, operation, component_repo
    )


def list_users(workspace: Workspace) -> list[User]:
    """List the team's members with their role and how many repositories they activated.

    Each has its name, role (and the specification's name for it) and when its token was
    made. Admins only.
    """
    from collections import Counter

    from cuedeck_mcp.roles import SPEC_ROLES
    from cuedeck_team.serving import TeamServing

    team = _team(workspace)
    counts = Counter(record.owner for record in team.registry.activations())
    service = workspace.service("team")
    if isinstance(service, TeamServing):  # the members in the team's store, as served
        members = service.shared_state().store.members()
    else:
        from cuedeck_team.store import open_store

        store = open_store(workspace.root)
        try:
            members = store.members()
        finally:
            store.close()
    return [
        {
            "name": member.name,
            "role": member.role,
            "spec_role": SPEC_ROLES[member.role],
            "created": member.created,
            "activations": counts.get(member.name, 0),
        }
        for member in members
    ]
