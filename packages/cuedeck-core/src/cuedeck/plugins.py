"""The plugin host and typed accessors over what plugins register.

``make_plugin_manager()`` returns a :class:`PluginHost`: pluggy's manager with the
hookspecs, core's own plugins (:data:`DEFAULT_PLUGINS`) and the ``cuedeck`` entry-point
group, every hookimpl checked against its spec, and CueDeck's records beside it.
``CUEDECK_LOAD_PLUGINS`` (comma-separated entry-point names) loads only those;
``CUEDECK_DISABLE_PLUGINS`` skips some. A plugin that fails to import
is logged and listed by ``cue plugins``; it never stops CueDeck.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import logging
import os
from typing import TYPE_CHECKING, Any

import attrs
import pluggy

from cuedeck import hookspecs
from cuedeck.errors import CueError
from cuedeck.registry import Registered, Registry

if TYPE_CHECKING:
    from collections.abc import Callable

    from cuedeck.hookspecs import (
        BaselineResolver,
        CodeRanker,
        Embedder,
        Masker,
        Pruner,
        SceneSource,
        Searcher,
    )
    from cuedeck.parsers import Parsers
    from cuedeck.tokens import TokenCounter
    from cuedeck.tools import Tool

log = logging.getLogger("cuedeck")

#: Core's own plugins, registered before any entry point: thin modules of ``@hookimpl``
#: functions that import the domain inside each hook, so loading them is cheap.
DEFAULT_PLUGINS: tuple[str, ...] = (
    "cuedeck.default_plugins.token_counters",
    "cuedeck.default_plugins.maskers",
    "cuedeck.default_plugins.pruners",
    "cuedeck.default_plugins.tools",
    "cuedeck.default_plugins.parsers",
)


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


class PluginHost:
    """Pluggy's plugin manager and what CueDeck keeps beside it.

    Beside the manager: where each plugin came from, which failed, and what the
    ``register_*`` hooks returned (each runs once per host; registering a plugin
    starts over).
    """

    def __init__(self) -> None:
        self.manager = pluggy.PluginManager(hookspecs.PROJECT)
        self.manager.add_hookspecs(hookspecs)
        self.distributions: dict[str, importlib.metadata.Distribution | None] = {}
        self.failures: list[PluginFailure] = []
        self._registries: dict[str, Registry] = {}
        self._tools: dict[str, Tool] | None = None
        self._checked_tools: dict[str, Tool] | None = None

    def __repr__(self) -> str:
        return f"PluginHost({[name for name, _ in self.manager.list_name_plugin()]!r})"

    # -- loading ---------------------------------------------------------------------------

    def register(self, plugin: object, name: str | None = None) -> str | None:
        """Register a plugin object or module (see :meth:`pluggy.PluginManager.register`)."""
        self._registries.clear()
        self._tools = self._checked_tools = None
        return self.manager.register(plugin, name=name)

    def list_name_plugin(self) -> list[tuple[str, Any]]:
        """``(name, plugin)`` pairs of every registered plugin."""
        return self.manager.list_name_plugin()

    def load_defaults(self) -> None:
        """Register core's own plugins (:data:`DEFAULT_PLUGINS`)."""
        for module_name in DEFAULT_PLUGINS:
            self.register(importlib.import_module(module_name), name=module_name)

    def load_entry_points(self) -> None:
        """Register the ``cuedeck`` entry points the allow and deny lists let through."""
        allow = _names("CUEDECK_LOAD_PLUGINS")
        deny = _names("CUEDECK_DISABLE_PLUGINS") or set()
        entry_points = importlib.metadata.entry_points(group=hookspecs.PROJECT)
        for ep in sorted(entry_points, key=lambda e: e.name):
            if (allow is not None and ep.name not in allow) or ep.name in deny:
                continue
            if self.manager.get_plugin(ep.name) is not None or self.manager.is_blocked(ep.name):
                continue
            self.distributions[ep.name] = ep.dist
            try:
                self.register(ep.load(), name=ep.name)
            except Exception as exc:  # a broken plugin must not stop CueDeck
                self._failed(ep.name, exc)
                del self.distributions[ep.name]
                log.warning("plugin %r failed to load and was skipped: %s", ep.name, exc)

    def _failed(self, name: str, exc: Exception) -> None:
        dist = self.distributions.get(name)
        error = f"{type(exc).__name__}: {exc}"
        self.failures.append(PluginFailure(name, dist.name if dist else None, error))

    # -- what plugins registered -------------------------------------------------------------

    def collect(self, hook_name: str) -> dict[str, Registered]:
        """Run one ``register_*`` hook plugin by plugin, recording who registered what.

        Hooks run once per host. A taken name is an error naming both plugins unless
        the newcomer passed ``replace=True``.
        """
        registry = self._registries.get(hook_name)
        if registry is None:
            registry = Registry(hook_name)
            # get_hookimpls() is in load order (core first), so later plugins may replace.
            for impl in getattr(self.manager.hook, hook_name).get_hookimpls():
                register = registry.registrar(impl.plugin_name)
                self._guarded(impl, dict.fromkeys(impl.argnames, register))
            self._registries[hook_name] = registry
        return registry.items

    def call_each(self, hook_name: str, **kwargs: Any) -> None:
        """Call every implementation of a hook, isolating plugins that raise."""
        for impl in getattr(self.manager.hook, hook_name).get_hookimpls():
            self._guarded(impl, {name: kwargs[name] for name in impl.argnames})

    def _guarded(self, impl: Any, kwargs: dict[str, Any]) -> None:
        """Run one hookimpl; a plugin that raises is logged and recorded, never fatal.

        CueErrors (such as a name registered twice) are real configuration errors and
        propagate.
        """
        try:
            impl.function(**kwargs)
        except CueError:
            raise
        except Exception as exc:
            self._failed(impl.plugin_name, exc)
            log.warning(
                "plugin %r failed in %s and was skipped: %s",
                impl.plugin_name,
                impl.function.__name__,
                exc,
            )

    def items(self, hook_name: str) -> dict[str, Any]:
        """What ``hook_name`` registered, by name, without the owners."""
        return {name: entry.item for name, entry in self.collect(hook_name).items()}

    def tools(self) -> dict[str, Tool]:
        """Tools by name, wrapped with their metadata (built once per host); a tool
        registered by import path is imported when first used."""
        if self._tools is None:
            from cuedeck.tools import Tool

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
            checked = {}
            for name, tool in self.tools().items():
                try:
                    tool.check()
                except CueError as exc:  # one broken tool must not take the others down
                    self._failed(tool.plugin, exc)
                    log.warning("tool %r was skipped: %s", name, exc)
                    continue
                checked[name] = tool
            self._checked_tools = checked
        return self._checked_tools

    def infos(self) -> list[PluginInfo]:
        """Loaded plugins with their distribution, version and implemented hooks."""
        infos = []
        for name, plugin in sorted(self.manager.list_name_plugin(), key=lambda pair: pair[0]):
            if plugin is None:
                continue
            callers = self.manager.get_hookcallers(plugin) or ()
            hooks = tuple(sorted(caller.name for caller in callers))
            dist = self.distributions.get(name)
            if dist is None and name in DEFAULT_PLUGINS:
                infos.append(PluginInfo(name, "cuedeck-core", _core_version(), hooks))
                continue
            version = dist.version if dist else None
            infos.append(PluginInfo(name, dist.name if dist else None, version, hooks))
        return infos


def _core_version() -> str | None:
    try:
        return importlib.metadata.version("cuedeck-core")
    except importlib.metadata.PackageNotFoundError:
        return None


def _names(var: str) -> set[str] | None:
    raw = os.environ.get(var)
    if raw is None:
        return None
    return {part.strip() for part in raw.split(",") if part.strip()}


def make_plugin_manager(*, entry_points: bool = True) -> PluginHost:
    """A fresh plugin host with core's plugins and, unless disabled, the installed ones."""
    host = PluginHost()
    host.load_defaults()
    if entry_points:
        host.load_entry_points()
    host.manager.check_pending()
    return host


def plugin_infos(pm: PluginHost) -> list[PluginInfo]:
    """Loaded plugins with their distribution, version and implemented hooks."""
    return pm.infos()


def plugin_failures(pm: PluginHost) -> list[PluginFailure]:
    """Entry points and hook implementations that failed."""
    return list(pm.failures)


def collect(pm: PluginHost, hook_name: str) -> dict[str, Registered]:
    """What one ``register_*`` hook registered, by name (see :meth:`PluginHost.collect`)."""
    return pm.collect(hook_name)


def call_each(pm: PluginHost, hook_name: str, **kwargs: Any) -> None:
    """Call every implementation of a hook, isolating plugins that raise."""
    pm.call_each(hook_name, **kwargs)


def get_searchers(pm: PluginHost) -> dict[str, Searcher]:
    """Search modes by name."""
    return pm.items("register_searchers")


def get_pruners(pm: PluginHost) -> dict[str, Pruner]:
    """Pruners by name, each held to the contract by :class:`~cuedeck.pruning.CheckedPruner`."""
    from cuedeck.pruning import CheckedPruner

    return {name: CheckedPruner(name, p) for name, p in pm.items("register_pruners").items()}


def get_maskers(pm: PluginHost) -> dict[str, Masker]:
    """Maskers by name."""
    return pm.items("register_maskers")


def get_token_counters(pm: PluginHost) -> dict[str, TokenCounter]:
    """Token counters that work on this machine, by name."""
    return {k: v for k, v in pm.items("register_token_counters").items() if v is not None}


def get_checks(pm: PluginHost) -> dict[str, Callable[[Any], Any]]:
    """Health checks for ``cue doctor`` by name: ``check(workspace) -> [Problem]``."""
    return pm.items("register_checks")


def get_services(pm: PluginHost) -> dict[str, Callable[[Any], Any]]:
    """Workspace service factories by name."""
    return pm.items("register_services")


def get_scene_sources(pm: PluginHost) -> dict[str, SceneSource]:
    """Scene sources by name: ``source(workspace, card_id) -> [SceneExtra]``."""
    return pm.items("register_scene_sources")


def get_baselines(pm: PluginHost) -> dict[str, BaselineResolver]:
    """Baseline resolvers by name: ``resolver(workspace, since) -> Baseline | None``."""
    return pm.items("register_baselines")


def get_code_rankers(pm: PluginHost) -> dict[str, CodeRanker]:
    """Code rankers by name: ``ranker.rank(workspace, query) -> [RankedSymbol]``."""
    return pm.items("register_code_rankers")


def get_embedders(pm: PluginHost) -> dict[str, Callable[[Any], Embedder]]:
    """Embedder factories by name: ``factory(workspace) -> Embedder``."""
    return pm.items("register_embedders")


def get_parsers(pm: PluginHost) -> Parsers:
    """The registered parsers, matched against paths by :meth:`Parsers.claim`."""
    from cuedeck.parsers import build_parsers

    return build_parsers(pm.collect("register_parsers"))


def get_tools(pm: PluginHost) -> dict[str, Tool]:
    """Tools by name, wrapped with their metadata (imported when first used)."""
    return pm.tools()


def check_tools(pm: PluginHost) -> dict[str, Tool]:
    """The tools that load and pass their checks, by name; the others are recorded as
    failures of their plugins (see :meth:`PluginHost.checked_tools`)."""
    return pm.checked_tools()


def source_of(pm: PluginHost, hook_name: str, name: str) -> str:
    """The plugin that registered ``name`` through ``hook_name``."""
    return pm.collect(hook_name)[name].plugin


def hook_names() -> list[str]:
    """Every hook of the contract."""
    return sorted(
        name
        for name, value in inspect.getmembers(hookspecs, inspect.isfunction)
        if hasattr(value, hookspecs.PROJECT + "_spec")
    )
