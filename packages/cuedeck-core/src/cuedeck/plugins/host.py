"""The plugin host and typed accessors over what plugins register.

``make_plugin_host()`` returns a :class:`PluginHost`: pluggy's manager with the
hookspecs, core's own plugins (:data:`DEFAULT_PLUGINS`) and the ``cuedeck`` entry-point
group, every hookimpl checked against its spec, and CueDeck's records beside it.
``CUEDECK_LOAD_PLUGINS`` (comma-separated entry-point names) loads only those;
``CUEDECK_DISABLE_PLUGINS`` skips some. A plugin that fails to import is logged and
listed by ``cue plugins``; it never stops CueDeck.

Hooks are called through pluggy (``host.pluggy.hook.register_x(register=...)``), so ``tryfirst``,
``trylast`` and wrappers behave as pluggy documents. Pluggy calls the plugin registered
last first: entry points are registered in reverse name order and core's own plugins
after them, so that core is called first, then the entry points by name. Each hook
implementation runs under its plugin's name (the ``register`` callback records who
registered what) and isolated: one that raises (anything but a CueError) is logged,
recorded as a failure of its plugin and skipped.
"""

from __future__ import annotations

import importlib
import inspect
import logging
import os
from typing import TYPE_CHECKING, Any, TypeVar

import attrs
import pluggy

from cuedeck import hookspecs
from cuedeck.errors import CueError, InvalidInput
from cuedeck.layout import CORE_PLACES, WORKSPACE_DIR, Places, place_name
from cuedeck.plugins.entry_points import PluginEntry, entry_points
from cuedeck.plugins.isolation import CALLING, StandIn, stand_in
from cuedeck.plugins.registrations import Registered, Registry

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from cuedeck.hookspecs import (
        CodeRanker,
        Embedder,
        GraphExtractor,
        InitStep,
        Masker,
        SceneSource,
        ScipIndexer,
        SearcherFactory,
    )
    from cuedeck.index.parsers import Parsers
    from cuedeck.plugins.tools import Tool
    from cuedeck.token_counts import TokenCounter

log = logging.getLogger("cuedeck")
T = TypeVar("T")
#: The kinds ``register_paths`` takes (:data:`cuedeck.hooktypes.PathKind`).
PATH_KINDS = ("private", "control")

#: Core's own plugins, registered after the entry points (so called before them): thin
#: modules of ``@hookimpl`` functions that import the domain inside each hook, so loading
#: them is cheap.
DEFAULT_PLUGINS: tuple[str, ...] = (
    "cuedeck.default_plugins.settings",
    "cuedeck.default_plugins.token_counters",
    "cuedeck.default_plugins.maskers",
    "cuedeck.default_plugins.pruners",
    "cuedeck.default_plugins.tools",
    "cuedeck.default_plugins.parsers",
    "cuedeck.default_plugins.processes",
)

#: Hookimpl options that change how pluggy calls an implementation, as ``cue plugins`` lists them.
_MARKERS = ("tryfirst", "trylast", "wrapper", "hookwrapper")


@attrs.frozen
class PluginFailure:
    """An entry point that could not be loaded, and why."""

    name: str
    distribution: str | None
    error: str


@attrs.frozen
class PluginInfo:
    """A loaded plugin, as ``cue plugins`` shows it."""

    name: str
    distribution: str | None
    version: str | None
    hooks: tuple[str, ...]
    #: Hook -> the pluggy markers of its implementation (``tryfirst``, ``wrapper``...).
    markers: dict[str, tuple[str, ...]] = attrs.field(factory=dict, eq=False)


class PluginHost:
    """Pluggy's plugin manager (``pluggy``) and what CueDeck keeps beside it: where each
    plugin came from, which failed, and what the ``register_*`` hooks returned (each runs
    once per host; registering a plugin starts over).
    """

    def __init__(self) -> None:
        self.pluggy = pluggy.PluginManager(hookspecs.PROJECT)
        self.pluggy.add_hookspecs(hookspecs)
        #: Entry point -> the distribution declaring it (name and version).
        self.distributions: dict[str, PluginEntry] = {}
        self.failures: list[PluginFailure] = []
        self._registries: dict[str, Registry] = {}
        self._tools: dict[str, Tool] | None = None
        self._checked_tools: dict[str, Tool] | None = None
        self._broken: set[str] = set()  # tools that failed their check, failure recorded
        self._places: Places | None = None

    def __repr__(self) -> str:
        return f"PluginHost({[name for name, _ in self.pluggy.list_name_plugin()]!r})"

    # -- loading ---------------------------------------------------------------------------

    def register(self, plugin: object, name: str | None = None) -> str | None:
        """Register a plugin object or module (see :meth:`pluggy.PluginManager.register`);
        pluggy calls it before the plugins registered earlier. Pluggy holds a stand-in
        of its implementations, each isolated (:mod:`cuedeck.plugins.isolation`)."""
        self._registries.clear()
        self._tools = self._checked_tools = None
        self._places = None
        self._broken.clear()
        name = name or self.pluggy.get_canonical_name(plugin)
        for held in self.pluggy.get_plugins():  # registered already: pluggy's error, as before
            if isinstance(held, StandIn) and held.plugin is plugin:
                return self.pluggy.register(held, name=name)
        return self.pluggy.register(stand_in(self.pluggy, self, plugin, name), name=name)

    def list_name_plugin(self) -> list[tuple[str, Any]]:
        """``(name, plugin)`` pairs of every registered plugin (None: a blocked name)."""
        return [(name, _plugin(held)) for name, held in self.pluggy.list_name_plugin()]

    def load_defaults(self) -> None:
        """Register core's own plugins (:data:`DEFAULT_PLUGINS`), last first, so that
        pluggy calls them in the order listed."""
        for module_name in reversed(DEFAULT_PLUGINS):
            self.register(importlib.import_module(module_name), name=module_name)

    def load_entry_points(self) -> None:
        """Register the ``cuedeck`` entry points the allow and deny lists let through, in
        reverse name order (pluggy calls them by name)."""
        allow = _names("CUEDECK_LOAD_PLUGINS")
        deny = _names("CUEDECK_DISABLE_PLUGINS") or set()
        found = entry_points(hookspecs.PROJECT)  # cached while the installation is unchanged
        for ep in sorted(found, key=lambda e: e.name, reverse=True):
            if (allow is not None and ep.name not in allow) or ep.name in deny:
                continue
            if self.pluggy.get_plugin(ep.name) is not None or self.pluggy.is_blocked(ep.name):
                continue
            self.distributions[ep.name] = ep
            try:
                self.register(ep.load(), name=ep.name)
            except Exception as exc:  # a broken plugin must not stop CueDeck
                self._failed(ep.name, exc)
                del self.distributions[ep.name]
                log.warning("plugin %r failed to load and was skipped: %s", ep.name, exc)

    def _failed(self, name: str, exc: Exception) -> None:
        dist = self.distributions.get(name)
        error = f"{type(exc).__name__}: {exc}"
        self.failures.append(PluginFailure(name, dist.distribution if dist else None, error))

    # -- calling hooks -----------------------------------------------------------------------

    def call(self, hook_name: str, **kwargs: Any) -> list[Any]:
        """Call a hook through pluggy, each implementation under its plugin's name and
        isolated (see the module); the implementations' results, as pluggy returns them."""
        results: list[Any] = self._caller(hook_name)(**kwargs)
        return results

    def first(self, hook_name: str, **kwargs: Any) -> Any:
        """Call a ``firstresult`` hook (see :meth:`call`): the first implementation's
        answer that is not None, or None when none answers; one that fails is skipped."""
        return self._caller(hook_name)(**kwargs)

    def implementers(self, hook_name: str) -> list[str]:
        """The plugins implementing ``hook_name``, in the order pluggy calls them."""
        caller = getattr(self.pluggy.hook, hook_name)
        return [impl.plugin_name for impl in reversed(caller.get_hookimpls())]

    def _caller(self, hook_name: str) -> pluggy.HookCaller:
        """The hook's caller: every implementation it holds is guarded already (a stand-in's)."""
        caller: pluggy.HookCaller = getattr(self.pluggy.hook, hook_name)
        return caller

    def hook_failed(self, plugin: str, hook_name: str, exc: Exception) -> None:
        """Record that ``plugin``'s implementation of ``hook_name`` raised ``exc``."""
        self._failed(plugin, exc)
        log.warning("plugin %r failed in %s and was skipped: %s", plugin, hook_name, exc)

    def collect(self, hook_name: str) -> dict[str, Registered]:
        """Run one ``register_*`` hook, recording who registered what (once per host).

        A taken name is an error naming both plugins unless one of them passed
        ``replace=True``.
        """
        registry = self._registries.get(hook_name)
        if registry is None:
            registry = Registry(hook_name)

            def register(*args: Any, **kwargs: Any) -> None:
                plugin = CALLING.get()
                if plugin is None:
                    raise InvalidInput(
                        f"{hook_name}: register was called outside a hook implementation",
                        field="register",
                    )
                registry.registrar(plugin)(*args, **kwargs)

            self.call(hook_name, register=register)
            self._registries[hook_name] = registry
        return registry.items

    def items(self, hook_name: str) -> dict[str, Any]:
        """What ``hook_name`` registered, by name, without the owners."""
        return {name: entry.item for name, entry in self.collect(hook_name).items()}

    def source_of(self, hook_name: str, name: str) -> str:
        """The plugin that registered ``name`` through ``hook_name``."""
        return self.collect(hook_name)[name].plugin

    def tools(self) -> dict[str, Tool]:
        """Tools by name, wrapped with their metadata (built once per host); a tool
        registered by import path is imported when first used."""
        if self._tools is None:
            from cuedeck.plugins.tools import Tool

            self._tools = {
                name: Tool.from_function(
                    entry.item, name=name, plugin=entry.plugin, **entry.options
                )
                for name, entry in self.collect("register_tools").items()
            }
        return self._tools

    def checked_tools(self) -> dict[str, Tool]:
        """The tools that load and pass their checks (each one imported now); a tool that
        does not is logged, recorded as a failure of its plugin and left out."""
        if self._checked_tools is None:
            tools = self.tools()
            self._checked_tools = {name: tools[name] for name in self.checked(tools)}
        return self._checked_tools

    def checked(self, names: Iterable[str]) -> list[str]:
        """Those of the tools ``names`` that load and pass their checks, each imported now
        (once); one that does not is logged, recorded as a failure of its plugin (once)
        and left out."""
        tools = self.tools()
        passed = []
        for name in names:
            tool = tools[name]
            try:
                tool.check()
            except CueError as exc:  # one broken tool must not take the others down
                if name not in self._broken:
                    self._broken.add(name)
                    self._failed(tool.plugin, exc)
                    log.warning("tool %r was skipped: %s", name, exc)
                continue
            passed.append(name)
        return passed

    def errors_of(self, name: str) -> dict[str, int]:
        """The error classes of plugin ``name`` by class name, with their codes: the
        :class:`~cuedeck.errors.CueError` subclasses of its package's ``errors`` module
        (where a plugin keeps them, codes reserved in docs/errors.md); core's are not a
        plugin's."""
        plugin = _plugin(self.pluggy.get_plugin(name))
        module = getattr(plugin, "__module__", None) or getattr(plugin, "__name__", None)
        package = str(module or "").split(".", 1)[0]
        if not package or package == hookspecs.PROJECT:
            return {}
        try:
            errors = importlib.import_module(f"{package}.errors")
        except ModuleNotFoundError:
            return {}
        return {
            value.__name__: value.code
            for value in vars(errors).values()
            if isinstance(value, type)
            and issubclass(value, CueError)
            and value.__module__ == errors.__name__
        }

    def infos(self) -> list[PluginInfo]:
        """Loaded plugins with their distribution, version, implemented hooks and the
        pluggy markers of those implementations."""
        infos = []
        for name, plugin in sorted(self.pluggy.list_name_plugin(), key=lambda pair: pair[0]):
            if plugin is None:
                continue
            callers = self.pluggy.get_hookcallers(plugin) or ()
            hooks = tuple(sorted(caller.name for caller in callers))
            markers = {
                caller.name: marked
                for caller in callers
                for impl in caller.get_hookimpls()
                if impl.plugin is plugin
                and (marked := tuple(m for m in _MARKERS if getattr(impl, m)))
            }
            dist = self.distributions.get(name)
            if dist is None and name in DEFAULT_PLUGINS:
                infos.append(PluginInfo(name, "cuedeck-core", _core_version(), hooks, markers))
                continue
            version = dist.version if dist else None
            source = dist.distribution if dist else None
            infos.append(PluginInfo(name, source, version, hooks, markers))
        return infos


def _plugin(held: object) -> object:
    """The plugin a stand-in pluggy holds stands for (None stays None: a blocked name)."""
    return held.plugin if isinstance(held, StandIn) else held


def _core_version() -> str | None:
    import importlib.metadata

    try:
        return importlib.metadata.version("cuedeck-core")
    except importlib.metadata.PackageNotFoundError:
        return None


def _names(var: str) -> set[str] | None:
    raw = os.environ.get(var)
    if raw is None:
        return None
    return {part.strip() for part in raw.split(",") if part.strip()}


def make_plugin_host(*, entry_points: bool = True) -> PluginHost:
    """A fresh plugin host with core's plugins and, unless disabled, the installed ones."""
    host = PluginHost()
    if entry_points:
        host.load_entry_points()
    host.load_defaults()
    host.pluggy.check_pending()
    return host


def get_searchers(host: PluginHost) -> dict[str, SearcherFactory]:
    """Searcher factories by mode name: ``factory(workspace) -> Searcher``."""
    return host.items("register_searchers")


def get_maskers(host: PluginHost) -> dict[str, Masker]:
    """Maskers by name."""
    return host.items("register_maskers")


def get_token_counters(host: PluginHost) -> dict[str, TokenCounter]:
    """Token counters that work on this machine, by name."""
    return {k: v for k, v in host.items("register_token_counters").items() if v is not None}


def get_checks(host: PluginHost) -> dict[str, Callable[[Any], Any]]:
    """Health checks for ``cue doctor`` by name: ``check(workspace) -> [Problem]``."""
    return host.items("register_checks")


def get_processes(host: PluginHost) -> dict[str, Callable[[Any], Any]]:
    """Background process listers by name: ``lister(workspace) -> [BackgroundProcess]``."""
    return host.items("register_processes")


def get_services(host: PluginHost) -> dict[str, Callable[[Any], Any]]:
    """Workspace service factories by name."""
    return host.items("register_services")


def get_init_steps(host: PluginHost) -> dict[str, InitStep]:
    """Steps ``cue init`` offers by name (``--NAME`` / ``--no-NAME``)."""
    return host.items("register_init_steps")


def get_scene_sources(host: PluginHost) -> dict[str, SceneSource]:
    """Scene sources by name: ``source(workspace, card_id) -> [SceneExtra]``."""
    return host.items("register_scene_sources")


def get_code_indexers(host: PluginHost) -> dict[str, GraphExtractor | ScipIndexer]:
    """Code indexers by name: syntactic extractors and SCIP indexers."""
    return host.items("register_code_indexers")


def get_code_rankers(host: PluginHost) -> dict[str, CodeRanker]:
    """Code rankers by name: ``ranker.rank(workspace, query) -> [RankedSymbol]``."""
    return host.items("register_code_rankers")


def get_embedders(host: PluginHost) -> dict[str, Callable[[Any], Embedder]]:
    """Embedder factories by name: ``factory(workspace) -> Embedder``."""
    return host.items("register_embedders")


def get_parsers(host: PluginHost) -> Parsers:
    """The registered parsers, matched against paths by :meth:`Parsers.claim`."""
    from cuedeck.index.parsers import build_parsers

    return build_parsers(host.collect("register_parsers"))


def get_places(host: PluginHost) -> Places:
    """Core's places (:data:`~cuedeck.layout.CORE_PLACES`) with those the plugins
    registered through ``register_paths``, built once per host. A name that is not one
    entry under ``.cuedeck/`` (empty, with a ``/`` inside, ``.`` or ``..``) or a kind that
    is neither ``private`` nor ``control`` is InvalidInput naming the plugin."""
    if host._places is None:
        private, control = set(CORE_PLACES.private), set(CORE_PLACES.control)
        gitignore = list(CORE_PLACES.gitignore)
        for name, entry in host.collect("register_paths").items():
            place = place_name(name)
            if place in ("", ".", "..") or "/" in place or entry.item not in PATH_KINDS:
                raise InvalidInput(
                    f"register_paths: plugin {entry.plugin!r} registered {name!r} as "
                    f"{entry.item!r}; expected one entry under {WORKSPACE_DIR}/ as "
                    "'private' or 'control'",
                    field="register_paths",
                    help=f"fix or disable the plugin {entry.plugin!r} (CUEDECK_DISABLE_PLUGINS)",
                )
            (private if entry.item == "private" else control).add(place)
            if entry.options.get("gitignore"):
                gitignore.append(f"{WORKSPACE_DIR}/{name}")
        host._places = Places(frozenset(private), frozenset(control), tuple(gitignore))
    return host._places


def get_settings(host: PluginHost) -> dict[str, type]:
    """Config sections by TOML table name (attrs classes of settings), core's first."""
    return host.items("register_settings")


def hook_names() -> list[str]:
    """Every hook of the contract."""
    return sorted(
        name
        for name, value in inspect.getmembers(hookspecs, inspect.isfunction)
        if hasattr(value, hookspecs.PROJECT + "_spec")
    )
