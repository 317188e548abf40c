"""A team's repositories as an MCP server resolves them.

``repository_alias`` ending in ``-global`` names a shared repository (read-only to
tools); any other names one of the caller's own activations (writable) or composites
(read-only). The team's own tools (registering, activating, users) run on the team's
home and take no alias; ``whoami`` runs on the home and checks an alias it is given; the
guide tools run on the home when no alias is given. Each server worker keeps one runtime
(worker thread, file watcher, index) per repository it has served, and closes it once the
registry no longer lists it (removed, or removed and made again: every repository made
gets a new generation).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING, Literal

from cuedeck_mcp.repositories import Target
from cuedeck_team import activations, catalog, shared
from cuedeck_team.errors import RepositoryRequired
from cuedeck_team.nodecache import ensure, prune
from cuedeck_team.registry import GLOBAL_SUFFIX, is_global

if TYPE_CHECKING:
    from cuedeck.plugins.tools import Tool
    from cuedeck_mcp.roles import Caller
    from cuedeck_mcp.runtime import WorkspaceRuntime
    from cuedeck_team.home import Team
    from cuedeck_team.nodecache import CatchUp
    from cuedeck_team.state import TeamState

log = logging.getLogger("cuedeck")

#: Tool categories that act on the team itself: they run on its home, never take an alias,
#: and are served only by a team server.
TEAM_CATEGORIES = frozenset({"repositories", "users"})
#: Tools that also run on the home: who is calling.
HOME_TOOLS = frozenset({"whoami"})  # an alias it is given must name a repository
#: Tools that run on the home when the call names no repository (the guide tools).
HOME_BY_DEFAULT = frozenset({"guide"})
#: What tools may write in a composite: its own cards and memory (its components are
#: shared repositories, read-only).
COMPOSITE_OWN = frozenset({"tasks", "memory"})
#: How often a worker checks the registry for repositories removed by another worker.
STALE_CHECK_SECONDS = 2.0


class TeamServing:
    """The ``team`` service: the team of a home, as a team server serves it
    (:class:`cuedeck_mcp.repositories.TeamService`)."""

    def __init__(self, team: Team) -> None:
        self.team = team
        self._state: TeamState | None = None
        self._catch_up: CatchUp | None = None

    def shared_state(self) -> TeamState:
        """What the team's nodes share (its store, opened once; sign-in)."""
        if self._state is None:
            from cuedeck_team.state import TeamState

            self._state = TeamState(self.team.root, self.team.store)
            self.catch_up()
        return self._state

    def repositories(self, home: WorkspaceRuntime, served: frozenset[str]) -> TeamRepositories:
        """The team's repositories for a server whose home runtime is ``home`` and whose
        tool profile is ``served``."""
        self.catch_up()
        return TeamRepositories(self.team, home, served)

    def catch_up(self) -> None:
        """With a node cache, start bringing this node's clones to the registry's heads
        (once; :mod:`cuedeck_team.nodecache`): a server does when it starts."""
        if self.team.node_cache is not None and self._catch_up is None:
            from cuedeck_team.nodecache import CatchUp

            self._catch_up = CatchUp(self.team)

    def problems(self) -> list[str]:
        """What keeps the team from being served: the team's own, and a shared store
        that cannot be reached."""
        from cuedeck.errors import CueError

        found = self.team.problems()
        if self._catch_up is not None:
            found += self._catch_up.problems()
        if self._state is not None:
            try:
                self._state.store.members()
            except CueError as exc:
                found.append(f"the team's store cannot be reached (error {exc.code})")
        return found


class TeamRepositories:
    """The repositories of the team at ``team``, for a server whose home runtime is
    ``home`` and whose tool profile is ``served``."""

    publishes_alias = True

    def __init__(self, team: Team, home: WorkspaceRuntime, served: frozenset[str]) -> None:
        self.team = team
        self.home = Target("team", "team", home, writable=True)
        self.served = served
        self._runtimes: dict[str, WorkspaceRuntime] = {}  # generation -> runtime
        self._lock = threading.Lock()
        self._checked = 0.0
        self._stop = threading.Event()
        self._sweeper: threading.Thread | None = None
        team.listeners.append(self._removing)

    def takes_alias(self, tool: Tool) -> bool:
        """Every tool but the team's own (``whoami`` too: it answers on the home)."""
        return tool.category not in TEAM_CATEGORIES

    def alias_published(self, tool: Tool) -> Literal["required", "optional"] | None:
        """How ``tools/list`` shows ``repository_alias`` for ``tool``."""
        if not self.takes_alias(tool):
            return None
        return "optional" if tool.category in HOME_BY_DEFAULT else "required"

    def resolve(self, tool: Tool, alias: str | None, caller: Caller) -> Target:
        """The repository ``alias`` names for ``caller`` (see the module's docstring)."""
        if not self.takes_alias(tool):
            return self.home
        if tool.name in HOME_TOOLS:  # about the caller: an alias is checked, not used
            if alias is not None:
                self._repository(alias, caller)
            return self.home
        if alias is None:
            if tool.category in HOME_BY_DEFAULT:
                return self.home
            alias = self._only(caller)
        return self._repository(alias, caller)

    def acts_on(self, tool: Tool, arguments: dict[str, object]) -> str | None:
        """The repository a team tool names (the one it registers, refreshes, removes,
        activates, syncs or changes), for the audit trail; None for the others."""
        if tool.category not in TEAM_CATEGORIES:
            return None

        def text(name: str) -> str:
            value = arguments.get(name)
            return value if isinstance(value, str) else ""

        if tool.name == "add_golden_repo":
            alias = text("alias")
            return alias.removesuffix(GLOBAL_SUFFIX) + GLOBAL_SUFFIX if alias else None
        if tool.name == "activate_repository":  # the working copy made, named as tools.py does
            many = arguments.get("golden_repo_aliases")
            listed = many if isinstance(many, list) else []
            goldens = [g for g in [text("golden_repo_alias"), *listed] if isinstance(g, str) and g]
            if text("user_alias") or not goldens:
                return text("user_alias") or None
            composite = arguments.get("composite") is True or len(goldens) > 1
            return goldens[0].removesuffix(GLOBAL_SUFFIX) + ("-composite" if composite else "")
        return text("repository_alias") or text("composite_alias") or None

    def _repository(self, alias: str, caller: Caller) -> Target:
        """The repository ``alias`` names for ``caller``, or 1400."""
        if alias == catalog.CATALOG_ALIAS:
            folder, kind = catalog.ensure(self.team), "shared"
            generation = catalog.CATALOG_GENERATION
        elif is_global(alias):
            record = shared.find(self.team, alias)
            folder, kind, generation = ensure(self.team, record), "shared", record.generation
        else:
            found = activations.find(self.team, caller.name, alias, what="one of your repositories")
            folder, kind, generation = self.team.user_path(found), found.kind, found.generation
        runtime = self._runtime(generation, folder)
        return Target(
            alias,
            kind,  # type: ignore[arg-type]
            runtime,
            writable=kind == "activation",
            own_categories=COMPOSITE_OWN if kind == "composite" else frozenset(),
        )

    def _only(self, caller: Caller) -> str:
        visible = [r.alias for r in self.team.registry.shared()] + [
            r.alias for r in self.team.registry.activations(caller.name)
        ]
        if len(visible) == 1:
            return visible[0]
        raise RepositoryRequired(
            "this server serves several repositories: name one with repository_alias"
            if visible
            else "this server serves no repository yet",
            field="repository_alias",
            candidates=visible[:20],
            help="list_global_repos and list_activated_repos list them"
            if visible
            else "an admin registers one with add_golden_repo",
        )

    def _runtime(self, generation: str, folder: object) -> WorkspaceRuntime:
        from pathlib import Path

        from cuedeck_mcp.runtime import WorkspaceRuntime

        with self._lock:
            self._close_stale()
            runtime = self._runtimes.get(generation)
            if runtime is None:
                workspace = self.team.open(Path(str(folder)))
                runtime = WorkspaceRuntime(workspace, served=self.served)
                self._runtimes[generation] = runtime
                if self._sweeper is None:
                    self._sweeper = threading.Thread(
                        target=self._sweep, name="cuedeck-team-sweeper", daemon=True
                    )
                    self._sweeper.start()
            return runtime

    def _sweep(self) -> None:
        """Close, even while no request comes, what other workers removed: a deleted
        folder's files are freed only once the last process holding them lets go."""
        while not self._stop.wait(STALE_CHECK_SECONDS):
            try:
                with self._lock:
                    self._close_stale(force=True)
                prune(self.team)  # this node's clones of repositories removed elsewhere
            except Exception:  # the registry briefly unreadable: try again next time
                log.debug("could not check for removed repositories", exc_info=True)

    def _close_stale(self, *, force: bool = False) -> None:
        now = time.monotonic()
        if not self._runtimes or (not force and now - self._checked < STALE_CHECK_SECONDS):
            return
        self._checked = now
        live = self.team.registry.generations() | {catalog.CATALOG_GENERATION}
        for generation in [g for g in self._runtimes if g not in live]:
            self._runtimes.pop(generation).close()

    def _removing(self, generation: str) -> None:
        """Close the runtime of a repository this worker is about to delete."""
        with self._lock:
            runtime = self._runtimes.pop(generation, None)
        if runtime is not None:
            runtime.close()

    def close(self) -> None:
        """Close every runtime opened for a repository."""
        self._stop.set()
        with self._lock:
            for runtime in self._runtimes.values():
                runtime.close()
            self._runtimes.clear()
