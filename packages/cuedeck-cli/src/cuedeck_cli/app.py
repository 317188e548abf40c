"""The ``cue`` command group, built fresh by :func:`make_cli`.

Core commands live in :mod:`cuedeck_cli.commands`; installed plugins add theirs through
the ``register_commands`` hook. A command reaches the workspace as
``click.get_current_context().obj.workspace`` (a :class:`CliState`). Any
:class:`~cuedeck.errors.CueError` becomes ``error[CODE]: ...`` on stderr and exit
status 1; other exceptions are reported the same way, with the traceback only under
``--debug``.
"""

from __future__ import annotations

import logging
import sys
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from cuedeck.errors import CueError
from cuedeck.plugins import call_each, make_plugin_manager

if TYPE_CHECKING:
    from cuedeck.plugins import PluginHost
    from cuedeck.workspace import Workspace


class CliState:
    """What every command shares: the plugin manager and the (lazily opened) workspace."""

    def __init__(self, plugins: PluginHost, directory: Path | None, debug: bool) -> None:
        self.plugins = plugins
        self.directory = directory
        self.debug = debug

    @cached_property
    def workspace(self) -> Workspace:
        """The workspace at ``-C DIR``, ``CUE_WORKSPACE`` or above the cwd."""
        from cuedeck.workspace import open_workspace

        return open_workspace(self.directory, plugins=self.plugins)

    @property
    def target_directory(self) -> Path:
        """Where ``cue init`` works: ``-C DIR``, else ``CUE_WORKSPACE``, else the cwd."""
        import os

        if self.directory is not None:
            return self.directory
        return Path(os.environ.get("CUE_WORKSPACE") or Path.cwd())


class CueGroup(click.Group):
    """A click group that reports CueDeck errors as ``error[CODE]`` instead of tracebacks."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except CueError as exc:
            if _debug(ctx):
                raise
            from cuedeck_cli.output import print_error

            print_error(exc)
            ctx.exit(1)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            ctx.exit(130)
        except Exception as exc:
            if _debug(ctx):
                raise
            from cuedeck_cli.output import print_error

            internal = CueError(
                f"internal error: {type(exc).__name__}: {exc}",
                help="rerun with --debug for the traceback, and report it",
            )
            print_error(internal)
            ctx.exit(1)


def _debug(ctx: click.Context) -> bool:
    state = ctx.find_object(CliState)
    return bool(state and state.debug)


class _StderrHandler(logging.Handler):
    """Log records of the ``cuedeck`` logger as ``warning: ...`` lines on stderr."""

    def emit(self, record: logging.LogRecord) -> None:
        level = record.levelname.lower()
        text = record.getMessage()
        if record.exc_info:
            text += "\n" + logging.Formatter().formatException(record.exc_info)
        click.secho(f"{level}: {text}", err=True, fg="yellow")


def _configure_logging(debug: bool) -> None:
    logger = logging.getLogger("cuedeck")
    if not any(isinstance(h, _StderrHandler) for h in logger.handlers):
        logger.addHandler(_StderrHandler())
    logger.setLevel(logging.DEBUG if debug else logging.WARNING)
    logger.propagate = False


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    def get(name: str) -> str:
        try:
            return version(name)
        except PackageNotFoundError:
            return "not installed"

    return f"cue {get('cuedeck-cli')} (cuedeck-core {get('cuedeck-core')})"


def make_cli(plugins: PluginHost | None = None) -> click.Group:
    """A fresh ``cue`` group with core's commands and every plugin's."""
    pm = plugins or make_plugin_manager()

    @click.group(
        cls=CueGroup,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    @click.option(
        "-C",
        "--workspace",
        "directory",
        type=click.Path(file_okay=False, path_type=Path),
        help="Run in this workspace instead of the one above the current directory.",
    )
    @click.option("--debug", is_flag=True, help="Show tracebacks and debug logs.")
    @click.version_option(message="%(version)s", version=_version())
    @click.pass_context
    def cli(ctx: click.Context, directory: Path | None, debug: bool) -> None:
        """CueDeck: working context for AI coding agents.

        Task cards and docs live in .cuedeck/; `cue scene` packs what the active card
        needs into a token-budgeted SCENE.md.
        """
        _configure_logging(debug)
        ctx.obj = CliState(pm, directory, debug)

    from cuedeck_cli import commands

    for command in commands.CORE_COMMANDS:
        cli.add_command(command)
    call_each(pm, "register_commands", cli=cli)
    return cli


def main() -> None:
    """Console-script entry point of ``cue``."""
    _configure_logging(debug="--debug" in sys.argv[1:])
    try:
        cli = make_cli()
    except CueError as exc:
        from cuedeck_cli.output import print_error

        print_error(exc)
        sys.exit(1)
    cli(prog_name="cue")
