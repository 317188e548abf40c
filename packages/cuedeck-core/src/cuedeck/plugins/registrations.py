"""What one ``register_*`` hook gathered: items by name, each with the plugin that gave it.

Most hooks register ``register(name, item)``. Hooks whose items carry their own name
register ``register(item, *, name=None)``: a tool is named by its function, a command
by its ``.name`` (either, registered by import path, by the part after ``:``). Either
way a taken name is refused, naming both plugins, unless one of them passed
``replace=True``: that one holds the name whichever plugin pluggy called first (two
plugins replacing one name is refused).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from cuedeck.errors import InvalidInput

if TYPE_CHECKING:
    from collections.abc import Callable


def _tool_name(target: Any) -> str | None:
    if isinstance(target, str):  # "package.module:function"
        return target.rpartition(":")[2]
    return getattr(target, "__name__", None)


def _command_name(command: Any) -> str | None:
    if isinstance(command, str):  # "package.module:attribute", imported when needed
        return command.rpartition(":")[2]
    return getattr(command, "name", None)


#: Hooks whose ``register`` takes the item first, and how the item names itself.
DERIVED_NAMES: dict[str, Callable[[Any], str | None]] = {
    "register_tools": _tool_name,
    "register_commands": _command_name,
}


@attrs.frozen
class Registered:
    """An item a plugin registered, with the plugin's name."""

    name: str
    item: Any
    plugin: str
    options: dict[str, Any] = attrs.field(factory=dict)
    #: Registered with ``replace=True``: it takes the name over from whoever else has it.
    replace: bool = False


class Registry:
    """The items of one hook by name, in registration order (later plugins may replace)."""

    def __init__(self, hook_name: str) -> None:
        self.hook_name = hook_name
        self.items: dict[str, Registered] = {}

    def registrar(self, plugin: str) -> Callable[..., None]:
        """The ``register`` callback handed to ``plugin``'s implementation of the hook."""
        derive = DERIVED_NAMES.get(self.hook_name)
        if derive is None:

            def register_named(
                name: str, item: Any, *, replace: bool = False, **options: Any
            ) -> None:
                self.add(Registered(name, item, plugin, options, replace))

            return register_named

        def register_item(
            item: Any, *, name: str | None = None, replace: bool = False, **options: Any
        ) -> None:
            chosen = name or derive(item) or ""
            self.add(Registered(chosen, item, plugin, options, replace))

        return register_item

    def add(self, entry: Registered) -> None:
        """Record ``entry``. A taken name is InvalidInput naming both plugins, unless
        exactly one of the two passed ``replace=True``: that one keeps the name."""
        if not isinstance(entry.name, str) or not entry.name:
            raise InvalidInput(
                f"{self.hook_name}: plugin {entry.plugin!r} registered an empty name",
                field="name",
            )
        previous = self.items.get(entry.name)
        if previous is None or (entry.replace and not previous.replace):
            self.items[entry.name] = entry
        elif previous.replace and not entry.replace:
            return  # the name was taken over on purpose, before this plugin was called
        elif previous.replace and entry.replace:
            raise InvalidInput(
                f"{self.hook_name}: {entry.name!r} is replaced by both {previous.plugin!r} "
                f"and {entry.plugin!r}",
                field="name",
                help="disable one plugin with CUEDECK_DISABLE_PLUGINS",
            )
        else:
            raise InvalidInput(
                f"{self.hook_name}: {entry.name!r} is registered by both {previous.plugin!r} "
                f"and {entry.plugin!r}",
                field="name",
                help="pass replace=True to take the name over on purpose, "
                "or disable one plugin with CUEDECK_DISABLE_PLUGINS",
            )
