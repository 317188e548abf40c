"""Tools that can destroy work: ``git_reset``, ``git_clean`` and ``git_checkout_file``.

Each works out exactly what it would destroy first: uncommitted changes, untracked and
ignored files the target would overwrite, files it would remove, commits that would be
left on no branch. When that is something, the call answers with a confirmation token
bound to that list (core's :func:`~cuedeck.serving.confirmation.confirm`) and a warning naming
it all; when it is nothing, the call simply runs. None of them writes CueDeck's control
files, whatever commit holds them.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated, Literal, cast

from typing_extensions import TypedDict  # pydantic needs it for TypedDicts on 3.11

from cuedeck.serving.confirmation import ConfirmationAsked, ConfirmationToken, confirm
from cuedeck_git.confirm import listing, refuse_protected
from cuedeck_git.history import PathList, _paths
from cuedeck_git.runner import Repo, decode, pathspecs
from cuedeck_git.status import state_digest

if TYPE_CHECKING:
    import pydantic

    from cuedeck.workspace import Workspace
else:
    from cuedeck.plugins.tools import lazy_pydantic as pydantic

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


def _files(raw: bytes) -> list[str]:
    return [decode(item) for item in raw.split(b"\0") if item]


def _overwritten(repo: Repo, commit: str) -> list[str]:
    """Repository paths of files the index does not track that checking out ``commit``'s
    whole tree would overwrite or remove (untracked and ignored alike): a file of the
    tree at that path, or a folder of it where a file stands."""
    top = repo.text("rev-parse", "--show-toplevel").strip()
    wanted = _files(repo.run("ls-tree", "-r", "-z", "--name-only", "--full-tree", commit).stdout)
    tracked = set(_files(repo.run("ls-files", "-z", "--full-name", "--", ":/").stdout))
    hit: set[str] = set()
    for path in wanted:
        if path in tracked:
            continue
        parts = path.split("/")
        for depth in range(1, len(parts) + 1):
            prefix = "/".join(parts[:depth])
            if prefix in tracked:
                break
            where = os.path.join(top, prefix)
            if depth < len(parts) and os.path.isdir(where) and not os.path.islink(where):
                continue
            if os.path.isdir(where) and not os.path.islink(where):
                hit.update(_files_under(top, prefix, tracked))  # a folder where A has a file
            elif os.path.lexists(where):
                hit.add(prefix)
            break
    return sorted(hit)


def _files_under(top: str, folder: str, tracked: set[str]) -> list[str]:
    """Repository paths of the files git does not track under ``folder``: what replacing
    the folder by a file deletes (the folder itself names none of them)."""
    found = []
    for here, folders, names in os.walk(os.path.join(top, folder)):
        folders.sort()
        for name in sorted(names):
            path = os.path.relpath(os.path.join(here, name), top).replace(os.sep, "/")
            if path not in tracked:
                found.append(path)
    return found or [folder]


def _changed_between(repo: Repo, start: str, end: str) -> list[str]:
    """Repository paths that differ between two commits."""
    raw = repo.run("diff", "--name-only", "-z", "--no-renames", start, end, "--", ":/").stdout
    return _files(raw)


def git_reset(
    workspace: Workspace,
    mode: Annotated[
        Literal["soft", "mixed", "hard"],
        pydantic.Field(description="soft keeps index and files, mixed keeps files, hard neither"),
    ] = "mixed",
    target: Annotated[
        str, pydantic.Field(description="Commit or ref to reset to", min_length=1)
    ] = ("HEAD"),
    confirmation_token: ConfirmationToken = None,
) -> GitReset:
    """Move the current branch to target; mode hard also discards uncommitted changes.

    Answers requires_confirmation first in hard mode, and in any mode that would leave
    commits on no branch, tag or remote; the warning names every file and commit that
    would be lost (untracked files hard mode overwrites too). Call again with its token.
    """
    repo = Repo(workspace)
    commit = repo.commit_of(target, field="target")
    head = repo.head()
    lost: list[str] = []
    overwritten: list[str] = []
    if mode == "hard":
        if head:
            changed = _changed_between(repo, head, commit)
            refuse_protected("git reset --hard", changed, workspace.places, top=repo.top)
        changed = _uncommitted(repo, [])
        overwritten = _overwritten(repo, commit)
        if changed:
            lost.append(f"uncommitted changes in {len(changed)} file(s): {listing(changed)}")
        if overwritten:
            shown = [repo.shown(path) for path in overwritten]
            lost.append(
                f"{len(shown)} untracked or ignored file(s) it overwrites: {listing(shown)}"
            )
    leaving = _commits(repo, [f"{commit}..HEAD"]) if head else []
    orphans = _orphans(repo, commit) if leaving else []
    if leaving and (orphans or mode == "hard"):
        kept = "all are kept by another branch, tag or remote"
        if orphans:
            kept = f"{len(orphans)} on no other branch, tag or remote: {listing(orphans)}"
        lost.append(f"{len(leaving)} commit(s) from the branch ({kept})")
    if mode == "hard" or orphans:
        what = "; and ".join(lost) if lost else "nothing (the tree is clean)"
        after = (
            "Uncommitted changes and overwritten files cannot be recovered."
            if mode == "hard"
            else "Commits on no branch stay only in the reflog until git prunes them."
        )
        warning = f"git reset --{mode} {commit[:12]} discards {what}. {after}"
        asked = confirm(
            workspace,
            warning=warning,
            token=confirmation_token,
            state=state_digest(repo, [repo.shown(path) for path in overwritten]),
            resolved={"target": commit, "overwritten": overwritten, "orphans": orphans},
        )
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
    confirmation_token: ConfirmationToken = None,
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
    asked = confirm(
        workspace,
        warning=warning,
        token=confirmation_token,
        state=state_digest(repo, [path.rstrip("/") for path in doomed]),
        resolved={"file_paths": paths, "removed": doomed},
    )
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
    confirmation_token: ConfirmationToken = None,
) -> GitCheckoutFile:
    """Restore a file (or folder) to its content at ref, discarding local changes to it.

    Over local changes, or untracked and ignored files at those paths, it answers
    requires_confirmation first, naming every file and the lines that would be lost;
    call again with its confirmation_token.
    """
    repo = Repo(workspace)
    rel = _paths(workspace, [file_path])[0]
    commit = repo.commit_of(ref, field="ref")
    specs = pathspecs([rel])
    # ls-tree and ls-files print paths relative to the workspace, where git runs.
    listed = repo.run("ls-tree", "-r", "-z", "--name-only", commit, "--", *specs).stdout
    restored = _files(listed)
    if not restored:
        from cuedeck.errors import FileNotFound

        raise FileNotFound(f"{rel} is not in {ref}", path=rel, help="git_log shows its history")
    refuse_protected(f"git checkout {ref} -- {rel}", restored, workspace.places, top=repo.root)
    tracked = set(_files(repo.run("ls-files", "-z", "--", *specs).stdout))
    overwritten = [
        path for path in restored if path not in tracked and os.path.lexists(repo.root / path)
    ]
    changed = _uncommitted(repo, specs)
    changed += [f"{path} (untracked or ignored)" for path in overwritten]
    if changed:
        warning = (
            f"git checkout {ref} -- {rel} discards local changes in {len(changed)} file(s): "
            f"{listing(changed)}. They cannot be recovered."
        )
        asked = confirm(
            workspace,
            warning=warning,
            token=confirmation_token,
            state=state_digest(repo, [rel, *overwritten]),
            resolved={"file_path": rel, "ref": commit, "discarded": changed},
        )
        if asked is not None:
            return cast("GitCheckoutFile", asked)
    repo.run("checkout", commit, "--", *specs)
    workspace.invalidate()
    return {"success": True, "restored_files": restored}
