"""The git merge driver for cards: installed by ``cue init``, run by git, checked by doctor.

Git merges a file with a custom driver when ``.gitattributes`` names one for it and the
repository's config says how to run it::

    # .gitattributes (committed)
    .cuedeck/cards/*.md merge=cuedeck-card
    # .git/config (each clone's own: cloning does not copy it)
    [merge "cuedeck-card"]
        name = CueDeck card merge
        driver = cue card merge-driver %O %A %B %P

Git then runs ``cue card merge-driver BASE OURS THEIRS PATH`` for every card changed on
both sides; the driver writes the merge into OURS (:func:`cuedeck_tasks.cardmerge.
merge_card`) and exits 0, or 1 when it wrote a conflict. A clone whose config lacks the
driver merges cards line by line, as git always does; ``cue doctor`` says so, and ``cue
init --merge-driver`` installs it there.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import attrs
import click

from cuedeck.errors import CueError
from cuedeck.layout import CARDS_DIR

if TYPE_CHECKING:
    import subprocess

DRIVER = "cuedeck-card"
ATTRIBUTES = ".gitattributes"
ATTRIBUTES_LINE = f"{CARDS_DIR}/*.md merge={DRIVER}"
QUESTION = (
    "Install the git merge driver for cards (.gitattributes and this clone's git config), "
    "so cards changed on two branches merge field by field?"
)


@attrs.frozen
class DriverState:
    """Whether the workspace is in git, ``.gitattributes`` names the driver for cards,
    and this clone's config says how to run it (the command, or None)."""

    in_git: bool
    attributes: bool
    command: str | None


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[bytes] | None:
    """``git args`` in the repository of ``root`` (core's one git runner), or None when
    ``root`` is in none."""
    from cuedeck.system.git import Git, GitTimedOut, find_repository

    repository = find_repository(root)
    if repository is None:
        return None
    try:
        return Git(repository, cwd=root).run(args, timeout=30)
    except (OSError, GitTimedOut) as exc:
        raise CueError(f"git could not run: {exc}", help="install git") from None


def driver_state(root: Path) -> DriverState:
    """How the merge driver stands in the workspace at ``root``."""
    configured = _git(root, "config", "--local", "--get", f"merge.{DRIVER}.driver")
    if configured is None:
        return DriverState(False, False, None)
    attributes = root / ATTRIBUTES
    try:
        lines = attributes.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        lines = []
    command = configured.stdout.decode("utf-8", "replace").strip()
    named = configured.returncode == 0 and bool(command)
    return DriverState(
        True,
        ATTRIBUTES_LINE in (line.strip() for line in lines),
        command or None if named else None,
    )


def driver_command() -> str:
    """The command git runs: ``cue card merge-driver %O %A %B %P``, with ``cue`` as found
    on PATH when that is this installation's, else by its full path."""
    here = Path(sys.executable).with_name("cue")
    on_path = shutil.which("cue")
    if on_path and here.exists() and Path(on_path).resolve() == here.resolve():
        program = "cue"
    elif here.exists():
        program = shlex.quote(str(here))
    else:
        program = f"{shlex.quote(sys.executable)} -m cuedeck_cli"
    return f"{program} card merge-driver %O %A %B %P"


def install(root: Path) -> list[str]:
    """Add the driver to ``.gitattributes`` and this clone's git config (what is missing);
    what was done, one line each."""
    from cuedeck.writes import write_file

    state = driver_state(root)
    if not state.in_git:
        return []
    done = []
    if not state.attributes:
        path = root / ATTRIBUTES
        existing = path.read_text(encoding="utf-8") if path.exists() else ""
        prefix = "" if not existing or existing.endswith("\n") else "\n"
        block = f"{prefix}# CueDeck: cards merge field by field (cue card merge-driver)\n"
        write_file(root, path, existing + block + ATTRIBUTES_LINE + "\n", display=ATTRIBUTES)
        done.append(f"added the card merge driver to {ATTRIBUTES} ({CARDS_DIR}/*.md)")
    if state.command is None:
        for key, value in (("name", "CueDeck card merge"), ("driver", driver_command())):
            result = _git(root, "config", "--local", f"merge.{DRIVER}.{key}", value)
            if result is None or result.returncode != 0:
                why = result.stderr.decode("utf-8", "replace").strip() if result else ""
                raise CueError(
                    f"git config could not record the merge driver: {why}",
                    help=f"run: git config merge.{DRIVER}.driver '{driver_command()}'",
                )
        done.append(f"recorded the card merge driver in this clone's git config (merge.{DRIVER})")
    return done


class MergeDriverStep:
    """The ``cue init`` step that installs the driver (``--merge-driver``)."""

    question = QUESTION

    def needed(self, root: Path) -> bool:
        """Whether the workspace is in git and lacks part of the driver."""
        state = driver_state(root)
        return state.in_git and not (state.attributes and state.command)

    def run(self, root: Path) -> list[str]:
        """Install what is missing."""
        return install(root)


@click.command("merge-driver")
@click.argument("base", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("ours", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("theirs", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("path", required=False, default="card")
def merge_driver(base: Path, ours: Path, theirs: Path, path: str) -> None:
    """Git's merge driver for cards: merge BASE and THEIRS into OURS (cue init installs it).

    Exits 1 when a field was changed two ways (the conflict is written between markers).
    """
    from cuedeck.writes import atomic_write
    from cuedeck_tasks.cardmerge import merge_card

    def read(file: Path) -> str:
        try:
            return file.read_bytes().decode("utf-8")
        except FileNotFoundError:
            return ""
        except UnicodeDecodeError:
            raise CueError(f"{path} is not UTF-8 text: merge it by hand", path=path) from None

    merged = merge_card(read(base), read(ours), read(theirs), path=path)
    # OURS is git's temporary copy of our side (named by git): the merge replaces it.
    atomic_write(ours, merged.text.encode("utf-8"), display=path)
    if merged.conflicts:
        click.echo(
            f"{path}: {merged.conflicts} conflict(s) written between <<<<<<< and >>>>>>>",
            err=True,
        )
        click.get_current_context().exit(1)
