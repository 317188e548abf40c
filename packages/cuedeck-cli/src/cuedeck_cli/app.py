"""The ``cue`` command group, built fresh by :func:`make_cli`.

Every command comes from the ``register_commands`` hook, CueDeck's own included
(cuedeck-cli registers them by entry point, like any plugin). A command registered by
import path is imported when it runs, or when ``cue --help`` lists it without the help
line its registration declared; so ``cue search`` imports no other command. A command
reaches the
workspace through :mod:`cuedeck_cli.context`. Every failure (a CueError, a usage error,
a command of an extra that is not installed) leaves as ``error[CODE]: ...`` on stderr,
or as ``{"error": {...}}`` on stdout for a ``--json`` command, with exit status 1; an
unexpected exception the same way, with the traceback only under ``--debug``.
"""

from __future__ import annotations

import gc
import importlib
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn

import click

from cuedeck.errors import CueError, InvalidInput, MissingExtra
from cuedeck.plugins.host import make_plugin_host
from cuedeck_cli.context import CliState

if TYPE_CHECKING:
    from collections.abc import Sequence

    from cuedeck.masking.session import MaskSession
    from cuedeck.plugins.host import PluginHost

#: Commands that an optional distribution provides, and its extra.
COMMAND_EXTRAS = {
    "search": "search",
    "card": "tasks",
    "open": "tasks",
    "mcp": "mcp",
    "memory": "memory",
}


class LazyCommand(NamedTuple):
    """A command registered by import path, not imported yet."""

    path: str  # "package.module:attribute"
    help: str | None  # the help line ``cue --help`` lists, as registered
    plugin: str


class CueGroup(click.Group):
    """The root group: CueDeck's error format for every failure, install hints for extras,
    commands imported when first needed, and every byte it prints masked
    (:func:`cuedeck_cli.output.masked_output`)."""

    json_errors = False
    state: CliState | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: Commands registered by import path that have not been imported, by name.
        self.lazy: dict[str, LazyCommand] = {}

    def main(self, args: Sequence[str] | None = None, *rest: Any, **extra: Any) -> Any:
        from cuedeck_cli.output import masked_output

        argv = list(sys.argv[1:] if args is None else args)
        # A command asked for JSON fails in JSON, usage errors included.
        self.json_errors = "--json" in argv
        with masked_output(lambda: _mask_session(self.state, argv)):
            return super().main(argv, *rest, **extra)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            self.fail(ctx, _usage_error(exc))

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is None and cmd_name in self.lazy:
            command = self._load(cmd_name)
        extra = COMMAND_EXTRAS.get(cmd_name)
        if command is None and extra is not None:
            raise MissingExtra.needs(
                f"`cue {cmd_name}` comes with the {extra} extra, which is not installed "
                "(or its plugin is disabled)",
                extra,
            )
        return command

    def _load(self, name: str) -> click.Command:
        """Import the command registered as ``name`` by path; a failure is 1004 naming it."""
        entry = self.lazy[name]
        module_name, _, attribute = entry.path.partition(":")
        try:
            # Whatever the import raises is the plugin's fault: one coded error, as for tools.
            command = getattr(importlib.import_module(module_name), attribute)
            if not isinstance(command, click.Command):
                raise TypeError(f"{type(command).__name__} object is not a click command")
        except Exception as exc:
            raise InvalidInput(
                f"command {name!r} from {entry.plugin!r} cannot be loaded from "
                f"{entry.path!r}: {type(exc).__name__}: {exc}",
                field="command",
                command=name,
                plugin=entry.plugin,
                target=entry.path,
                help=f"reinstall or fix the plugin {entry.plugin!r}, or disable it with "
                "CUEDECK_DISABLE_PLUGINS",
            ) from exc
        del self.lazy[name]
        self.add_command(command, name=name)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list of ``cue --help``: a command registered by path with its help
        line is listed from the registration, without importing it."""
        rows: list[tuple[str, click.Command]] = []
        for name in self.list_commands(ctx):
            lazy = self.lazy.get(name)
            if lazy is not None and lazy.help is not None:
                # A stand-in holding the registered line: click shortens it as its own.
                rows.append((name, click.Command(name, help=lazy.help)))
                continue
            try:
                command = self.get_command(ctx, name)
            except CueError as exc:  # one broken plugin must not hide the other commands
                logging.getLogger("cuedeck").warning("%s", exc.message)
                continue
            if command is not None and not command.hidden:
                rows.append((name, command))
        if not rows:
            return
        limit = formatter.width - 6 - max(len(name) for name, _ in rows)
        with formatter.section("Commands"):
            formatter.write_dl([(name, item.get_short_help_str(limit)) for name, item in rows])

    def invoke(self, ctx: click.Context) -> Any:
        from cuedeck.progress import reporting_to
        from cuedeck_cli.output import progress_reporter

        try:
            # Long work shows bars on a terminal, log lines when piped; --json answers
            # stay clean.
            with (
                progress_reporter() as reporter,
                reporting_to(None if self.json_errors else reporter),
            ):
                return super().invoke(ctx)
        except (click.exceptions.Exit, click.exceptions.Abort):
            raise
        except click.UsageError as exc:
            self.fail(ctx, _usage_error(exc))
        except click.ClickException:
            raise
        except CueError as exc:
            if _debug(ctx):
                raise
            self.fail(ctx, exc)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            ctx.exit(130)
        except BrokenPipeError:
            # The reader left (`cue search ... | head -1`): end quietly, as a command
            # killed by SIGPIPE does; what is still buffered goes to the null device.
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, sys.stdout.fileno())
            os.close(null)
            ctx.exit(141)
        except Exception as exc:
            if _debug(ctx):
                raise
            internal = CueError(
                f"internal error: {type(exc).__name__}: {exc}",
                help="rerun with --debug for the traceback, and report it",
            )
            self.fail(ctx, internal)

    def fail(self, ctx: click.Context, error: CueError) -> NoReturn:
        """Report ``error`` (as JSON on stdout for a ``--json`` command) and exit 1."""
        from cuedeck_cli.output import emit_json, print_error

        if self.json_errors:
            emit_json({"error": error.to_dict()})
        else:
            print_error(error)
        ctx.exit(1)


def _mask_session(state: CliState | None, argv: list[str]) -> MaskSession:
    """The session masking what a command prints: the workspace's maskers when it is
    open, else the built-in rules; it knows the secrets the command line itself holds,
    so an error echoing an argument (even normalised) is masked too."""
    from cuedeck.masking.session import MaskSession

    workspace = None
    if state is not None and "workspace" in state.__dict__:  # opened by the command
        workspace = state.workspace
    try:
        session = MaskSession() if workspace is None else workspace.mask_session()
    except CueError:  # a broken config: the built-in rules still apply
        session = MaskSession()
    for argument in argv:
        session.learn(argument)
    return session


def _usage_error(exc: click.UsageError) -> InvalidInput:
    """A click usage error as CueDeck's 1004, naming the option and where help is."""
    param = getattr(exc, "param", None)
    field = getattr(param, "name", None) or "arguments"
    command = exc.ctx.command_path if exc.ctx is not None else "cue"
    return InvalidInput(exc.format_message(), field=field, help=f"see `{command} --help`")


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


def _print_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    # click's version_option reads the versions when the group is built, for every
    # command; this reads them only for --version.
    if value and not ctx.resilient_parsing:
        click.echo(_version())
        ctx.exit()


def make_cli(plugins: PluginHost | None = None) -> click.Group:
    """A fresh ``cue`` group holding every command the plugins registered."""
    host = plugins or make_plugin_host()

    @click.group(
        "cue",
        cls=CueGroup,
        # The state is there before the group's callback runs, for `cue --help` too
        # (tool commands look their tool up in its plugins); the callback completes it.
        context_settings={
            "help_option_names": ["-h", "--help"],
            "obj": CliState(host, None, False),
        },
    )
    @click.option(
        "-C",
        "--workspace",
        "directory",
        type=click.Path(file_okay=False, path_type=Path),
        help="Run in this workspace instead of the one above the current directory.",
    )
    @click.option("--debug", is_flag=True, help="Show tracebacks and debug logs.")
    @click.option(
        "--version",
        is_flag=True,
        expose_value=False,
        is_eager=True,
        callback=_print_version,
        help="Show the version and exit.",
    )
    @click.pass_context
    def cli(ctx: click.Context, directory: Path | None, debug: bool) -> None:
        """CueDeck: working context for AI coding agents.

        Task cards and docs live in .cuedeck/; `cue scene` packs what the active card
        needs into a token-budgeted SCENE.md.
        """
        _configure_logging(debug)
        ctx.obj = CliState(host, directory, debug)
        cli.state = ctx.obj

    for name, entry in host.collect("register_commands").items():
        if isinstance(entry.item, str):  # "package.module:attribute", imported when needed
            cli.lazy[name] = LazyCommand(entry.item, entry.options.get("help"), entry.plugin)
        else:
            cli.add_command(entry.item, name=name)
    return cli


def main() -> None:
    """Console-script entry point of ``cue``."""
    # Young collections every 50,000 allocations instead of 700: a command that walks or
    # loads tens of thousands of files otherwise spends a tenth of its time collecting.
    gc.set_threshold(50_000, 20, 20)
    _configure_logging(debug="--debug" in sys.argv[1:])
    try:
        cli = make_cli()
    except CueError as exc:
        from cuedeck_cli.output import print_error

        print_error(exc)
        sys.exit(1)
    try:
        cli(prog_name="cue")
    finally:
        # The process is about to exit: the collection Python runs at exit would walk
        # every object the command made, a few percent of a short command, and free
        # nothing that matters now.
        gc.freeze()
