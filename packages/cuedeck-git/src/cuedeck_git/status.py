"""``git_status``, and the digest of the working tree that confirmation tokens are bound to."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Literal

from typing_extensions import TypedDict  # pydantic needs it for TypedDicts on 3.11

from cuedeck_git.runner import Repo, decode

if TYPE_CHECKING:
    from collections.abc import Iterable

    from cuedeck.workspace import Workspace

ChangeKind = Literal["modified", "added", "deleted", "renamed", "copied", "type_changed"]
_KINDS: dict[str, ChangeKind] = {
    "M": "modified", "A": "added", "D": "deleted", "R": "renamed", "C": "copied",
    "T": "type_changed",
}  # fmt: skip


class FileChange(TypedDict):
    """A changed file: its workspace-relative path, what changed, and where it came from."""

    path: str
    status: ChangeKind
    old_path: str | None


class GitStatus(TypedDict):
    """The reply of ``git_status``: the branch and every change inside the workspace."""

    success: bool
    branch: str | None
    detached: bool
    commit: str | None
    upstream: str | None
    ahead: int
    behind: int
    staged: list[FileChange]
    unstaged: list[FileChange]
    untracked: list[str]
    conflicted: list[str]
    merge_in_progress: bool
    clean: bool


def _records(data: bytes) -> list[str]:
    return [decode(item) for item in data.split(b"\0") if item]


def read_status(repo: Repo) -> GitStatus:
    """The status of the workspace's part of the repository."""
    raw = repo.run(
        "status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all", "--", "."
    ).stdout
    status: GitStatus = {
        "success": True, "branch": None, "detached": False, "commit": None, "upstream": None,
        "ahead": 0, "behind": 0, "staged": [], "unstaged": [], "untracked": [],
        "conflicted": [], "merge_in_progress": False, "clean": True,
    }  # fmt: skip
    records = _records(raw)
    index = 0
    while index < len(records):
        record = records[index]
        index += 1
        if record.startswith("# "):
            _header(status, record[2:])
            continue
        kind = record[:1]
        if kind == "?":
            path = repo.local(record[2:])
            if path is not None:
                status["untracked"].append(path)
            continue
        if kind not in ("1", "2", "u"):
            continue  # "!" ignored files are not asked for
        fields = record.split(" ", {"1": 8, "2": 9, "u": 10}[kind])
        path = repo.local(fields[-1])
        old_path = None
        if kind == "2":
            old_path = repo.local(records[index])
            index += 1
        if path is None:
            continue
        if kind == "u":
            status["conflicted"].append(path)
            continue
        staged, unstaged = fields[1][0], fields[1][1]
        if staged != ".":
            status["staged"].append({"path": path, "status": _KINDS[staged], "old_path": old_path})
        if unstaged != ".":
            status["unstaged"].append({"path": path, "status": _KINDS[unstaged], "old_path": None})
    status["merge_in_progress"] = repo.run(
        "rev-parse", "--quiet", "--verify", "MERGE_HEAD", check=False
    ).returncode == 0  # fmt: skip
    status["clean"] = not (
        status["staged"] or status["unstaged"] or status["untracked"] or status["conflicted"]
    )
    return status


def _header(status: GitStatus, header: str) -> None:
    key, _, value = header.partition(" ")
    if key == "branch.oid":
        status["commit"] = None if value == "(initial)" else value
    elif key == "branch.head":
        status["detached"] = value == "(detached)"
        status["branch"] = None if status["detached"] else value
    elif key == "branch.upstream":
        status["upstream"] = value
    elif key == "branch.ab":
        ahead, behind = value.split()
        status["ahead"], status["behind"] = int(ahead), abs(int(behind))


def git_status(workspace: Workspace) -> GitStatus:
    """Show the branch, upstream, and staged, unstaged, untracked and conflicted files.

    Paths are workspace-relative; only the workspace's part of the repository is listed.
    """
    return read_status(Repo(workspace, read_only=True))


def state_digest(repo: Repo, paths: Iterable[str] = ()) -> str:
    """A digest of HEAD, the index, the working tree's status and the bytes of ``paths``.

    Confirmation tokens are bound to it: when anything a destructive call would destroy
    changes, the token no longer matches.
    """
    digest = hashlib.sha256()
    digest.update((repo.head() or "no-commit").encode())
    digest.update(repo.run("status", "--porcelain=v2", "-z", "--untracked-files=all").stdout)
    digest.update(repo.run("diff", "--binary", "HEAD" if repo.head() else "--cached").stdout)
    for path in sorted(set(paths)):
        digest.update(path.encode() + b"\0")
        digest.update(_tree_digest(repo, path).encode())
    return digest.hexdigest()


def _tree_digest(repo: Repo, path: str) -> str:
    """The sha256 of a file's bytes, or of every file under a folder, or ``missing``."""
    target = repo.root / path
    if target.is_symlink() or target.is_file():
        try:
            return hashlib.sha256(target.read_bytes()).hexdigest()
        except OSError:
            return "unreadable"
    if not target.is_dir():
        return "missing"
    digest = hashlib.sha256()
    for item in sorted(target.rglob("*")):
        if item.is_file() and not item.is_symlink():
            digest.update(str(item.relative_to(target)).encode() + b"\0")
            digest.update(item.read_bytes())
    return digest.hexdigest()
