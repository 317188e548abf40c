"""The git work of team serving: clone, fetch, branches, ahead/behind.

Through core's one git runner (:mod:`cuedeck.system.git`: no prompt, pager or editor, no
ext:: transport, no fsmonitor, the repository pinned to the working copy's own ``.git``),
with no hooks at all: the server clones repositories it does not trust. A failure is
:class:`CloneFailed` (1404) or git's own 1030 with credentials removed from every URL it
quotes.
"""

from __future__ import annotations

import os
import re
import subprocess
from typing import TYPE_CHECKING

from cuedeck.errors import InvalidInput, MissingExtra
from cuedeck_team.errors import CloneFailed

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from cuedeck_git.errors import GitFailed

#: Clones and fetches of whole repositories may take long; local work may not.
NETWORK_TIMEOUT = 1800.0
LOCAL_TIMEOUT = 120.0
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/@\s]+@")


def without_credentials(text: str) -> str:
    """``text`` with the user and password part of every URL removed
    (``https://tok@host/x`` becomes ``https://host/x``)."""
    return _USERINFO.sub(r"\1", text)


def _errors() -> None:
    try:
        import cuedeck_git.errors  # noqa: F401
    except ImportError:  # the team server needs cuedeck-git for its working copies
        raise MissingExtra.needs("serving a team's repositories needs cuedeck-git", "git") from None


def git(
    cwd: Path | None, *args: str, timeout: float = LOCAL_TIMEOUT, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run ``git args`` in the working copy ``cwd`` (its own ``.git``, never one above
    it; None: a command that needs no repository) with no hook at all; text output.
    1030 on failure when ``check``, 1031 past ``timeout`` (the whole group is stopped)."""
    _errors()
    from cuedeck.system.git import Git, GitTimedOut, find_repository
    from cuedeck_git.errors import GitFailed, GitTimeout

    repository = None
    if cwd is not None:
        repository = find_repository(cwd, own=True)
        if repository is None:
            raise GitFailed(
                f"{cwd} is not a working copy: it has no .git of its own",
                command=["git", *(without_credentials(a) for a in args)],
                reason="not_a_repository",
            )
    runner = Git(repository, cwd=cwd, hooks=False)
    try:
        done = runner.run(args, timeout=timeout)
    except FileNotFoundError:
        raise GitFailed("the git executable was not found", reason="no_git") from None
    except GitTimedOut:
        raise GitTimeout(
            f"git {args[0]} did not finish within {timeout:g} s and was stopped",
            command=["git", *(without_credentials(a) for a in args)],
            timeout_seconds=timeout,
        ) from None
    result = subprocess.CompletedProcess(
        done.args,
        done.returncode,
        done.stdout.decode("utf-8", "replace"),
        done.stderr.decode("utf-8", "replace"),
    )
    if check and result.returncode != 0:
        raise failure(args, result)
    return result


def failure(args: Sequence[str], result: subprocess.CompletedProcess[str]) -> GitFailed:
    """The 1030 of a failed command, credentials removed, its cause named when known."""
    from cuedeck_git.errors import GitFailed
    from cuedeck_git.runner import reason

    stderr = without_credentials(result.stderr.strip())
    found, help = reason(stderr)
    lines = stderr.splitlines()
    summary = next((line for line in lines if line.lower().startswith(("fatal", "error"))), "")
    return GitFailed(
        f"git {args[0]} failed: {summary or (lines[0] if lines else result.returncode)}",
        command=["git", *(without_credentials(a) for a in args)],
        exit_code=result.returncode,
        stderr=stderr[-4000:],
        reason=found,
        help=help,
    )


def check_source(source: str, home: Path) -> str:
    """``source`` as git should be given it: a URL (``https://``, ``ssh://``, ``git@``,
    ``file://``) as is, a path made absolute against the team's folder ``home``."""
    text = source.strip()
    if not text or text.startswith("-") or "\x00" in text or "\n" in text:
        raise InvalidInput(f"{without_credentials(source)!r} is not a repository", field="repo_url")
    if re.match(r"(?i)^[a-z][a-z0-9+.-]*::", text):
        raise InvalidInput(  # ext::, fd:: and other remote helpers run programs
            f"{text.split('::')[0]}:: remotes are not served", field="repo_url"
        )
    if re.match(r"(?i)^[a-z][a-z0-9+.-]*://", text) or re.match(r"^[\w.-]+@[\w.-]+:", text):
        return text
    path = (home / os.path.expanduser(text)).resolve()
    if not path.exists():
        raise InvalidInput(f"{text} does not exist on the server", field="repo_url")
    return str(path)


def clone(
    source: str,
    into: Path,
    *,
    branch: str | None = None,
    local: bool = False,
    checkout: bool = True,
) -> None:
    """Clone ``source`` into the new folder ``into`` (its branch ``branch``, else its
    default); ``local`` hard-links the object files of a repository on this machine."""
    args = ["clone", "--quiet", "--no-recurse-submodules"]
    if branch:
        args += ["--branch", branch]
    if local:
        args.append("--local")
    if not checkout:
        args.append("--no-checkout")
    into.parent.mkdir(parents=True, exist_ok=True)
    target = os.path.abspath(into)  # git runs in CueDeck's own folder, not beside it
    result = git(None, *args, "--", source, target, timeout=NETWORK_TIMEOUT, check=False)
    if result.returncode != 0:
        stderr = without_credentials(result.stderr.strip())
        missing_branch = branch and "not found in upstream" in stderr
        raise CloneFailed(
            f"cannot clone {without_credentials(source)}"
            + (f": it has no branch {branch!r}" if missing_branch else ""),
            repo_url=without_credentials(source),
            reason="no_such_branch" if missing_branch else "clone_failed",
            stderr=stderr[-4000:],
            help="check that the server can reach the repository (a path on the server, "
            "or a URL it may clone without a password prompt) and the branch exists",
        )


def current_branch(root: Path) -> str:
    """The branch checked out in ``root`` (empty when detached)."""
    return git(root, "branch", "--show-current").stdout.strip()


def head(root: Path) -> str:
    """The commit checked out in ``root`` (empty in a repository without commits)."""
    result = git(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False)
    return result.stdout.strip()


def remote_url(root: Path, remote: str = "origin") -> str | None:
    """Where ``remote`` points in ``root``, or None when there is no such remote."""
    result = git(root, "config", "--get", f"remote.{remote}.url", check=False)
    return result.stdout.strip() or None


def refs(root: Path, prefix: str) -> dict[str, str]:
    """``{ref: commit}`` of every ref under ``prefix`` (``refs/remotes/origin/``)."""
    out = git(root, "for-each-ref", "--format=%(refname) %(objectname)", prefix).stdout
    pairs = (line.split(" ", 1) for line in out.splitlines() if " " in line)
    return {name: commit for name, commit in pairs if not name.endswith("/HEAD")}


def ahead_behind(root: Path) -> tuple[int, int] | None:
    """``(ahead, behind)`` of HEAD against its upstream, or None without an upstream."""
    result = git(root, "rev-list", "--left-right", "--count", "HEAD...@{upstream}", check=False)
    if result.returncode != 0:
        return None
    ahead, behind = result.stdout.split()
    return int(ahead), int(behind)


def exclude_locally(root: Path, pattern: str) -> None:
    """Have git ignore ``pattern`` in ``root`` without changing a tracked file
    (``.git/info/exclude``)."""
    exclude = root / ".git" / "info" / "exclude"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    existing = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
    if pattern not in existing.splitlines():
        prefix = "" if not existing or existing.endswith("\n") else "\n"
        exclude.write_text(existing + prefix + pattern + "\n", encoding="utf-8")
