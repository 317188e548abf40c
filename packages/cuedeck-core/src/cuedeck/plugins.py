"""The plugin manager and typed accessors over what plugins register.

``make_plugin_manager()`` adds the hookspecs, registers core's own plugins
(:data:`DEFAULT_PLUGINS`), loads the ``cuedeck`` entry-point group and checks every
hookimpl against its spec. ``CUEDECK_LOAD_PLUGINS`` (comma-separated entry-point names)
loads only those; ``CUEDECK_DISABLE_PLUGINS`` skips some. A plugin that fails to import
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
from cuedeck.errors import InvalidInput

if TYPE_CHECKING:
    from collections.abc import Callable

    from cuedeck.hookspecs import Masker, Pruner, Searcher
    from cuedeck.tokens import TokenCounter
    from cuedeck.tools import Tool

log = logging.getLogger("cuedeck")

#: Core's own plugin modules, registered before any entry point. Keep them import-light.
DEFAULT_PLUGINS: tuple[str, ...] = (
    "cuedeck.tokens",
    "cuedeck.masking",
    "cuedeck.pruning",
    "cuedeck.scene",
    "cuedeck.reading",
    "cuedeck.guide",
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


@attrs.define
class _State:
    """What CueDeck keeps beside a plugin manager: where plugins came from, which failed,
    and what the register hooks returned (they run once per manager)."""

    distributions: dict[str, importlib.metadata.Distribution | None] = attrs.Factory(dict)
    failures: list[PluginFailure] = attrs.Factory(list)
    registry: dict[str, dict[str, Registered]] = attrs.Factory(dict)
    tools: dict[str, Tool] | None = None


def _state(pm: pluggy.PluginManager) -> _State:
    state: _State = pm.__dict__.setdefault("_cuedeck", _State())
    return state


def _failed(pm: pluggy.PluginManager, name: str, exc: Exception) -> None:
    dist = _state(pm).distributions.get(name)
    error = f"{type(exc).__name__}: {exc}"
    _state(pm).failures.append(PluginFailure(name, dist.name if dist else None, error))


def _names(var: str) -> set[str] | None:
    raw = os.environ.get(var)
    if raw is None:
        return None
    return {part.strip() for part in raw.split(",") if part.strip()}


def make_plugin_manager(*, entry_points: bool = True) -> pluggy.PluginManager:
    """A fresh plugin manager with core's plugins and, unless disabled, the installed ones."""
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    for module_name in DEFAULT_PLUGINS:
        pm.register(importlib.import_module(module_name), name=module_name)
    if entry_points:
        _load_entry_points(pm)
    pm.check_pending()
    return pm


def _load_entry_points(pm: pluggy.PluginManager) -> None:
    allow = _names("CUEDECK_LOAD_PLUGINS")
    deny = _names("CUEDECK_DISABLE_PLUGINS") or set()
    for ep in sorted(
        importlib.metadata.entry_points(group=hookspecs.PROJECT), key=lambda e: e.name
    ):
        if (allow is not None and ep.name not in allow) or ep.name in deny:
            continue
        if pm.get_plugin(ep.name) is not None or pm.is_blocked(ep.name):
            continue
        _state(pm).distributions[ep.name] = ep.dist
        try:
            pm.register(ep.load(), name=ep.name)
        except Exception as exc:  # a broken plugin must not stop CueDeck
            _failed(pm, ep.name, exc)
            del _state(pm).distributions[ep.name]
            log.warning("plugin %r failed to load and was skipped: %s", ep.name, exc)


def plugin_infos(pm: pluggy.PluginManager) -> list[PluginInfo]:
    """Loaded plugins with their distribution, version and implemented hooks."""
    infos = []
    dists = _state(pm).distributions
    for name, plugin in sorted(pm.list_name_plugin(), key=lambda pair: pair[0]):
        if plugin is None:
            continue
        hooks = tuple(sorted(impl.name for impl in pm.get_hookcallers(plugin) or ()))
        dist = dists.get(name)
        if dist is None and name in DEFAULT_PLUGINS:
            try:
                version: str | None = importlib.metadata.version("cuedeck-core")
            except importlib.metadata.PackageNotFoundError:
                version = None
            infos.append(PluginInfo(name, "cuedeck-core", version, hooks))
            continue
        infos.append(
            PluginInfo(name, dist.name if dist else None, dist.version if dist else None, hooks)
        )
    return infos


def plugin_failures(pm: pluggy.PluginManager) -> list[PluginFailure]:
    """Entry points that failed to load."""
    return list(_state(pm).failures)


@attrs.frozen
class Registered:
    """An item a plugin registered, with the plugin's name."""

    name: str
    item: Any
    plugin: str
    options: dict[str, Any] = attrs.field(factory=dict)


def collect(pm: pluggy.PluginManager, hook_name: str) -> dict[str, Registered]:
    """Run one ``register_*`` hook plugin by plugin, recording who registered what.

    Results are cached on the plugin manager (hooks run once per manager). A taken
    name is an error naming both plugins unless the newcomer passed ``replace=True``.
    """
    cache = _state(pm).registry
    if hook_name in cache:
        return cache[hook_name]
    found: dict[str, Registered] = {}
    caller = getattr(pm.hook, hook_name)
    # get_hookimpls() is in load order (core first), so later plugins may replace.
    for impl in caller.get_hookimpls():
        plugin_name = impl.plugin_name

        def register(
            name_or_item: Any,
            item: Any = None,
            *,
            replace: bool = False,
            _plugin: str = plugin_name,
            **options: Any,
        ) -> None:
            if hook_name == "register_tools":
                func = name_or_item
                name = options.pop("name", None) or func.__name__
                entry = Registered(name, func, _plugin, options)
            else:
                name, entry = name_or_item, Registered(name_or_item, item, _plugin, options)
            if not isinstance(name, str) or not name:
                raise InvalidInput(f"plugin {_plugin!r} registered an empty name", field="name")
            previous = found.get(name)
            if previous is not None and not replace:
                raise InvalidInput(
                    f"{hook_name}: {name!r} is registered by both {previous.plugin!r} and "
                    f"{_plugin!r}",
                    field="name",
                    help="pass replace=True to take the name over on purpose, "
                    "or disable one plugin with CUEDECK_DISABLE_PLUGINS",
                )
            found[name] = entry

        _guarded(pm, impl, dict.fromkeys(impl.argnames, register))
    cache[hook_name] = found
    return found


def _guarded(pm: pluggy.PluginManager, impl: Any, kwargs: dict[str, Any]) -> None:
    """Run one hookimpl; a plugin that raises is logged and recorded, never fatal.

    CueErrors (such as a name registered twice) are real configuration errors and
    propagate.
    """
    from cuedeck.errors import CueError

    try:
        impl.function(**kwargs)
    except CueError:
        raise
    except Exception as exc:
        _failed(pm, impl.plugin_name, exc)
        log.warning(
            "plugin %r failed in %s and was skipped: %s",
            impl.plugin_name,
            impl.function.__name__,
            exc,
        )


def call_each(pm: pluggy.PluginManager, hook_name: str, **kwargs: Any) -> None:
    """Call every implementation of a hook, isolating plugins that raise."""
    for impl in getattr(pm.hook, hook_name).get_hookimpls():
        _guarded(pm, impl, {name: kwargs[name] for name in impl.argnames})


def _items(pm: pluggy.PluginManager, hook_name: str) -> dict[str, Any]:
    return {name: entry.item for name, entry in collect(pm, hook_name).items()}


def get_searchers(pm: pluggy.PluginManager) -> dict[str, Searcher]:
    """Search modes by name."""
    return _items(pm, "register_searchers")


def get_pruners(pm: pluggy.PluginManager) -> dict[str, Pruner]:
    """Pruners by name."""
    return _items(pm, "register_pruners")


def get_maskers(pm: pluggy.PluginManager) -> dict[str, Masker]:
    """Maskers by name."""
    return _items(pm, "register_maskers")


def get_token_counters(pm: pluggy.PluginManager) -> dict[str, TokenCounter]:
    """Token counters that work on this machine, by name."""
    return {k: v for k, v in _items(pm, "register_token_counters").items() if v is not None}


def get_services(pm: pluggy.PluginManager) -> dict[str, Callable[[Any], Any]]:
    """Workspace service factories by name."""
    return _items(pm, "register_services")


def get_tools(pm: pluggy.PluginManager) -> dict[str, Tool]:
    """Tools by name, wrapped with their metadata."""
    from cuedeck.tools import Tool

    state = _state(pm)
    if state.tools is None:
        state.tools = {
            name: Tool.from_function(entry.item, name=name, plugin=entry.plugin, **entry.options)
            for name, entry in collect(pm, "register_tools").items()
        }
    return state.tools


def source_of(pm: pluggy.PluginManager, hook_name: str, name: str) -> str:
    """The plugin that registered ``name`` through ``hook_name``."""
    return collect(pm, hook_name)[name].plugin


def hook_names() -> list[str]:
    """Every hook of the contract."""
    return sorted(
        name
        for name, value in inspect.getmembers(hookspecs, inspect.isfunction)
        if hasattr(value, hookspecs.PROJECT + "_spec")
    )
