"""A team's home: the CueDeck workspace whose ``.cuedeck/team/`` folder holds the registry,
the shared repositories and every user's working copies.

The home's own ``access.toml`` lists the team's members (``cue -C HOME mcp token add``)
and its ``config.toml`` the server's tool profile and rate limits. Nothing under
``.cuedeck/`` is indexed or reachable by a tool, so the home never serves its own files.

The registry and the repositories' locks are the team store's (:mod:`cuedeck_team.store`):
a SQLite file and file locks under the home (embedded), or tables and advisory locks in
PostgreSQL. Every change to one repository holds that repository's lock for its whole
duration, across every worker and node; a registry row left ``creating`` or
``removing`` by a process that died is cleaned up by the next one that takes the lock.
"""

from __future__ import annotations

import contextlib
import time
from functools import cached_property
from typing import TYPE_CHECKING, Any

from cuedeck.layout import WORKSPACE_DIR
from cuedeck_team.disk import remove_tree
from cuedeck_team.errors import RepositoryBusy
from cuedeck_team.paths import TEAM_DIR
from cuedeck_team.registry import Activation, Registry, Shared
from cuedeck_team.store.embedded import REGISTRY_DB

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from cuedeck.plugins.host import PluginHost
    from cuedeck.workspace import Workspace
    from cuedeck_team.registry import RegistryStore
    from cuedeck_team.store import TeamStore

#: How long a change waits for another one on the same repository before it is 1406.
LOCK_WAIT = 5.0


class Team:
    """The team whose home is the workspace at ``root``."""

    def __init__(
        self,
        root: Path,
        *,
        plugins: PluginHost | None = None,
        database: str | None = None,
        node_cache: Path | None = None,
    ) -> None:
        self.root = root
        self.folder = root / TEAM_DIR
        self._database = database
        if node_cache is not None:  # else read from the settings when first needed
            self.node_cache = node_cache
        self._plugins = plugins
        #: Called with a repository's generation just before its folder is deleted, so
        #: that a server closes what it keeps open there (its runtime, file watcher).
        self.listeners: list[Callable[[str], None]] = []

    @classmethod
    def of(cls, workspace: Workspace) -> Team:
        """The team whose home is ``workspace`` (its plugins shared): its ``team``
        service, one per workspace object, which the server and the tools share."""
        return cls(workspace.root, plugins=workspace.plugins)

    @cached_property
    def database(self) -> str:
        """The team's database URL (empty: the embedded store)."""
        if self._database is not None:
            return self._database
        from cuedeck_team.store import database_of

        return database_of(self.root)

    @cached_property
    def node_cache(self) -> Path | None:
        """This node's own folder for shared repositories' clones (None: the home's):
        ``node_cache`` given, else ``CUEDECK_TEAM_NODE_CACHE`` or ``[team] node_cache``."""
        from cuedeck_team.settings import node_cache_of

        return node_cache_of(self.root)

    @cached_property
    def store(self) -> TeamStore:
        """The team's store (opened on first use; the server's shared state uses it too)."""
        from cuedeck_team.store import open_store

        return open_store(self.root, self.database)

    @cached_property
    def registry(self) -> RegistryStore:
        """The team's registry: the home's SQLite file for the embedded store (opened
        without the rest of the store), else the store's."""
        if not self.database:
            return Registry(self.root / REGISTRY_DB)
        return self.store.registry()

    def close(self) -> None:
        """Close the store, when it was opened."""
        store = self.__dict__.pop("store", None)
        if store is not None:
            store.close()
        self.__dict__.pop("registry", None)

    def problems(self) -> list[str]:
        """What keeps the team from being served: git missing, the registry unreadable."""
        import shutil
        import sqlite3

        found = []
        if shutil.which("git") is None:
            found.append("git is not installed")
        from cuedeck.errors import CueError

        try:
            self.registry.generations()
        except (sqlite3.Error, OSError, CueError) as exc:
            found.append(f"the team's registry cannot be read ({type(exc).__name__})")
        return found

    def removing(self, generation: str) -> None:
        """Tell the listeners that the repository of ``generation`` is about to go."""
        for listener in self.listeners:
            listener(generation)

    @cached_property
    def plugins(self) -> PluginHost:
        """The plugin host every repository of the team is opened with."""
        if self._plugins is None:
            from cuedeck.plugins.host import make_plugin_host

            self._plugins = make_plugin_host()
        return self._plugins

    # -- where things are ------------------------------------------------------------------

    def shared_path(self, record: Shared | str) -> Path:
        """The folder of a shared repository's clone: in this node's cache, a folder per
        generation (:mod:`cuedeck_team.nodecache`), else in the home."""
        if self.node_cache is not None:
            found = self.registry.find_shared(record) if isinstance(record, str) else record
            generation = found.generation if found is not None else "none"
            name = record if isinstance(record, str) else record.folder
            return self.node_cache / "shared" / generation / name
        folder = record if isinstance(record, str) else record.folder
        return self.folder / "shared" / folder

    def user_path(self, record: Activation) -> Path:
        """The folder of a user's activation or composite."""
        return self.folder / "users" / record.owner / record.folder

    def open(self, root: Path) -> Workspace:
        """The workspace at ``root``, with the team's plugins."""
        from cuedeck.workspace import Workspace

        return Workspace(root, plugins=self.plugins)

    # -- locking ---------------------------------------------------------------------------

    @contextlib.contextmanager
    def changing(self, key: str, alias: str) -> Iterator[None]:
        """Hold the lock of the repository ``key`` while changing it; 1406 when another
        request holds it for longer than :data:`LOCK_WAIT`."""
        if self.database:
            held = self.store.lock(key, LOCK_WAIT)
        else:  # the embedded store's file lock, without opening the rest of the store
            from cuedeck_team.store.embedded import lock

            held = lock(self.root, key, LOCK_WAIT)
        try:
            with held:
                yield
        except TimeoutError:
            raise RepositoryBusy(
                f"{alias} is being changed by another request",
                repository_alias=alias,
                help="try again when it is done",
            ) from None

    def clear_unfinished_shared(self, alias: str) -> None:
        """Under the lock: forget a shared repository left half-made or half-removed."""
        found = self.registry.find_shared(alias)
        if found is not None and found.state != "ready":
            remove_tree(self.shared_path(found))
            self.registry.drop_shared(alias)

    def clear_unfinished_activation(self, owner: str, alias: str) -> None:
        """Under the lock: forget an activation left half-made or half-removed."""
        found = self.registry.find_activation(owner, alias)
        if found is not None and found.state != "ready":
            remove_tree(self.user_path(found))
            self.registry.drop_activation(owner, alias)


def prepare_workspace(root: Path, *, config_from: Path | None = None) -> None:
    """Make the clone at ``root`` a CueDeck workspace without changing a tracked file:
    ``.cuedeck/`` (with ``config_from``'s config, else the default one) when the
    repository has none, and git told to ignore CueDeck's files there (locally)."""
    from cuedeck.config import render_default_config
    from cuedeck.layout import CACHE_DIR, CONFIG_PATH
    from cuedeck.plugins.host import get_places, make_plugin_host
    from cuedeck_team.gitops import exclude_locally

    own = root / WORKSPACE_DIR
    if not own.is_dir():
        (root / CACHE_DIR).mkdir(parents=True)
        source = config_from / CONFIG_PATH if config_from is not None else None
        text = (
            source.read_text(encoding="utf-8")
            if source is not None and source.is_file()
            else render_default_config()
        )
        (root / CONFIG_PATH).write_text(text, encoding="utf-8")
        exclude_locally(root, f"/{WORKSPACE_DIR}/")
    for line in get_places(make_plugin_host()).gitignore:
        exclude_locally(root, f"/{line}")


def index_workspace(workspace: Workspace, *, embed: bool) -> dict[str, Any]:
    """Refresh ``workspace``'s index, its keyword postings and (``embed``) every section's
    vector; what it did."""
    from cuedeck.plugins.host import get_services
    from cuedeck.plugins.services import SearchService

    started = time.perf_counter()
    stats = workspace.refresh()
    embedded = None
    if "search" in get_services(workspace.plugins):
        engine = workspace.service(SearchService)
        engine.sync()
        if embed:
            engine.background = False  # this call is the work: do it in the foreground
            embedded = engine.embed_all()
    return {
        "files": stats.seen,
        "parsed": stats.parsed,
        "reused": stats.reused,
        "embedded": embedded,
        "seconds": round(time.perf_counter() - started, 3),
    }
