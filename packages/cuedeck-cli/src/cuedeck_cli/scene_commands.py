"""``cue scene`` and ``cue watch``: build the active card's scene, once or on every change."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any

import click

from cuedeck.errors import CueError, FileNotFound
from cuedeck.layout import CONFIG_PATH, STATE_PATH
from cuedeck_cli.context import current_state
from cuedeck_cli.output import emit_json, print_error

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from cuedeck.scene import Scene
    from cuedeck.workspace import Workspace

FORMATS = ("markdown", "xml", "json")


class Clipboard:
    """Copies scenes to the system clipboard; says once when there is none."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.missing: str | None = None

    def copy(self, text: str) -> bool:
        """Whether ``text`` is on the clipboard now. Never fails: no clipboard is a note."""
        if not self.enabled or self.missing is not None:
            return False
        import pyperclip

        try:
            pyperclip.copy(text)
        except pyperclip.PyperclipException as exc:
            reason = str(exc).split(".")[0].strip() or type(exc).__name__
            self.missing = reason
            click.secho(
                "note: no clipboard here (headless or remote session?): the scene is only "
                f"in the output file [{reason}]",
                err=True,
                fg="yellow",
            )
            return False
        return True


def _options(function: Any) -> Any:
    """The options ``cue scene`` and ``cue watch`` share."""
    for decorator in reversed(
        [
            click.argument("card_id", required=False),
            click.option(
                "--token-limit",
                type=click.IntRange(min=1),
                help="Token budget (default: [scene] token_limit, 32000).",
            ),
            click.option(
                "--format",
                "format_",
                type=click.Choice(FORMATS),
                help="Output format (default: [scene] format, markdown).",
            ),
            click.option("--pruner", help="Registered pruner (default: [scene] pruner, outline)."),
            click.option(
                "--clipboard/--no-clipboard",
                default=None,
                help="Copy the scene to the clipboard (default: [scene] clipboard).",
            ),
            click.option(
                "--since",
                help="Add the files changed since this git ref or task snapshot, as hunks.",
            ),
            click.option(
                "--stack",
                "stack_file",
                type=click.File("r", encoding="utf-8", errors="replace"),
                help="A file (- for stdin) holding an error's traceback or failing test "
                "output: related code follows its frames.",
            ),
        ]
    ):
        function = decorator(function)
    return function


def _build(
    workspace: Workspace,
    card_id: str | None,
    token_limit: int | None,
    format_: str | None,
    pruner: str | None,
    *,
    since: str | None = None,
    stack: str | None = None,
    record: bool = True,
) -> Scene:
    from cuedeck.scene import build_scene

    return build_scene(
        workspace,
        card_id,
        token_limit,
        format=format_,
        pruner=pruner,
        since=since,
        stack=stack,
        record=record,
    )


@click.command()
@_options
@click.option("-d", "--dry-run", is_flag=True, help="Print the scene; write and copy nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the manifest as JSON (docs/scene.md).")
@click.option(
    "--check",
    is_flag=True,
    help="Write nothing; fail with error 1006 if the scene file is out of date.",
)
@click.option(
    "--strict",
    is_flag=True,
    help="Fail (error 1001) when an included file has a dead reference or anchor, or an "
    "orphaned code reference.",
)
def scene(
    card_id: str | None,
    token_limit: int | None,
    format_: str | None,
    pruner: str | None,
    clipboard: bool | None,
    since: str | None,
    stack_file: Any,
    dry_run: bool,
    as_json: bool,
    check: bool,
    strict: bool,
) -> None:
    """Pack the active card and what it references into .cuedeck/SCENE.md.

    CARD_ID defaults to the card set by `cue card activate`, else the most recently
    updated card with status: active. Secrets are masked; the scene never exceeds the
    token budget. The scene is also copied to the clipboard.
    """
    from cuedeck.scene import check_scene, write_scene

    workspace = current_state().workspace
    stack = stack_file.read() if stack_file is not None else None
    # A dry run or a check writes nothing, not even the first record of a code reference.
    record = not (dry_run or check)
    built = _build(
        workspace, card_id, token_limit, format_, pruner, since=since, stack=stack, record=record
    )
    missing = built.manifest["missing"]
    if strict and missing:
        first = missing[0]
        raise FileNotFound(
            f"{len(missing)} reference(s) of the scene lead nowhere; first: {first['message']}",
            path=first["path"],
            line=first["line"],
            missing=missing,
            help="fix or remove them (the manifest lists each), or build without --strict",
        )
    output = workspace.config.scene.output
    if check:
        check_scene(workspace, built)
        if as_json:
            emit_json({"fresh": True, "output": output, "card": built.card})
        else:
            click.echo(f"{output} is up to date ({built.summary()})")
        return
    if dry_run:
        if as_json:
            emit_json(built.manifest)
        else:
            sys.stdout.write(built.text)
        return
    changed = write_scene(workspace, built)
    use_clipboard = workspace.config.scene.clipboard if clipboard is None else clipboard
    copied = Clipboard(use_clipboard).copy(built.text)
    if as_json:
        emit_json(built.manifest)
        return
    verb = "wrote" if changed else "unchanged:"
    note = "; copied to the clipboard" if copied else ""
    click.echo(f"{verb} {output}: {built.summary()}{note}")


def relevant_changes(
    root: Path, output: Path, indexed: frozenset[str] = frozenset()
) -> Callable[[str], bool]:
    """Whether a changed workspace-relative path matters to a scene: markdown, config, the
    active-card state and the ``indexed`` files (source files a scene may cite or
    relate); never our output nor a hidden file (atomic writes' and editors' temporary
    files). The watch itself skips the cache and version-control folders."""
    try:
        ours = output.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        ours = None

    def accept(rel: str) -> bool:
        name = rel.rsplit("/", 1)[-1]
        if rel == ours or name.startswith("."):
            return False
        return rel in (CONFIG_PATH, STATE_PATH) or name.endswith(".md") or rel in indexed

    return accept


@click.command()
@_options
def watch(
    card_id: str | None,
    token_limit: int | None,
    format_: str | None,
    pruner: str | None,
    clipboard: bool | None,
    since: str | None,
    stack_file: Any,
) -> None:
    """Rebuild the scene whenever a card, doc, indexed file or the config changes.

    Changes within [watch] debounce_ms (500) of each other make one rebuild, after the
    last of them. Prints one line per rebuild; errors are reported and watching goes
    on. Stop with Ctrl-C.
    """
    from cuedeck.scene import output_path
    from cuedeck.watch.files import FileWatch
    from cuedeck.workspace import open_workspace

    state = current_state()
    first = state.workspace
    root = first.root
    stack = stack_file.read() if stack_file is not None else None
    debounce = max(first.config.watch.debounce_ms, 0) / 1000
    output = output_path(first)
    use_clipboard = first.config.scene.clipboard if clipboard is None else clipboard
    board = Clipboard(use_clipboard)

    def rebuild(reason: str) -> None:
        started = time.perf_counter()
        stamp = time.strftime("%H:%M:%S")
        try:
            # A fresh workspace each time: the config may have changed too.
            from cuedeck.scene import write_scene

            workspace = open_workspace(root, plugins=state.plugins)
            built = _build(
                workspace, card_id, token_limit, format_, pruner, since=since, stack=stack
            )
            changed = write_scene(workspace, built)
            board.copy(built.text)
        except CueError as exc:
            click.echo(f"{stamp} failed ({reason}); still watching", err=True)
            print_error(exc)
            return
        except Exception as exc:  # a bug must not end the watch either
            click.echo(f"{stamp} failed ({reason}): {type(exc).__name__}: {exc}", err=True)
            return
        took = (time.perf_counter() - started) * 1000
        verb = "rebuilt" if changed else "unchanged"
        click.echo(
            f"{stamp} {verb} {workspace.config.scene.output} ({reason}): "
            f"{built.summary()} in {took:.0f} ms"
        )

    click.echo(f"watching {root} (debounce {debounce * 1000:.0f} ms); Ctrl-C to stop", err=True)
    accept = relevant_changes(root, output, frozenset(first.fresh_index().paths))
    try:
        # In place once built: the first scene is built after, so no change slips by.
        with FileWatch(root, accept=accept, debounce=debounce) as files:
            rebuild("start")
            for changes in files.batches(tick=0.2):  # ticks: Ctrl-C is heard
                if not changes:
                    continue
                names = sorted(changes.paths) or ["a folder"]
                more = f" and {len(names) - 1} more" if len(names) > 1 else ""
                rebuild(f"{names[0]} changed{more}")
    except KeyboardInterrupt:
        pass
    click.echo("stopped watching", err=True)


COMMANDS: tuple[click.Command, ...] = (scene, watch)
