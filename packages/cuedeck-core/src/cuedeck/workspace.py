"""The workspace: a directory holding ``.cuedeck/``, and the Python API over it.

:func:`open_workspace` finds the root (:mod:`cuedeck.boundary.roots`) and returns a
:class:`Workspace` whose config, index, reference graph and token counter load lazily.
The CLI, the MCP server and the tools all go through this one object.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar, overload

from cuedeck.boundary.paths import locate, read_refusal
from cuedeck.boundary.roots import find_root
from cuedeck.config import Config, load_config
from cuedeck.errors import (
    FileNotFound,
    InvalidInput,
    MissingExtra,
    did_you_mean,
    suggestion_text,
)
from cuedeck.index.parsed import Index, RefreshStats
from cuedeck.plugins.host import (
    PluginHost,
    get_maskers,
    get_parsers,
    get_places,
    get_searchers,
    get_services,
    get_token_counters,
    make_plugin_host,
)
from cuedeck.token_counts import CachedCounter

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping
    from pathlib import Path

    from cuedeck.hookspecs import Searcher, SearcherFactory
    from cuedeck.hooktypes import Refreshed
    from cuedeck.index.coverage import Exclusion
    from cuedeck.index.globs import Globs
    from cuedeck.index.graph import ReferenceGraph
    from cuedeck.index.parsers import Parsers
    from cuedeck.layout import Places
    from cuedeck.masking.session import MaskSession
    from cuedeck.models import Document, SearchFilters, SearchResult, Snapshot
    from cuedeck.watch.reflects import ChangeFeed

T = TypeVar("T")


def open_workspace(
    path: Path | str | None = None, *, plugins: PluginHost | None = None
) -> Workspace:
    """Open the workspace at or above ``path``; see :func:`find_root`."""
    return Workspace(find_root(path), plugins=plugins)


class Workspace:
    """A CueDeck workspace. Heavy parts load on first use and are shared afterwards."""

    def __init__(self, root: Path, *, plugins: PluginHost | None = None) -> None:
        self.root = root
        self._plugins = plugins
        self._lock = threading.RLock()
        self._depth = 0  # how deep this thread holds the lock (see _locked)
        self._rebuilt = False  # a rebuild was asked for while the lock was held
        self._unread = True  # the index was never brought in step in this process
        self._graph: tuple[int, ReferenceGraph] | None = None
        self._services: dict[str, Any] = {}
        self._searchers: dict[str, Searcher] = {}
        self._fresh = False
        #: What keeps the index in step in a long-lived process (the MCP server's file
        #: watcher), or None: replies say what they reflect from it (:mod:`cuedeck.watch.reflects`).
        self.freshness: ChangeFeed | None = None
        #: When the files were last compared with the index (``time.time()``), or None.
        self.checked: float | None = None
        #: Whether the index was last brought in step with the workspace's watcher
        #: process, which then knows every edit made since (:meth:`catch_up`).
        self.watched = False

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r})"

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the cache database connection (the workspace reopens it when used)."""
        if "index" in self.__dict__:
            self.index.close()

    # -- parts -----------------------------------------------------------------------------

    @property
    def plugins(self) -> PluginHost:
        """The plugin host (a fresh one unless one was passed in)."""
        if self._plugins is None:
            self._plugins = make_plugin_host()
        return self._plugins

    @cached_property
    def config(self) -> Config:
        """The loaded ``.cuedeck/config.toml``, with the sections the plugins registered."""
        return load_config(self.root, plugins=self.plugins)

    @cached_property
    def token_counter(self) -> CachedCounter:
        """The token counter ``[tokens] counter`` selects, cached by text hash."""
        counters = get_token_counters(self.plugins)
        wanted = self.config.tokens.counter
        if wanted == "auto":
            name = "o200k" if "o200k" in counters else "estimate"
        elif wanted in counters:
            name = wanted
        else:
            raise self.config.unavailable("tokens.counter", wanted, list(counters))
        return CachedCounter(counters[name])

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` by the counter in use."""
        return self.token_counter.count(text)

    @cached_property
    def parsers(self) -> Parsers:
        """The registered parsers (markdown, and whatever plugins add)."""
        return get_parsers(self.plugins)

    @cached_property
    def places(self) -> Places:
        """What tools may not reach under ``.cuedeck/``: core's places and those the
        plugins registered (``register_paths``)."""
        return get_places(self.plugins)

    @cached_property
    def index(self) -> Index:
        """The SQLite-backed index (not refreshed yet; see :meth:`refresh`)."""
        return Index(
            self.root,
            self.config.index,
            counter_name=self.token_counter.name,
            count_tokens=self.token_counter.count,
            parsers=self.parsers,
            config=self.config,
            places=self.places,
        )

    def refresh(
        self, *, rebuild: bool = False, progress: Callable[[int, int], None] | None = None
    ) -> RefreshStats:
        """Re-read what changed on disk; cheap when nothing did."""
        with self._locked():
            checked = time.time()
            stats = self.index.refresh(rebuild=rebuild, progress=progress)
            self._rebuilt = self._rebuilt or rebuild
            self._fresh, self.checked = True, checked
            self.watched = self.index.followed is not None
            return stats

    def refresh_paths(self, paths: Iterable[str]) -> RefreshStats:
        """Re-read just ``paths`` (workspace-relative), as a file watcher reported them."""
        with self._locked():
            stats = self.index.refresh_paths(paths)
            self._fresh = True
            return stats

    def catch_up(self) -> None:
        """Bring the index in step with edits made outside CueDeck since it was last read,
        for a long-lived reader (a script, a notebook): what :attr:`freshness` reported
        (a server's file watcher), else what the workspace's watcher process saw, when
        one runs (``cue search`` starts one). Without either the index stays as it was,
        and :func:`~cuedeck.watch.reflects.reflects` says since when."""
        with self._locked():
            if self.freshness is not None:
                self.freshness.ensure()
                return
            checked = time.time()
            if self.index.catch_up():
                self._fresh, self.checked, self.watched = True, checked, True
            elif not self._fresh:
                self.refresh()

    def invalidate(self, paths: Iterable[str] | None = None) -> None:
        """Note that files changed. Named ``paths`` are re-read at once when the index is
        in step (cheap, whatever the workspace's size); otherwise the next read of
        documents or the graph refreshes everything."""
        with self._locked():
            if paths is not None and self._fresh and "index" in self.__dict__:
                self.index.refresh_paths(paths)
            else:
                self._fresh = False

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """The workspace's lock. What the index changed while it was held is told to the
        plugins (``cuedeck_after_refresh``) once the outermost holder releases it, so
        that they may use the workspace (and its services' own locks) freely."""
        refreshed: Refreshed | None = None
        with self._lock:
            outer = self._depth == 0
            if outer:
                index = self.__dict__.get("index")
                start, self._rebuilt = (index.generation if index is not None else 0), False
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if outer:
                    first = self._unread and self._fresh  # read for the first time
                    self._unread = self._unread and not first
                    refreshed = self._refreshed_since(start, first=first)
        if refreshed is not None:
            self.plugins.call("cuedeck_after_refresh", workspace=self, refreshed=refreshed)

    def _refreshed_since(self, start: int, *, first: bool) -> Refreshed | None:
        """What the index changed since generation ``start`` (everything, when it was
        ``first`` read in this process: what changed before is not known here); None when
        nothing did or no plugin listens (then nothing is worked out)."""
        from cuedeck.hooktypes import Refreshed

        index = self.__dict__.get("index")
        if index is None or (index.generation == start and not first):
            return None
        if not self.plugins.implementers("cuedeck_after_refresh"):
            return None
        paths = None if first else index.changed_since(start)
        if paths is None:
            return Refreshed(index.generation, everything=True, rebuilt=self._rebuilt)
        removed = frozenset(path for path in paths if path not in index)
        return Refreshed(index.generation, frozenset(paths) - removed, removed)

    def built_service(self, contract: type[T], /) -> T | None:
        """The service of ``contract`` if this workspace built it already, else None
        (builds nothing): for a hook that keeps an existing service in step."""
        from cuedeck.plugins.services import SERVICE_NAMES

        with self._lock:
            found: T | None = self._services.get(SERVICE_NAMES[contract])
            return found

    def _ensure_fresh(self) -> None:
        if not self._fresh:
            self.refresh()

    @property
    def documents(self) -> Mapping[str, Document]:
        """Every indexed document by path (refreshing the index the first time)."""
        self._ensure_fresh()
        return self.index.documents

    def fresh_index(self) -> Index:
        """The index, refreshed first when files may have changed since it was read."""
        self._ensure_fresh()
        return self.index

    def document(self, path: str) -> Document:
        """The indexed document at workspace-relative ``path``, or FileNotFound (1001)."""
        self._ensure_fresh()
        found = self.index.get(path)
        if found is None:
            raise self.not_found(path)
        return found

    @property
    def graph(self) -> ReferenceGraph:
        """The reference graph of the current index."""
        from cuedeck.index.graph import ReferenceGraph

        with self._locked():
            self._ensure_fresh()
            index = self.index
            if self._graph is not None and self._graph[0] == index.generation:
                return self._graph[1]
            deny = self.config.files.deny

            def explain(path: str) -> Exclusion | None:
                return index.why_not(path, deny)

            # References only: token counts a large refresh deferred stay deferred.
            graph = ReferenceGraph(index.every(counted=False), explain)
            # A text file no parser claims is indexed, as plain lines, while a reference
            # includes it (``@code/setup.cfg#L1-L9``), and dropped once none does.
            if graph.unindexed and index.adopt(sorted(graph.unindexed), deny):
                graph = ReferenceGraph(index.every(counted=False), explain)
            unused = [path for path in index.adopted() if path not in graph.included]
            if unused:
                index.release(unused)
                graph = ReferenceGraph(index.every(counted=False), explain)
            self._graph = (index.generation, graph)
            return graph

    # -- files -----------------------------------------------------------------------------

    def not_found(self, path: str) -> FileNotFound:
        """A FileNotFound for ``path`` with the closest indexed paths as suggestion."""
        matches = did_you_mean(path, self.index.paths)
        return FileNotFound(
            f"{path} is not in the workspace index",
            path=path,
            suggestion=suggestion_text(matches),
            candidates=matches,
        )

    @cached_property
    def real_root(self) -> str:
        """The root with every link resolved: what real paths are compared with."""
        return os.path.realpath(self.root)

    def locate(self, path: str, *, field: str = "path", write: bool = False) -> tuple[str, str]:
        """``path`` as asked (normalised) and its resolved real path, both
        workspace-relative: :func:`cuedeck.boundary.paths.locate` for this workspace."""
        return locate(self.real_root, self.places, path, field=field, write=write)

    def read_refusal(self, rel: str, *, real_rel: str | None = None, links: int = 1) -> str | None:
        """Why no tool may read the workspace-relative ``rel`` (reached at ``real_rel``
        when it is a link; ``links``: its hard-link count), or None: the decision
        :meth:`locate` and the file tools take, for walkers that know the path is inside
        (``git``, ``private``, ``deny``, ``shared``). Raises nothing, stats nothing."""
        return read_refusal(self.places, self.denied, rel, real_rel=real_rel, links=links)

    def denied(self, rel: str) -> bool:
        """Whether ``[files] deny`` names the workspace-relative ``rel`` (secrets, keys)."""
        spec = self._deny_spec
        return spec is not None and spec.match(rel)

    @cached_property
    def _deny_spec(self) -> Globs | None:
        from cuedeck.index.globs import Globs

        globs = self.config.files.deny
        return Globs(list(globs)) if globs else None

    def relative_path(self, path: str, *, field: str = "path", write: bool = False) -> str:
        """``path`` normalised to a workspace-relative POSIX path a tool may read (or
        ``write``): :meth:`locate`'s checks, the path as asked."""
        return self.locate(path, field=field, write=write)[0]

    def read_bytes(self, path: str) -> bytes:
        """Raw bytes of workspace-relative ``path`` (checked by :meth:`relative_path`)."""
        rel = self.relative_path(path)
        try:
            return (self.root / rel).read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            self._ensure_fresh()
            raise self.not_found(rel) from None

    def snapshot(self, path: str) -> Snapshot:
        """The indexed document at ``path`` with its bytes as they are on disk now.

        The one way readers (scenes, search, read_doc, resources, tools) get a document's
        content: only what the index holds can be read, so a file the index left out (a
        symlink leaving the workspace, a binary file) is FileNotFound (1001) whoever asks.
        """
        from cuedeck.models import Snapshot

        document = self.document(path)
        return Snapshot(document, self.read_bytes(document.path))

    def read_text(self, path: str) -> str:
        """Text of workspace-relative ``path`` (UTF-8; undecodable bytes replaced)."""
        from cuedeck.text import decode

        return decode(self.read_bytes(path))[0]

    # -- extensions ------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        mode: str | None = None,
        limit: int | None = None,
        filters: SearchFilters | None = None,
    ) -> list[SearchResult]:
        """Ranked files for ``query`` by the searcher registered as ``mode`` (None:
        :meth:`default_search_mode`), after :meth:`catch_up`. The searcher checks
        ``query`` and ``limit`` (None: its own default); here it is only picked."""
        from cuedeck.models import SearchFilters

        self.catch_up()
        searcher = self.searcher(self.default_search_mode() if mode is None else mode)
        return searcher.search(query, limit=limit, filters=filters or SearchFilters())

    def searcher(self, mode: str) -> Searcher:
        """The searcher registered as ``mode``, made by its factory once per workspace;
        InvalidInput (1004) for a mode no plugin registers, MissingExtra (1008) when
        none registers any."""
        with self._locked():
            found = self._searchers.get(mode)
            if found is None:
                factories = self._searcher_factories()
                if mode not in factories:
                    raise InvalidInput(
                        f"unknown search mode {mode!r} (available: {', '.join(sorted(factories))})",
                        field="mode",
                    )
                found = self._searchers[mode] = factories[mode](self)
            return found

    def default_search_mode(self) -> str:
        """The mode :meth:`search` uses when asked for none: the value of the setting that
        a searcher's plugin named with ``default_setting`` when registering it."""
        self._searcher_factories()  # none at all: the install hint
        entries = self.plugins.collect("register_searchers")
        named = {
            key: entry.plugin
            for entry in entries.values()
            if (key := entry.options.get("default_setting")) is not None
        }
        if len(named) != 1:
            owners = ", ".join(f"{key} ({plugin})" for key, plugin in sorted(named.items()))
            raise InvalidInput(
                f"several settings name the default search mode: {owners}"
                if named
                else "no installed plugin names a default search mode: pass a mode",
                field="mode",
                available=sorted(entries),
            )
        (key,) = named
        section, _, attribute = key.partition(".")
        value = getattr(self.config.section(section), attribute, None)
        if not isinstance(value, str) or value not in entries:
            raise self.config.unavailable(key, str(value), list(entries))
        return value

    def _searcher_factories(self) -> dict[str, SearcherFactory]:
        factories = get_searchers(self.plugins)
        if not factories:
            raise MissingExtra.needs("search is not installed", "search")
        return factories

    def mask_session(self) -> MaskSession:
        """A masking session: one per output, so numbering is stable within it."""
        from cuedeck.masking.session import MaskSession

        return MaskSession(self.config.masking, get_maskers(self.plugins).values())

    def mask(self, text: str, *, path: str | None = None) -> str:
        """``text`` with secrets masked by every registered masker (one-off session)."""
        return self.mask_session().mask(text, path=path)

    @overload
    def service(self, contract: type[T], /) -> T: ...

    @overload
    def service(self, name: str, /) -> Any: ...

    @overload
    def service(self, name: str, of_type: type[T], /) -> T: ...

    def service(self, key: str | type[Any], of_type: type[Any] | None = None, /) -> Any:
        """A service a plugin registered (built once per workspace): by its contract
        (:mod:`cuedeck.plugins.services`, ``service(SearchService)``), typed; or by name,
        checked to be an ``of_type`` when one is given. MissingExtra (1008) when no
        installed plugin registers it."""
        from cuedeck.plugins.services import SERVICE_NAMES

        if not isinstance(key, str):
            if key not in SERVICE_NAMES:
                raise InvalidInput(f"{key.__name__} is not a service contract", field="service")
            return self._service(SERVICE_NAMES[key])
        found = self._service(key)
        if of_type is not None and not isinstance(found, of_type):
            raise InvalidInput(
                f"the {key!r} service is a {type(found).__name__}, not a {of_type.__name__}",
                field=key,
            )
        return found

    def _service(self, name: str) -> Any:
        with self._locked():
            if name not in self._services:
                factories = get_services(self.plugins)
                if name not in factories:
                    raise MissingExtra.needs(
                        f"no plugin provides the {name!r} service (`cue plugins` lists the "
                        "installed ones)",
                        service=name,
                    )
                self._services[name] = factories[name](self)
            return self._services[name]
