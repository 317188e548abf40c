"""Branch tools: ``git_branch_list``, ``git_branch_create``, ``git_branch_switch`` and
``git_branch_delete`` (which asks for confirmation before losing commits)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from typing_extensions import TypedDict  # pydantic needs it for TypedDicts on 3.11

from cuedeck.errors import InvalidInput, did_you_mean, suggestion_text
from cuedeck.serving.confirmation import ConfirmationAsked, ConfirmationToken, confirm
from cuedeck_git.confirm import listing, refuse_protected
from cuedeck_git.refs import check_ref_name
from cuedeck_git.runner import Repo

if TYPE_CHECKING:
    import pydantic

    from cuedeck.workspace import Workspace
else:
    from cuedeck.plugins.tools import lazy_pydantic as pydantic

BranchName = Annotated[str, pydantic.Field(description="Branch name", min_length=1, max_length=255)]


class Branch(TypedDict):
    """One local branch."""

    name: str
    is_current: bool
    last_commit: str
    upstream: str | None
    ahead: int
    behind: int


class GitBranchList(TypedDict):
    """The reply of ``git_branch_list``."""

    success: bool
    current_branch: str | None
    branches: list[Branch]


class GitBranchCreate(TypedDict):
    """The reply of ``git_branch_create``."""

    success: bool
    created_branch: str


class GitBranchSwitched(TypedDict):
    """What ``git_branch_switch`` did, once confirmed where files would be overwritten."""

    success: bool
    from_branch: str | None
    to_branch: str


#: The reply of ``git_branch_switch``: done, or asking for confirmation (files that the
#: switch would overwrite).
GitBranchSwitch = GitBranchSwitched | ConfirmationAsked


class GitBranchDeleted(TypedDict):
    """``git_branch_delete`` done."""

    success: bool
    deleted_branch: str


#: The reply of ``git_branch_delete``: done, or asking for confirmation (unmerged commits).
GitBranchDelete = GitBranchDeleted | ConfirmationAsked


def _track(text: str) -> tuple[int, int]:
    """Ahead and behind counts from ``%(upstream:track,nobracket)``."""
    ahead = behind = 0
    for part in text.split(","):
        word, _, number = part.strip().partition(" ")
        if word == "ahead":
            ahead = int(number)
        elif word == "behind":
            behind = int(number)
    return ahead, behind


def _branches(repo: Repo) -> list[Branch]:
    fields = "%(refname:short)%1f%(objectname)%1f%(HEAD)%1f%(upstream:short)%1f"
    fields += "%(upstream:track,nobracket)"
    text = repo.text("for-each-ref", f"--format={fields}", "refs/heads/")
    branches: list[Branch] = []
    for line in text.splitlines():
        name, commit, head, upstream, track = line.split("\x1f")
        ahead, behind = _track(track)
        branches.append(
            {
                "name": name, "is_current": head == "*", "last_commit": commit,
                "upstream": upstream or None, "ahead": ahead, "behind": behind,
            }
        )  # fmt: skip
    return branches


def _checked_name(repo: Repo, name: str, *, field: str = "branch_name") -> str:
    """``name`` if git accepts it as a branch name, else 1004 saying why."""
    check_ref_name(name, field=field)
    result = repo.run("check-ref-format", "--branch", name, check=False)
    if result.returncode != 0:
        raise InvalidInput(
            f"{name!r} is not a valid branch name",
            field=field,
            help="no spaces, '..', '~', '^', ':', '?', '*', '[' or trailing '.lock'",
        )
    return name


def _existing(repo: Repo, name: str) -> str:
    """``name`` if it is a local branch, else 1004 naming the closest ones."""
    names = [branch["name"] for branch in _branches(repo)]
    if name not in names:
        near = did_you_mean(name, names)
        raise InvalidInput(
            f"there is no local branch {name!r}",
            field="branch_name",
            suggestion=suggestion_text(near),
            help="git_branch_list lists the branches",
        )
    return name


def git_branch_list(workspace: Workspace) -> GitBranchList:
    """List local branches with their last commit, upstream and ahead/behind counts."""
    repo = Repo(workspace, read_only=True)
    return {
        "success": True,
        "current_branch": repo.current_branch(),
        "branches": _branches(repo),
    }


def git_branch_create(
    workspace: Workspace,
    branch_name: BranchName,
    start_point: Annotated[
        str | None, pydantic.Field(description="Commit or branch to start at (default HEAD)")
    ] = None,
) -> GitBranchCreate:
    """Create a branch at start_point (default HEAD) without switching to it."""
    repo = Repo(workspace)
    name = _checked_name(repo, branch_name)
    start = [repo.commit_of(start_point, field="start_point")] if start_point else []
    repo.run("branch", name, *start)
    return {"success": True, "created_branch": name}


def git_branch_switch(
    workspace: Workspace, branch_name: BranchName, confirmation_token: ConfirmationToken = None
) -> GitBranchSwitch:
    """Switch to a local branch; local changes it would overwrite make git refuse.

    Untracked or ignored files that the branch has at the same paths (git overwrites
    ignored ones without asking) make it answer requires_confirmation first, naming
    them; call again with its confirmation_token.
    """
    from cuedeck_git.destructive import _changed_between, _overwritten
    from cuedeck_git.status import state_digest

    repo = Repo(workspace)
    name = _existing(repo, _checked_name(repo, branch_name))
    before = repo.current_branch()
    tip = repo.commit_of(f"refs/heads/{name}", field="branch_name")
    head = repo.head()
    if head:
        changed = _changed_between(repo, head, tip)
        refuse_protected(f"git switch {name}", changed, workspace.places, top=repo.top)
    overwritten = _overwritten(repo, tip)
    if overwritten:
        shown = [repo.shown(path) for path in overwritten]
        warning = (
            f"git switch {name} overwrites {len(shown)} untracked or ignored file(s) that the "
            f"branch also has: {listing(shown)}. Their current content cannot be recovered."
        )
        asked = confirm(
            workspace,
            warning=warning,
            token=confirmation_token,
            state=state_digest(repo, shown),
            resolved={"branch": tip, "overwritten": overwritten},
        )
        if asked is not None:
            return asked
    repo.run("switch", "--no-guess", name)
    workspace.invalidate()
    return {"success": True, "from_branch": before, "to_branch": name}


def git_branch_delete(
    workspace: Workspace, branch_name: BranchName, confirmation_token: ConfirmationToken = None
) -> GitBranchDelete:
    """Delete a local branch.

    A branch with commits no other branch, tag or remote has answers
    requires_confirmation first, listing those commits; call again with its token.
    """
    repo = Repo(workspace)
    name = _existing(repo, _checked_name(repo, branch_name))
    if name == repo.current_branch():
        raise InvalidInput(
            f"{name!r} is the current branch", field="branch_name",
            help="switch to another branch first (git_branch_switch)",
        )  # fmt: skip
    tip = repo.commit_of(f"refs/heads/{name}", field="branch_name")
    text = repo.text(
        "log", "--format=%h %s", tip, "--not", f"--exclude={name}", "--branches", "--remotes",
        "--tags", "--",
    )  # fmt: skip
    only_here = [line for line in text.splitlines() if line]
    if only_here:
        warning = (
            f"branch {name!r} has {len(only_here)} commit(s) that no other branch, tag or "
            f"remote holds; deleting it loses them: {listing(only_here)}"
        )
        asked = confirm(
            workspace,
            warning=warning,
            token=confirmation_token,
            state=tip,
            resolved={"branch": name, "commits": only_here},
        )
        if asked is not None:
            return asked
    repo.run("branch", "-D", name)
    return {"success": True, "deleted_branch": name}
