"""Which repository a tool call runs on: ``repository_alias``, resolved once, before the
tool runs, for every tool.

Tools are plain functions of a workspace and know nothing of aliases. The server's
middleware takes ``repository_alias`` out of a call's arguments, asks the server's
:class:`Repositories` for the target (a workspace with its runtime, and whether tools
may write it), refuses a writing tool aimed at a read-only target, and the adapter runs
the tool on the target's runtime (:data:`TARGET`).

A server of one workspace (:class:`OneWorkspace`) accepts the alias without publishing
it: leaving it out, or naming the workspace, is the same, so today's clients do not
change and a client written against the specification still works. A team server
publishes it and resolves shared repositories, activations and composites through the
team plugin's :class:`TeamService` (cuedeck-team).
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING, Literal, Protocol

import attrs

from cuedeck.errors import InvalidInput

if TYPE_CHECKING:
    from cuedeck.plugins.tools import Tool
    from cuedeck.workspace import Workspace
    from cuedeck_mcp.roles import Caller
    from cuedeck_mcp.runtime import WorkspaceRuntime
    from cuedeck_mcp.shared_state import SharedState

#: The argument that names the repository a tool runs on.
REPOSITORY_ALIAS = "repository_alias"

Kind = Literal["workspace", "shared", "activation", "composite", "team"]


@attrs.frozen
class Target:
    """Where a call runs: the repository's alias and kind, its runtime, and what tools may
    write there: anything (``writable``), or only CueDeck's own files of the workspace
    through the tools of ``own_categories`` (a composite's cards and memory), or nothing."""

    alias: str
    kind: Kind
    runtime: WorkspaceRuntime
    writable: bool
    own_categories: frozenset[str] = frozenset()

    def accepts(self, tool: Tool) -> bool:
        """Whether ``tool`` may run here: it reads, or it may write here."""
        return tool.read_only or self.writable or tool.category in self.own_categories


#: The target of the call being served, set by the middleware for the adapter.
TARGET: ContextVar[Target | None] = ContextVar("cuedeck_target", default=None)


class Repositories(Protocol):
    """What a server serves, by alias."""

    #: Whether ``tools/list`` shows ``repository_alias`` on the tools that take it.
    publishes_alias: bool

    def takes_alias(self, tool: Tool) -> bool:
        """Whether ``tool`` runs on a repository named by ``repository_alias``."""
        ...

    def alias_published(self, tool: Tool) -> Literal["required", "optional"] | None:
        """How ``tools/list`` shows ``repository_alias`` on ``tool`` (None: not at all)."""
        ...

    def resolve(self, tool: Tool, alias: str | None, caller: Caller) -> Target:
        """The target of a call of ``tool`` by ``caller`` naming ``alias`` (None: left
        out). May block (it reads the registry and opens workspaces)."""
        ...

    def acts_on(self, tool: Tool, arguments: dict[str, object]) -> str | None:
        """The repository a call of ``tool`` with ``arguments`` acts on when that is not
        where it runs (a team's own tools run on its home), for the audit trail; None:
        where it runs. Reads only the arguments."""
        ...

    def close(self) -> None:
        """Release what resolving opened."""
        ...


class TeamService(Protocol):
    """What a team server needs of the team whose home it serves: the ``team`` service
    the team plugin (cuedeck-team) registers."""

    def repositories(self, home: WorkspaceRuntime, served: frozenset[str]) -> Repositories:
        """The team's repositories for a server whose home runtime is ``home`` and whose
        tool profile is ``served``."""
        ...

    def problems(self) -> list[str]:
        """What keeps the team from being served (readiness), named without paths."""
        ...

    def shared_state(self) -> SharedState:
        """What the team's nodes share: members, buckets, confirmations, audit."""
        ...


#: The service a team plugin registers.
TEAM_SERVICE = "team"


def team_service(workspace: Workspace) -> TeamService:
    """The team whose home is ``workspace``; 1008 with the install hint when no plugin
    serves teams."""
    from cuedeck.errors import MissingExtra
    from cuedeck.plugins.host import get_services

    if TEAM_SERVICE not in get_services(workspace.plugins):
        raise MissingExtra.needs("serving a team needs cuedeck-team", "team")
    found: TeamService = workspace.service(TEAM_SERVICE)
    return found


def alias_argument(arguments: dict[str, object]) -> str | None:
    """Take ``repository_alias`` out of ``arguments``: the alias, or None; 1004 when it is
    not a string."""
    value = arguments.pop(REPOSITORY_ALIAS, None)
    if value is None or isinstance(value, str):
        return value
    raise InvalidInput(f"invalid '{REPOSITORY_ALIAS}': not a string", field=REPOSITORY_ALIAS)


class OneWorkspace:
    """The repositories of a server of one workspace: that workspace, under its name."""

    publishes_alias = False

    def __init__(self, name: str, runtime: WorkspaceRuntime) -> None:
        self.name = name
        self.target = Target(name, "workspace", runtime, writable=True)

    def takes_alias(self, tool: Tool) -> bool:
        """Every tool: it runs on the one workspace."""
        return True

    def alias_published(self, tool: Tool) -> None:
        """Never: leaving it out is the same as naming the one workspace."""
        return None

    def resolve(self, tool: Tool, alias: str | None, caller: Caller) -> Target:
        """The workspace, when ``alias`` is left out or names it; else 1400."""
        if alias is None or alias == self.name:
            return self.target
        from cuedeck_mcp.errors import UnknownRepository

        raise UnknownRepository(
            f"this server serves one repository, {self.name!r}, not {alias!r}",
            repository_alias=alias,
            candidates=[self.name],
            help=f"leave repository_alias out, or pass {self.name!r} (whoami names it)",
        )

    def acts_on(self, tool: Tool, arguments: dict[str, object]) -> None:
        """Always where it runs: the one workspace."""
        return None

    def close(self) -> None:
        """Nothing: the server owns the runtime."""
