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

import re
import subprocess
from functools import cached_property
from typing import TYPE_CHECKING

from cuedeck.errors import InvalidInput
from cuedeck.layout import protection
from cuedeck.system.git import Git, GitTimedOut, find_repository
from cuedeck_git.errors import GitFailed, GitTimeout
from cuedeck_git.settings import GitSettings

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from pathlib import Path

    from cuedeck.workspace import Workspace

# The options, the quiet environment and the pinned repository are core's one git runner
# (cuedeck.system.git); what is here turns its results into the tools' errors.

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


#: What a command answers where no repository was found (git's own words, which
#: :data:`REASONS` recognises).
NO_REPOSITORY = "fatal: not a git repository: CueDeck found no .git at the workspace or above it"


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


def exclusions(workspace: Workspace) -> list[str]:
    """Pathspecs leaving out what no tool reads, anywhere in the repository: CueDeck's
    private files (caches, token hashes, state, a team's copies) and ``[files] deny``
    (gitignore syntax: a glob with a leading ``/`` is anchored at the workspace)."""
    from cuedeck.layout import WORKSPACE_DIR

    private = sorted(workspace.places.private)  # core's and the plugins'
    specs = [f":(top,exclude,glob)**/{WORKSPACE_DIR}/{name}" for name in private]
    specs += [f":(top,exclude,glob)**/{WORKSPACE_DIR}/{name}/**" for name in private]
    for glob in workspace.config.files.deny:
        if glob.startswith("/"):
            specs.append(f":(exclude,glob){glob.lstrip('/').rstrip('/')}")
        else:
            specs.append(f":(top,exclude,glob)**/{glob.rstrip('/')}")
            specs.append(f":(top,exclude,glob)**/{glob.rstrip('/')}/**")
    return specs


def decode(data: bytes) -> str:
    """Git's bytes as text (file names and contents may be in any encoding)."""
    return data.decode("utf-8", errors="replace")


class Repo:
    """The git repository a workspace lives in, and the one way to run git in it."""

    def __init__(
        self, workspace: Workspace, *, read_only: bool = False, memory_bytes: int | None = None
    ) -> None:
        self.workspace = workspace
        self.root: Path = workspace.root
        settings = workspace.config.section("git", GitSettings)
        self.timeout = settings.timeout
        self.network_timeout = settings.network_timeout
        #: Whether commands run as core's read-only runner (no hook, no program the
        #: repository's config names: :class:`cuedeck.system.git.Git`).
        self.read_only = read_only
        #: The address-space bound of every command (pattern searches), or None.
        self.memory_bytes = memory_bytes

    @cached_property
    def git(self) -> Git | None:
        """Core's runner, pinned to the ``.git`` found at the workspace or above it; None
        when there is none (every command then fails as git would: not a repository)."""
        found = find_repository(self.root)
        return None if found is None else Git(found, cwd=self.root, read_only=self.read_only)

    @property
    def top(self) -> str:
        """The repository's top folder (the workspace's root when there is none)."""
        return self.git.repository.top if self.git and self.git.repository else str(self.root)

    def run(
        self,
        *args: str,
        network: bool = False,
        check: bool = True,
        input: bytes | None = None,
    ) -> subprocess.CompletedProcess[bytes]:
        """Run ``git args`` in the workspace; raise 1030/1031 on failure unless not ``check``."""
        if any("\x00" in part for part in args):  # every tool checks its own fields first
            raise InvalidInput("an argument for git contains a NUL byte", field="arguments")
        timeout = self.network_timeout if network else self.timeout
        if self.git is None:
            result = subprocess.CompletedProcess(["git", *args], 128, b"", NO_REPOSITORY.encode())
        else:
            result = self._run(args, timeout, input, network=network)
        if check and result.returncode != 0:
            raise self.failure(args, result)
        return result

    def _run(
        self, args: Sequence[str], timeout: float, input: bytes | None, *, network: bool
    ) -> subprocess.CompletedProcess[bytes]:
        assert self.git is not None
        try:
            return self.git.run(args, timeout=timeout, input=input, memory_bytes=self.memory_bytes)
        except FileNotFoundError:
            raise GitFailed(
                "the git executable was not found",
                reason="no_git",
                help="install git and make sure it is on PATH",
            ) from None
        except GitTimedOut:
            raise GitTimeout(
                f"git {args[0]} did not finish within {timeout:g} s and was stopped",
                command=["git", *args],
                timeout_seconds=timeout,
                help=f"raise [git] {'network_timeout' if network else 'timeout'} if it "
                "needs longer, or check what it waits for (a hook, the network)",
            ) from None

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

    def readable(self, path: str) -> bool:
        """Whether a tool may read the repository-relative ``path`` (the workspace's read
        boundary; a path outside the workspace by its name alone)."""
        local = self.local(path)
        if local is not None:
            return self.workspace.read_refusal(local) is None
        places = self.workspace.places
        return protection(path, write=False, places=places) is None and not (
            self.workspace.denied(path)
        )

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
