"""The one way CueDeck runs git: in the repository it found by path, with safe options.

Git finds its repository by looking upwards from its working directory, and takes any
folder holding ``HEAD``, ``objects/`` and ``refs/`` as one (a bare repository). A client
that may create files could make the workspace root such a folder and have git read a
config it wrote (``core.sshCommand`` runs on the next fetch). So the repository is found
once, here, by path (:func:`find_repository`: the nearest ``.git`` at the workspace or
above it, and only that), and every command runs with ``GIT_DIR`` and ``GIT_WORK_TREE``
pinned to it; a command that needs no repository (a clone) runs where no client writes.
:func:`makes_git_directory` is what :meth:`cuedeck.workspace.Workspace.locate` asks so
that no tool writes a git directory's files anywhere.

Every command gets :data:`BASE_OPTIONS` (no program a repository names where git does not
need one); ``read_only`` adds :data:`READ_ONLY_OPTIONS` and blanks every program-running
key the repository's own config sets (:meth:`Git.neutralised`); ``hooks=False`` turns
hooks off for writing commands too (the team server clones repositories it does not
trust). Commands run without a shell, a terminal or a prompt, in a process group of their
own that the deadline kills whole, and optionally under a memory bound
(:func:`cuedeck.system.spawn.memory_bounded`).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
from functools import cached_property
from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

#: Options given to every command: output we can parse, whatever the user's config says,
#: and no program a repository names where git does not need one: fsmonitor only makes
#: status faster, and the ext:: transport runs any command its URL holds.
BASE_OPTIONS = (
    "-c", "core.quotepath=off",
    "-c", "color.ui=false",
    "-c", "core.pager=cat",
    "-c", "advice.detachedHead=false",
    "-c", "core.fsmonitor=false",
    "-c", "protocol.ext.allow=never",
    "--no-pager",
)  # fmt: skip

#: No hook runs (``core.hooksPath`` at the null device) and a new repository copies no
#: template (a template can hold hooks).
NO_HOOKS = ("-c", f"core.hooksPath={os.devnull}", "-c", "init.templateDir=")

#: Added for commands that only read: no hook runs, git writes nothing back (a refreshed
#: index would run post-index-change), no signature is checked with a program the config
#: names.
READ_ONLY_OPTIONS = (
    *NO_HOOKS[:2],
    "-c", "log.showSignature=false",
    "--no-optional-locks",
)  # fmt: skip

#: Config keys naming a program git runs on its own while reading (``status`` and ``diff``
#: run clean filters on files whose stat changed; ``log -G``, ``blame`` and ``diff`` run
#: textconv drivers). Read-only commands blank the filters the repository's own config
#: sets (scope ``local`` or ``worktree``, includes too) and make its textconv drivers
#: ``cat`` (an empty one fails every diff); the person's global and system config are
#: theirs, so a globally installed LFS still works. External diff programs run only for
#: ``git diff``, which read-only runs give ``--no-ext-diff``.
_RUNS_WHILE_READING = re.compile(
    r"^(?:filter\.(.+)\.(clean|smudge|process|required)|diff\.(.+)\.textconv)$",
    re.IGNORECASE | re.DOTALL,
)
_REPOSITORY_SCOPES = frozenset({"local", "worktree"})

#: The environment that makes git fail instead of waiting for a person.
QUIET_ENV = {
    "GIT_TERMINAL_PROMPT": "0",  # no username/password prompt on the terminal
    "GIT_ASKPASS": "false",  # nor through a graphical helper: "false" answers nothing
    "SSH_ASKPASS": "false",
    "GCM_INTERACTIVE": "never",  # Git Credential Manager
    "GIT_EDITOR": "false",  # anything that would open an editor fails
    "GIT_SEQUENCE_EDITOR": "false",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "GIT_MERGE_AUTOEDIT": "no",
    "LC_ALL": "C",  # stable messages, which callers read
    "LANGUAGE": "C",
}

#: Under a memory bound, git maps its pack files in windows well inside it.
_SMALL_WINDOWS = (
    "-c", "core.packedGitLimit=256m",
    "-c", "core.packedGitWindowSize=32m",
    "-c", "core.deltaBaseCacheLimit=32m",
)  # fmt: skip

#: Variables that would point git at another repository, index or object store than the
#: one found: dropped from the environment it inherits (a `cue` run by a git hook has them).
_LOCATING_ENV = (
    "GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_PREFIX",
    "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM",
)  # fmt: skip

#: The names that make a folder a git directory (git's ``is_git_directory``): ``HEAD``,
#: with ``objects/`` and ``refs/``, or with ``commondir`` (a linked worktree's).
_GIT_DIRECTORY_NAMES = ("head", "objects", "refs", "commondir")


@attrs.frozen
class Repository:
    """A working tree's top folder and its git directory (both real paths)."""

    top: str
    git_dir: str


def find_repository(start: str | os.PathLike[str], *, own: bool = False) -> Repository | None:
    """The repository of the folder ``start``: the nearest ``.git`` (a folder, or a file
    ``gitdir: PATH`` of a linked worktree or submodule) at ``start`` or above it (``own``:
    at ``start`` only), that is a git directory; None when there is none. A folder that
    git would take as a bare repository is never one here."""
    here = os.path.realpath(start)
    while True:
        found = _dot_git(here)
        if found is not None:
            return Repository(here, found)
        parent = os.path.dirname(here)
        if own or parent == here:
            return None
        here = parent


def _dot_git(folder: str) -> str | None:
    """The git directory ``folder/.git`` names, or None."""
    entry = os.path.join(folder, ".git")
    if os.path.isdir(entry):
        return os.path.realpath(entry) if is_git_directory(entry) else None
    try:
        with open(entry, encoding="utf-8", errors="replace") as handle:
            line = handle.readline(4096).strip()
    except OSError:
        return None
    if not line.startswith("gitdir:"):
        return None
    target = os.path.realpath(os.path.join(folder, line[len("gitdir:") :].strip()))
    return target if is_git_directory(target) else None


def is_git_directory(folder: str, *, adding: Iterable[str] = ()) -> bool:
    """Whether git takes ``folder`` as a git directory, or would once the entries named
    ``adding`` are created in it (compared as a case-insensitive file system would). One
    stat for most folders: a ``HEAD`` comes first."""
    added = {name.lower() for name in adding}

    def has(name: str) -> bool:
        return name.lower() in added or os.path.lexists(os.path.join(folder, name))

    if not has("HEAD"):
        return False
    return (has("objects") and has("refs")) or has("commondir")


def makes_git_directory(root: str, rel: str) -> bool:
    """Whether writing the workspace-relative ``rel`` under the real path ``root`` would
    write into a git directory, or make one: some folder on its way (the root included)
    is one, or would be once ``rel``'s next component is created there."""
    return bool(git_directories_written(root, [rel]))


def git_directories_written(top: str, paths: Iterable[str]) -> list[str]:
    """Those of ``paths`` (relative to the folder ``top``, all written together: a tool's
    file, or what a checkout brings) that land in a git directory, or complete one with
    the others (``HEAD``, ``objects/`` and ``refs/`` of one commit)."""
    wanted = [[part for part in path.split("/") if part not in ("", ".")] for path in paths]
    adding: dict[str, set[str]] = {}  # folder -> names created in it
    for parts in wanted:
        for depth, part in enumerate(parts):
            if part.lower() in _GIT_DIRECTORY_NAMES:
                adding.setdefault("/".join(parts[:depth]), set()).add(part)
    hit = []
    for parts in wanted:
        for depth in range(len(parts)):
            folder = "/".join(parts[:depth])
            if is_git_directory(os.path.join(top, folder), adding=adding.get(folder, ())):
                hit.append("/".join(parts))
                break
    return hit


def inside_git_directory(root: str, rel: str) -> bool:
    """Whether some folder on the way to ``rel`` (the root included) is a git directory
    (a bare repository kept in the workspace, say)."""
    parts = [part for part in rel.split("/") if part not in ("", ".")]
    folder = root
    for part in parts:
        if is_git_directory(folder):
            return True
        folder = os.path.join(folder, part)
    return False


class GitTimedOut(Exception):
    """A command ran past its deadline; its whole process group was killed."""

    def __init__(self, argv: Sequence[str], seconds: float) -> None:
        super().__init__(f"git did not finish within {seconds:g} s")
        self.argv = list(argv)
        self.seconds = seconds


class Git:
    """Git pinned to ``repository`` (None: a command that needs none, run where no client
    writes), run from ``cwd`` (a folder of its working tree: paths are relative to it)."""

    def __init__(
        self,
        repository: Repository | None,
        *,
        cwd: str | os.PathLike[str] | None = None,
        read_only: bool = False,
        hooks: bool = True,
    ) -> None:
        self.repository = repository
        self.cwd = os.fspath(cwd) if cwd is not None else None
        self.read_only = read_only
        self.hooks = hooks

    @cached_property
    def neutralised(self) -> tuple[str, ...]:
        """``-c key=`` options blanking every program-running key the repository's own
        config sets (see :data:`_RUNS_WHILE_READING`); empty unless ``read_only``."""
        if not self.read_only or self.repository is None:
            return ()
        result = self._spawn(
            [*BASE_OPTIONS, "config", "--list", "--show-scope", "-z"], 30.0, None, None
        )
        options: list[str] = []
        fields = result.stdout.split(b"\0")  # scope NUL key LF value NUL, repeated
        for scope_field, entry in zip(fields[::2], fields[1::2], strict=False):
            scope = scope_field.decode("utf-8", "replace")
            key = entry.decode("utf-8", "replace").partition("\n")[0]  # a driver keeps its case
            found = _RUNS_WHILE_READING.match(key)
            if scope in _REPOSITORY_SCOPES and found:
                lowered = key.lower()
                value = "false" if lowered.endswith(".required") else ""
                value = "cat" if lowered.endswith(".textconv") else value
                options += ["-c", f"{key}={value}"]
        return tuple(options)

    def options(self) -> list[str]:
        """The options every command of this runner starts with."""
        options = [*BASE_OPTIONS]
        if self.read_only:
            options += [*READ_ONLY_OPTIONS, *self.neutralised]
        if not self.hooks:
            options += NO_HOOKS
        return options

    def environment(self) -> dict[str, str]:
        """The environment git runs with: the caller's, without what locates another
        repository, quiet, and pinned to the repository found."""
        env = {k: v for k, v in os.environ.items() if k not in _LOCATING_ENV}
        env.update(QUIET_ENV)
        if self.repository is not None:
            env["GIT_DIR"] = self.repository.git_dir
            env["GIT_WORK_TREE"] = self.repository.top
        else:  # nothing to discover: the folder it runs in is CueDeck's own
            env["GIT_CEILING_DIRECTORIES"] = os.path.dirname(self._where())
        return env

    def _where(self) -> str:
        if self.repository is None:
            from cuedeck.system.spawn import owned_directory

            return owned_directory()
        return self.cwd or self.repository.top

    def run(
        self,
        args: Iterable[str],
        *,
        timeout: float,
        input: bytes | None = None,
        memory_bytes: int | None = None,
    ) -> subprocess.CompletedProcess[bytes]:
        """Run ``git options args``; :class:`GitTimedOut` past ``timeout`` seconds,
        FileNotFoundError without git. ``memory_bytes`` bounds its address space."""
        args = list(args)
        if self.read_only and args[:1] == ["diff"]:
            args.insert(1, "--no-ext-diff")
        options = self.options()
        if memory_bytes is not None:  # pack files mapped in windows that fit the bound
            options += [*_SMALL_WINDOWS]
        return self._spawn([*options, *args], timeout, input, memory_bytes)

    def _spawn(
        self,
        argv: Sequence[str],
        timeout: float,
        input: bytes | None,
        memory_bytes: int | None,
    ) -> subprocess.CompletedProcess[bytes]:
        command = ["git", *argv]
        if memory_bytes is not None:
            from cuedeck.system.spawn import memory_bounded

            command = memory_bounded(command, memory_bytes)
        process = subprocess.Popen(
            command,
            cwd=self._where(),
            env=self.environment(),
            stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            # A session of its own: no controlling terminal, so ssh cannot ask for a
            # passphrase on /dev/tty either, and the deadline can kill the whole group.
            start_new_session=True,
        )
        try:
            out, err = process.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise GitTimedOut(argv, timeout) from None
        return subprocess.CompletedProcess(command, process.returncode, out, err)
