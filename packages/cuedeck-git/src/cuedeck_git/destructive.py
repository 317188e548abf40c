"""Tools that can destroy work: ``git_reset``, ``git_clean`` and ``git_checkout_file``.

Each works out exactly what it would destroy first. When that is something (uncommitted
changes, untracked files, commits leaving the branch), the call answers with a
confirmation token and a warning naming it all (:mod:`cuedeck_git.confirm`); when it is
nothing, the call simply runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal, cast

from typing_extensions import TypedDict  # pydantic needs it for TypedDicts on 3.11

from cuedeck_git.confirm import ConfirmationAsked, Token, confirmed, listing
from cuedeck_git.history import PathList, _paths
from cuedeck_git.runner import Repo, decode, pathspecs
from cuedeck_git.status import state_digest

if TYPE_CHECKING:
    import pydantic

    from cuedeck.workspace import Workspace
else:
    from cuedeck.tools import lazy_pydantic as pydantic

#: What ``git_clean`` never removes, ignored or not: CueDeck's cards, docs, memory and cache
#: (uncommitted cards are work; CueDeck's own tools manage that folder).
KEEP = ".cuedeck/"


class GitResetDone(TypedDict):
    """``git_reset`` done."""

    success: bool
    mode: str
    target_commit: str


class GitCleanDone(TypedDict):
    """``git_clean`` done: the removed files."""

    success: bool
    removed_files: list[str]


class GitCheckoutFileDone(TypedDict):
    """``git_checkout_file`` done: the restored files."""

    success: bool
    restored_files: list[str]


#: The reply of ``git_reset``: done, or asking for confirmation (hard mode).
GitReset = GitResetDone | ConfirmationAsked
#: The reply of ``git_clean``: the removed files, or asking for confirmation.
GitClean = GitCleanDone | ConfirmationAsked
#: The reply of ``git_checkout_file``: the restored files, or asking for confirmation.
GitCheckoutFile = GitCheckoutFileDone | ConfirmationAsked


def _uncommitted(repo: Repo, specs: list[str]) -> list[str]:
    """``path (+a -d)`` for every file whose working copy differs from HEAD (and exists)."""
    revision = ["HEAD"] if repo.head() else ["--cached"]
    raw = repo.run("diff", "--numstat", "-z", "--no-renames", *revision, "--", *specs).stdout
    changed = []
    for record in raw.split(b"\0"):
        if not record:
            continue
        added, deleted, path = decode(record).split("\t", 2)
        local = repo.local(path)
        if local is not None and not (repo.root / local).exists():
            continue  # a deleted file comes back: nothing of it is lost
        lines = "binary" if added == "-" else f"+{added} -{deleted}"
        changed.append(f"{repo.shown(path)} ({lines})")
    return changed


def _commits(repo: Repo, revisions: list[str]) -> list[str]:
    """``short subject`` of the commits ``git log revisions`` lists."""
    text = repo.text("log", "--format=%h %s", *revisions, "--")
    return [line for line in text.splitlines() if line]


def _orphans(repo: Repo, target: str) -> list[str]:
    """Commits between ``target`` and HEAD that no other ref holds: what a reset loses."""
    revisions = ["HEAD", "--not", target]
    branch = repo.current_branch()
    if branch is not None:
        revisions.append(f"--exclude={branch}")
    return _commits(repo, [*revisions, "--branches", "--remotes", "--tags"])


def git_reset(
    workspace: Workspace,
    mode: Annotated[
        Literal["soft", "mixed", "hard"],
        pydantic.Field(description="soft keeps index and files, mixed keeps files, hard neither"),
    ] = "mixed",
    target: Annotated[
        str, pydantic.Field(description="Commit or ref to reset to", min_length=1)
    ] = ("HEAD"),
    confirmation_token: Token = None,
) -> GitReset:
    """Move the current branch to target; mode hard also discards uncommitted changes.

    Hard mode answers requires_confirmation first, with a warning naming the files and
    commits that would be lost; call again with its confirmation_token.
    """
    repo = Repo(workspace)
    commit = repo.commit_of(target, field="target")
    if mode == "hard":
        changed = _uncommitted(repo, [])
        leaving = _commits(repo, [f"{commit}..HEAD"]) if repo.head() else []
        lost = []
        if changed:
            lost.append(f"uncommitted changes in {len(changed)} file(s): {listing(changed)}")
        if leaving:
            orphans = _orphans(repo, commit)
            kept = "all are kept by another branch, tag or remote"
            if orphans:
                kept = f"{len(orphans)} on no other branch, tag or remote: {listing(orphans)}"
            lost.append(f"{len(leaving)} commit(s) from the branch ({kept})")
        warning = (
            f"git reset --hard {commit[:12]} discards "
            + ("; and ".join(lost) if lost else "nothing uncommitted (the tree is clean)")
            + ". Uncommitted changes cannot be recovered."
        )
        arguments = {"mode": mode, "target": commit}
        state = state_digest(repo)
        asked = confirmed(workspace, "git_reset", arguments, state, warning, confirmation_token)
        if asked is not None:
            return cast("GitReset", asked)
    repo.run("reset", f"--{mode}", commit, "--")
    workspace.invalidate()
    return {"success": True, "mode": mode, "target_commit": commit}


def git_clean(
    workspace: Workspace,
    file_paths: PathList = None,
    directories: Annotated[bool, pydantic.Field(description="Remove untracked folders too")] = True,
    include_ignored: Annotated[
        bool, pydantic.Field(description="Remove ignored files too (git clean -x)")
    ] = False,
    confirmation_token: Token = None,
) -> GitClean:
    """Remove untracked files (and folders) from the working tree.

    Answers requires_confirmation first, listing every file that would be removed; call
    again with its confirmation_token. Nothing under .cuedeck/ is ever removed.
    """
    repo = Repo(workspace)
    paths = _paths(workspace, file_paths)
    options = ["-d"] if directories else []
    if include_ignored:
        options.append("-x")
    options += ["-e", KEEP]
    specs = pathspecs(paths) or ["."]
    preview = repo.text("clean", "-n", *options, "--", *specs)
    doomed = [line.removeprefix("Would remove ") for line in preview.splitlines() if line]
    if not doomed:
        return {"success": True, "removed_files": []}
    count = len(doomed)
    warning = (
        f"git clean permanently deletes {count} untracked path(s): {listing(doomed, limit=25)}"
    )
    arguments = {
        "file_paths": paths, "directories": directories, "include_ignored": include_ignored,
    }  # fmt: skip
    state = state_digest(repo, [path.rstrip("/") for path in doomed])
    asked = confirmed(workspace, "git_clean", arguments, state, warning, confirmation_token)
    if asked is not None:
        return cast("GitClean", asked)
    output = repo.text("clean", "-f", *options, "--", *specs)
    removed = [line.removeprefix("Removing ") for line in output.splitlines() if line]
    workspace.invalidate()
    return {"success": True, "removed_files": removed}


def git_checkout_file(
    workspace: Workspace,
    file_path: Annotated[
        str, pydantic.Field(description="Workspace-relative file or folder", min_length=1)
    ],
    ref: Annotated[
        str, pydantic.Field(description="Commit or ref to restore from", min_length=1)
    ] = ("HEAD"),
    confirmation_token: Token = None,
) -> GitCheckoutFile:
    """Restore a file (or folder) to its content at ref, discarding local changes to it.

    Over local changes it answers requires_confirmation first, naming the files and the
    lines that would be lost; call again with its confirmation_token.
    """
    repo = Repo(workspace)
    rel = _paths(workspace, [file_path])[0]
    commit = repo.commit_of(ref, field="ref")
    specs = pathspecs([rel])
    # ls-tree and ls-files print paths relative to the workspace, where git runs.
    listed = repo.run("ls-tree", "-r", "-z", "--name-only", commit, "--", *specs).stdout
    restored = [decode(item) for item in listed.split(b"\0") if item]
    if not restored:
        from cuedeck.errors import FileNotFound

        raise FileNotFound(f"{rel} is not in {ref}", path=rel, help="git_log shows its history")
    changed = _uncommitted(repo, specs)
    changed += [f"{path} (untracked)" for path in _untracked(repo, specs) if path in restored]
    if changed:
        warning = (
            f"git checkout {ref} -- {rel} discards local changes in {len(changed)} file(s): "
            f"{listing(changed)}. They cannot be recovered."
        )
        arguments = {"file_path": rel, "ref": commit}
        state = state_digest(repo, [rel])
        asked = confirmed(
            workspace, "git_checkout_file", arguments, state, warning, confirmation_token
        )
        if asked is not None:
            return cast("GitCheckoutFile", asked)
    repo.run("checkout", commit, "--", *specs)
    workspace.invalidate()
    return {"success": True, "restored_files": restored}


def _untracked(repo: Repo, specs: list[str]) -> list[str]:
    raw = repo.run("ls-files", "--others", "--exclude-standard", "-z", "--", *specs).stdout
    return [decode(item) for item in raw.split(b"\0") if item]
