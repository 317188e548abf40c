"""Tools that talk to a remote: ``git_fetch``, ``git_pull`` and ``git_push``.

They run under ``[git] network_timeout`` and never prompt: a remote that wants a
password or an unknown host key fails at once with reason ``credentials``. Pushes are
never forced; pulls fast-forward only unless asked to merge or rebase.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from typing_extensions import TypedDict  # pydantic needs it for TypedDicts on 3.11

from cuedeck.errors import InvalidInput, did_you_mean, suggestion_text
from cuedeck_git.runner import Repo, check_revision, decode

if TYPE_CHECKING:
    import pydantic

    from cuedeck.workspace import Workspace
else:
    from cuedeck.tools import lazy_pydantic as pydantic

Remote = Annotated[str, pydantic.Field(description="Remote name", min_length=1, max_length=255)]
BranchOption = Annotated[
    str | None, pydantic.Field(description="Branch (default: the current one)", min_length=1)
]


class GitFetch(TypedDict):
    """The reply of ``git_fetch``."""

    success: bool
    remote: str
    refs_fetched: list[str]


class GitPull(TypedDict):
    """The reply of ``git_pull``."""

    success: bool
    remote: str
    branch: str
    files_changed: list[str]
    commits_pulled: int


class GitPush(TypedDict):
    """The reply of ``git_push``."""

    success: bool
    remote: str
    branch: str
    commits_pushed: int


def _remote(repo: Repo, name: str) -> str:
    check_revision(name, field="remote")
    remotes = repo.text("remote").split()
    if name not in remotes:
        raise InvalidInput(
            f"there is no remote {name!r}"
            + (f" (remotes: {', '.join(remotes)})" if remotes else ""),
            field="remote",
            suggestion=suggestion_text(did_you_mean(name, remotes)),
            help="add one with `git remote add` in a shell",
        )
    return name


def _branch(repo: Repo, branch: str | None) -> str:
    if branch is not None:
        return check_revision(branch, field="branch")
    current = repo.current_branch()
    if current is None:
        raise InvalidInput("HEAD is detached: name the branch", field="branch")
    return current


def _remote_refs(repo: Repo, remote: str) -> dict[str, str]:
    text = repo.text("for-each-ref", "--format=%(refname:short)%1f%(objectname)",
                     f"refs/remotes/{remote}/")  # fmt: skip
    return dict(line.split("\x1f") for line in text.splitlines() if line)


def git_fetch(
    workspace: Workspace,
    remote: Remote = "origin",
    prune: Annotated[bool, pydantic.Field(description="Drop refs gone from the remote")] = False,
) -> GitFetch:
    """Download commits and refs from a remote; the working tree is untouched."""
    repo = Repo(workspace)
    name = _remote(repo, remote)
    before = _remote_refs(repo, name)
    repo.run("fetch", "--quiet", *(["--prune"] if prune else []), name, network=True)
    after = _remote_refs(repo, name)
    changed = sorted(
        ref for ref in after.keys() | before.keys() if after.get(ref) != before.get(ref)
    )
    return {"success": True, "remote": name, "refs_fetched": changed}


def git_pull(
    workspace: Workspace,
    remote: Remote = "origin",
    branch: BranchOption = None,
    mode: Annotated[
        Literal["ff-only", "merge", "rebase"],
        pydantic.Field(description="What to do when the branches have diverged"),
    ] = "ff-only",
) -> GitPull:
    """Fetch a branch of a remote and bring it into the current branch.

    mode ff-only (default) refuses diverged branches; merge and rebase resolve them.
    A conflict stops with error 1030 reason conflict (see git_status, git_merge_abort).
    """
    repo = Repo(workspace)
    name = _remote(repo, remote)
    wanted = _branch(repo, branch)
    before = repo.head()
    flag = {"ff-only": "--ff-only", "merge": "--no-rebase", "rebase": "--rebase"}[mode]
    repo.run("pull", "--quiet", "--no-edit", flag, name, wanted, network=True)
    workspace.invalidate()
    after = repo.head()
    files: list[str] = []
    pulled = 0
    if after and after != before:
        if before:
            pulled = repo.count(f"{before}..{after}")
            raw = repo.run("diff", "--name-only", "-z", before, after, "--").stdout
        else:  # the first commits of an empty repository
            pulled = repo.count(after)
            raw = repo.run("ls-tree", "-r", "-z", "--name-only", "--full-tree", after).stdout
        files = [repo.shown(decode(item)) for item in raw.split(b"\0") if item]
    return {
        "success": True, "remote": name, "branch": wanted,
        "files_changed": files, "commits_pulled": pulled,
    }  # fmt: skip


def git_push(
    workspace: Workspace,
    remote: Remote = "origin",
    branch: BranchOption = None,
    set_upstream: Annotated[
        bool, pydantic.Field(description="Make remote/branch the upstream of the branch")
    ] = True,
) -> GitPush:
    """Push a branch (default: the current one) to a remote; never forced.

    A remote with commits you do not have is error 1030 reason rejected: git_pull first.
    """
    repo = Repo(workspace)
    name = _remote(repo, remote)
    wanted = _branch(repo, branch)
    local = repo.commit_of(f"refs/heads/{wanted}", field="branch")
    tracked = _remote_refs(repo, name).get(f"{name}/{wanted}")
    pending = repo.count(f"{tracked}..{local}") if tracked else repo.count(
        local, "--not", f"--remotes={name}"
    )  # fmt: skip
    options = ["--set-upstream"] if set_upstream else []
    refspec = f"refs/heads/{wanted}:refs/heads/{wanted}"
    repo.run("push", "--quiet", "--porcelain", *options, name, refspec, network=True)
    return {"success": True, "remote": name, "branch": wanted, "commits_pushed": pending}
