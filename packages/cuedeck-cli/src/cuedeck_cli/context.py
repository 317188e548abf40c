"""What every ``cue`` command shares, and how a command reaches it.

``make_cli()`` puts a :class:`CliState` on the click context; commands (CueDeck's and
plugins') take the workspace with :func:`pass_workspace`, or the whole state with
:func:`current_state`.
"""

from __future__ import annotations

import functools
import os
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from collections.abc import Callable

    from cuedeck.plugins.host import PluginHost
    from cuedeck.workspace import Workspace

F = TypeVar("F", bound="Callable[..., Any]")


class CliState:
    """The plugin host, the options of the root command and the (lazily opened)
    workspace: the :class:`~cuedeck.hookspecs.CommandContext` of every command."""

    def __init__(self, plugins: PluginHost, directory: Path | None, debug: bool) -> None:
        self.plugins = plugins
        self.directory = directory
        self.debug = debug

    @cached_property
    def workspace(self) -> Workspace:
        """The workspace at ``-C DIR``, ``CUE_WORKSPACE`` or above the cwd."""
        from cuedeck.workspace import open_workspace

        return open_workspace(self.directory, plugins=self.plugins)

    def emit_json(self, value: Any) -> None:
        """Print ``value`` as indented JSON on stdout."""
        from cuedeck_cli.output import emit_json

        emit_json(value)

    def console(self, *, stderr: bool = False) -> Any:
        """A rich console on stdout or stderr, plain when not a terminal."""
        from cuedeck_cli.output import console

        return console(stderr=stderr)

    @property
    def target_directory(self) -> Path:
        """Where ``cue init`` works: ``-C DIR``, else ``CUE_WORKSPACE``, else the cwd."""
        if self.directory is not None:
            return self.directory
        return Path(os.environ.get("CUE_WORKSPACE") or Path.cwd())


def current_state() -> CliState:
    """The state of the running ``cue`` command."""
    found = click.get_current_context().find_object(CliState)
    if found is None:
        raise RuntimeError("not inside a cue command (make_cli() sets the state)")
    return found


def pass_workspace(function: F) -> F:
    """Decorate a command callback to receive the open workspace as its first argument."""

    @functools.wraps(function)
    def with_workspace(*args: Any, **kwargs: Any) -> Any:
        return function(current_state().workspace, *args, **kwargs)

    return with_workspace  # type: ignore[return-value]
