"""Tools that talk to a remote: ``git_fetch``, ``git_pull`` and ``git_push``.

They run under ``[git] network_timeout`` and never prompt: a remote that wants a
password or an unknown host key fails at once with reason ``credentials``. Pushes are
never forced; pulls fast-forward only unless asked to merge or rebase.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from typing_extensions import TypedDict  # pydantic needs it for TypedDicts on 3.11

from cuedeck.errors import InvalidInput, did_you_mean, suggestion_text
from cuedeck.serving.confirmation import ConfirmationAsked, ConfirmationToken, confirm
from cuedeck_git.refs import check_ref_name
from cuedeck_git.runner import Repo, decode

if TYPE_CHECKING:
    import pydantic

    from cuedeck.workspace import Workspace
else:
    from cuedeck.plugins.tools import lazy_pydantic as pydantic

Remote = Annotated[str, pydantic.Field(description="Remote name", min_length=1, max_length=255)]
BranchOption = Annotated[
    str | None, pydantic.Field(description="Branch (default: the current one)", min_length=1)
]


class GitFetch(TypedDict):
    """The reply of ``git_fetch``."""

    success: bool
    remote: str
    refs_fetched: list[str]


class GitPulled(TypedDict):
    """What ``git_pull`` did."""

    success: bool
    remote: str
    branch: str
    files_changed: list[str]
    commits_pulled: int


#: The reply of ``git_pull``: done, or asking for confirmation (a rebase).
GitPull = GitPulled | ConfirmationAsked


class GitPush(TypedDict):
    """The reply of ``git_push``."""

    success: bool
    remote: str
    branch: str
    commits_pushed: int


def _remote(repo: Repo, name: str) -> str:
    check_ref_name(name, field="remote")
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
        return check_ref_name(branch, field="branch")
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
    confirmation_token: ConfirmationToken = None,
) -> GitPull:
    """Fetch a branch of a remote and bring it into the current branch.

    mode ff-only (default) refuses diverged branches; merge and rebase resolve them.
    Rebasing rewrites local commits: it answers requires_confirmation first, naming
    them (call again with its confirmation_token). A conflict stops with error 1030
    reason conflict (see git_status, git_merge_abort).
    """
    from cuedeck_git.confirm import listing, refuse_protected

    repo = Repo(workspace)
    name = _remote(repo, remote)
    wanted = _branch(repo, branch)
    before = repo.head()
    # Fetch, look, then integrate what was fetched: what is checked is what is merged.
    repo.run("fetch", "--quiet", name, f"refs/heads/{wanted}", network=True)
    fetched = repo.commit_of("FETCH_HEAD", field="branch")
    if before:
        base = repo.text("merge-base", before, fetched).strip() or before
        incoming = repo.run("diff", "--name-only", "-z", base, fetched, "--", ":/").stdout
        refuse_protected(
            f"git pull {name} {wanted}",
            [decode(i) for i in incoming.split(b"\0") if i],
            workspace.places,
            top=repo.top,
        )
    local = _log(repo, f"{fetched}..HEAD") if before else []
    if mode == "rebase" and local and repo.count(f"HEAD..{fetched}"):
        warning = (
            f"rebasing onto {name}/{wanted} rewrites {len(local)} local commit(s) (new hashes; "
            f"the old ones stay only in the reflog): {listing(local)}"
        )
        asked = confirm(
            workspace,
            warning=warning,
            token=confirmation_token,
            state=f"{before}:{fetched}",
            resolved={"remote": name, "branch": wanted, "onto": fetched, "rewritten": local},
        )
        if asked is not None:
            return asked
    if not before:  # an empty repository: the branch starts at what was fetched
        repo.run("reset", "--hard", "--quiet", fetched, "--")
    elif mode == "rebase":
        repo.run("rebase", "--quiet", fetched)
    else:
        merge = ["--ff-only"] if mode == "ff-only" else ["--no-edit"]
        message = f"Merge branch '{wanted}' of {name}"
        repo.run("merge", "--quiet", *merge, "-m", message, fetched)
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


def _log(repo: Repo, revisions: str) -> list[str]:
    text = repo.text("log", "--format=%h %s", revisions, "--")
    return [line for line in text.splitlines() if line]


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
