"""Running ``git`` for an agent: argument lists, no prompt, no pager, no editor, a deadline.

Every git tool goes through :class:`Repo`. It never uses a shell, puts ``--`` before
paths (each marked ``:(literal)``, so ``*.py`` names a file, not a glob), takes nothing
but a name where a ref or revision goes (:mod:`cuedeck_git.refs`), and runs git in its
own process group so that a helper git starts (ssh, a credential helper) dies with it at
the deadline. Failures
become :class:`~cuedeck.errors.GitFailed` (1030) with a ``reason`` for the causes we
recognise, or :class:`~cuedeck.errors.GitTimeout` (1031).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
from functools import cached_property
from typing import TYPE_CHECKING

from cuedeck.errors import InvalidInput
from cuedeck_git.errors import GitFailed, GitTimeout
from cuedeck_git.settings import GitSettings

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from pathlib import Path

    from cuedeck.workspace import Workspace

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

#: Added for read-only tools (git_status, git_diff, git_log, git_branch_list): no hook
#: runs, git writes nothing back (a refreshed index would run post-index-change), and no
#: signature is checked with a program the config names.
READ_ONLY_OPTIONS = (
    "-c", f"core.hooksPath={os.devnull}",
    "-c", "log.showSignature=false",
    "--no-optional-locks",
)  # fmt: skip

#: Config keys naming a program git runs on its own while reading (``status`` and ``diff``
#: run clean filters on files whose stat changed). Read-only tools blank those that the
#: repository's own config sets (scope ``local`` or ``worktree``, includes too); the
#: person's global and system config are theirs, so a globally installed LFS still works.
_RUNS_WHILE_READING = re.compile(
    r"^filter\.(.+)\.(clean|smudge|process|required)$", re.IGNORECASE | re.DOTALL
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
    "LC_ALL": "C",  # stable messages, which :func:`reason` reads
    "LANGUAGE": "C",
}

#: Known causes, recognised in git's (C locale) stderr: reason, help.
REASONS: tuple[tuple[re.Pattern[str], str, str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), reason, help)
    for pattern, reason, help in (
        (
            r"not a git repository",
            "not_a_repository",
            "the workspace is not inside a git repository: run `git init` there first",
        ),
        (
            r"terminal prompts disabled|could not read (username|password)|authentication "
            r"failed|permission denied \(publickey|askpass|host key verification failed",
            "credentials",
            "git needed credentials and CueDeck never prompts: set up a credential helper "
            "or an SSH key that works without a prompt",
        ),
        (
            r"index\.lock|unable to create .*\.lock",
            "locked",
            "another git process holds the repository's lock; try again when it finishes",
        ),
        (
            r"please tell me who you are|unable to auto-detect email",
            "identity",
            "set user.name and user.email in the repository's git config",
        ),
        (
            r"nothing to commit|no changes added to commit|nothing added to commit",
            "nothing_to_commit",
            "stage changes with git_stage first",
        ),
        (
            r"\bCONFLICT\b|unmerged|fix conflicts|needs merge",
            "conflict",
            "resolve the conflicts, stage the files and commit, or call git_merge_abort",
        ),
        (
            r"\[rejected\]|non-fast-forward|fetch first|failed to push",
            "rejected",
            "the remote has commits you do not have: git_pull first",
        ),
        (
            r"not possible to fast-forward|diverging branches|have diverged",
            "diverged",
            "the branches have diverged: pull with mode 'merge' or 'rebase'",
        ),
        (
            r"would be overwritten|please commit your changes or stash them",
            "local_changes",
            "commit or discard the local changes first (git_status lists them)",
        ),
        (
            r"there is no merge to abort|merge_head missing",
            "no_merge",
            "no merge is in progress",
        ),
        (
            r"unknown revision|bad revision|not a valid object name|invalid reference|"
            r"not a commit|ambiguous argument",
            "unknown_revision",
            "git_log and git_branch_list show the commits and branches that exist",
        ),
        (
            r"does not appear to be a git repository|no such remote|could not read from "
            r"remote repository|repository .* not found",
            "remote_unreachable",
            "check the remote's name and address (git_branch_list shows upstreams)",
        ),
        (
            r"did not match any file|pathspec .* did not match",
            "no_such_path",
            "git_status lists the paths git knows",
        ),
    )
)


def reason(stderr: str) -> tuple[str | None, str | None]:
    """The known cause of a failure and what to do about it, or ``(None, None)``."""
    for pattern, name, help in REASONS:
        if pattern.search(stderr):
            return name, help
    return None, None


def check_text(value: str, *, field: str) -> str:
    """``value`` if git can take it as one argument: no NUL or other control character
    (a C string ends at NUL; a newline would start another header or filter line)."""
    bad = next((char for char in value if char < " " or char == "\x7f"), None)
    if bad is not None:
        raise InvalidInput(
            f"{field} contains the control character {bad!r}", field=field, help="remove it"
        )
    return value


def pathspecs(paths: Iterable[str]) -> list[str]:
    """Workspace-relative paths as pathspecs that git reads literally."""
    return [f":(literal){path}" for path in paths]


def exclusions(globs: Iterable[str]) -> list[str]:
    """``[files] deny`` globs (gitignore syntax) as git pathspecs that leave them out."""
    specs = []
    for glob in globs:
        pattern = glob.lstrip("/") if glob.startswith("/") else f"**/{glob}"
        specs.append(f":(exclude,glob){pattern.rstrip('/')}")
    return specs


def decode(data: bytes) -> str:
    """Git's bytes as text (file names and contents may be in any encoding)."""
    return data.decode("utf-8", errors="replace")


class Repo:
    """The git repository a workspace lives in, and the one way to run git in it."""

    def __init__(self, workspace: Workspace, *, read_only: bool = False) -> None:
        self.workspace = workspace
        self.root: Path = workspace.root
        settings = workspace.config.section("git", GitSettings)
        self.timeout = settings.timeout
        self.network_timeout = settings.network_timeout
        #: Whether commands run with :data:`READ_ONLY_OPTIONS` and the repository's own
        #: program-running keys blanked (:meth:`neutralised`).
        self.read_only = read_only

    @cached_property
    def neutralised(self) -> tuple[str, ...]:
        """``-c key=`` options blanking every program-running key the repository's own
        config sets (see :data:`_RUNS_WHILE_READING`); empty outside read-only tools."""
        if not self.read_only:
            return ()
        result = self._spawn(
            [*BASE_OPTIONS, "config", "--list", "--show-scope", "-z"], self.timeout, None
        )
        options: list[str] = []
        fields = result.stdout.split(b"\0")  # scope NUL key LF value NUL, repeated
        for scope_field, entry in zip(fields[::2], fields[1::2], strict=False):
            scope = decode(scope_field)
            key = decode(entry).partition("\n")[0]  # a subsection (a driver) keeps its case
            found = _RUNS_WHILE_READING.match(key)
            if scope in _REPOSITORY_SCOPES and found:
                value = "false" if found.group(2).lower() == "required" else ""
                options += ["-c", f"{key}={value}"]
        return tuple(options)

    def run(
        self,
        *args: str,
        network: bool = False,
        check: bool = True,
        input: bytes | None = None,
    ) -> subprocess.CompletedProcess[bytes]:
        """Run ``git args`` in the workspace; raise 1030/1031 on failure unless not ``check``."""
        options = (
            [*BASE_OPTIONS, *READ_ONLY_OPTIONS, *self.neutralised]
            if self.read_only
            else [*BASE_OPTIONS]
        )
        timeout = self.network_timeout if network else self.timeout
        result = self._spawn([*options, *args], timeout, input, shown=args, network=network)
        if check and result.returncode != 0:
            raise self.failure(args, result)
        return result

    def _spawn(
        self,
        options: Sequence[str],
        timeout: float,
        input: bytes | None,
        *,
        shown: Sequence[str] = (),
        network: bool = False,
    ) -> subprocess.CompletedProcess[bytes]:
        """Run ``git options`` under ``timeout``; 1031 when it runs over."""
        argv = ["git", *options]
        if any("\x00" in part for part in argv):  # every tool checks its own fields first
            raise InvalidInput("an argument for git contains a NUL byte", field="arguments")
        env = {**os.environ, **QUIET_ENV}
        try:
            process = subprocess.Popen(
                argv,
                cwd=self.root,
                env=env,
                stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                # A session of its own: no controlling terminal, so ssh cannot ask for a
                # passphrase on /dev/tty either, and the deadline can kill the whole group.
                start_new_session=True,
            )
        except FileNotFoundError:
            raise GitFailed(
                "the git executable was not found",
                reason="no_git",
                help="install git and make sure it is on PATH",
            ) from None
        try:
            out, err = process.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            name = (shown or options)[0]
            raise GitTimeout(
                f"git {name} did not finish within {timeout:g} s and was stopped",
                command=["git", *shown],
                timeout_seconds=timeout,
                help=f"raise [git] {'network_timeout' if network else 'timeout'} if it "
                "needs longer, or check what it waits for (a hook, the network)",
            ) from None
        return subprocess.CompletedProcess(argv, process.returncode, out, err)

    def text(self, *args: str, network: bool = False) -> str:
        """Standard output of ``git args`` as text."""
        return decode(self.run(*args, network=network).stdout)

    def failure(self, args: Sequence[str], result: subprocess.CompletedProcess[bytes]) -> GitFailed:
        """The error for a failed command, with the cause named when we know it."""
        stderr = decode(result.stderr).strip()
        stdout = decode(result.stdout).strip()
        found, help = reason(f"{stderr}\n{stdout}")
        detail = (stderr or stdout).splitlines()
        summary = next((line for line in detail if line.lower().startswith(("fatal", "error"))), "")
        if found is not None:  # the line that names the cause ("nothing to commit, ...")
            pattern = next(pattern for pattern, name, _ in REASONS if name == found)
            lines = f"{stderr}\n{stdout}".splitlines()
            summary = next((line.strip() for line in lines if pattern.search(line)), summary)
        summary = summary or (detail[0] if detail else f"exit status {result.returncode}")
        return GitFailed(
            f"git {args[0]} failed: {summary}",
            command=["git", *args],
            exit_code=result.returncode,
            stderr=stderr[-4000:],
            reason=found,
            help=help,
        )

    @cached_property
    def prefix(self) -> str:
        """The workspace's folder inside the repository (``""`` at its top)."""
        return self.text("rev-parse", "--show-prefix").strip()

    def local(self, path: str) -> str | None:
        """A repository-relative path as workspace-relative, or None when outside it."""
        if not self.prefix:
            return path
        return path[len(self.prefix) :] if path.startswith(self.prefix) else None

    def shown(self, path: str) -> str:
        """A repository-relative path as a reply shows it: workspace-relative when inside
        the workspace, else in git's ``:/path`` notation (relative to the repository)."""
        local = self.local(path)
        return local if local is not None else f":/{path}"

    def head(self) -> str | None:
        """The commit HEAD points at, or None in a repository without commits."""
        result = self.run("rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False)
        return decode(result.stdout).strip() or None

    def current_branch(self) -> str | None:
        """The checked-out branch, or None when HEAD is detached."""
        result = self.run("symbolic-ref", "--quiet", "--short", "HEAD", check=False)
        return decode(result.stdout).strip() or None

    def commit_of(self, revision: str, *, field: str) -> str:
        """The full hash of the commit ``revision`` names (1004 for what is no revision:
        :func:`~cuedeck_git.refs.check_revision`), or 1030 ``unknown_revision``."""
        from cuedeck_git.refs import check_revision

        check_revision(revision, field=field)
        result = self.run(
            "rev-parse", "--verify", "--quiet", "--end-of-options", f"{revision}^{{commit}}",
            check=False,
        )  # fmt: skip
        commit = decode(result.stdout).strip()
        if result.returncode != 0 or not commit:
            raise GitFailed(
                f"{revision!r} names no commit",
                reason="unknown_revision",
                field=field,
                help="git_log and git_branch_list show the commits and branches that exist",
            )
        return commit

    def count(self, *revisions: str) -> int:
        """How many commits ``git rev-list revisions`` lists."""
        return int(self.text("rev-list", "--count", *revisions, "--").strip() or 0)
