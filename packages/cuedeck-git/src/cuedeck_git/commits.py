"""Tools that record work: ``git_stage``, ``git_unstage``, ``git_commit``, ``git_merge_abort``."""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING, Annotated

from typing_extensions import TypedDict  # pydantic needs it for TypedDicts on 3.11

from cuedeck.errors import InvalidInput
from cuedeck.system.git import inside_git_directory
from cuedeck_git.history import PathList, _paths
from cuedeck_git.runner import Repo, check_text, decode, exclusions, pathspecs

if TYPE_CHECKING:
    import pydantic

    from cuedeck.workspace import Workspace
else:
    from cuedeck.plugins.tools import lazy_pydantic as pydantic


class GitStage(TypedDict):
    """The reply of ``git_stage``."""

    success: bool
    staged_files: list[str]


class GitUnstage(TypedDict):
    """The reply of ``git_unstage``."""

    success: bool
    unstaged_files: list[str]


class GitCommit(TypedDict):
    """The reply of ``git_commit``."""

    success: bool
    commit_hash: str
    short_hash: str
    message: str
    author: str
    files_committed: list[str]


class GitMergeAbort(TypedDict):
    """The reply of ``git_merge_abort``."""

    success: bool
    message: str


def _specs(workspace: Workspace, file_paths: list[str] | None) -> list[str]:
    """Pathspecs of ``file_paths`` (the whole workspace when None), never a denied file."""
    specs = pathspecs(_paths(workspace, file_paths)) or ["."]
    return specs + exclusions(workspace)


def _staged(repo: Repo, specs: list[str]) -> list[str]:
    raw = repo.run("diff", "--cached", "--name-only", "-z", "--", *specs).stdout
    return [repo.shown(decode(item)) for item in raw.split(b"\0") if item]


def git_stage(workspace: Workspace, file_paths: PathList = None) -> GitStage:
    """Stage changes (new, modified and deleted files) for the next commit.

    Without file_paths, every change in the workspace. Files no tool reads ([files]
    deny, CueDeck's private files, a file with several hard links) are never staged.
    """
    repo = Repo(workspace)
    specs = _specs(workspace, file_paths)
    changed = repo.run(
        "ls-files", "-z", "--others", "--modified", "--deleted", "--exclude-standard", "--", *specs
    ).stdout
    kept = [path for path in dict.fromkeys(_names(changed)) if _stageable(repo, path)]
    if kept:  # the paths, through stdin: as many as there are, each taken literally
        listed = b"\0".join(os.fsencode(spec) for spec in pathspecs(kept)) + b"\0"
        repo.run("add", "--all", "--pathspec-from-file=-", "--pathspec-file-nul", input=listed)
    return {"success": True, "staged_files": _staged(repo, specs)}


def _names(raw: bytes) -> list[str]:
    return [decode(item) for item in raw.split(b"\0") if item]


def _stageable(repo: Repo, path: str) -> bool:
    """Whether a tool may stage the workspace-relative ``path``: gone (a deletion), or a
    file the read boundary lets a tool read (its content is what a commit records)."""
    full = os.path.join(repo.root, path)
    try:
        st = os.lstat(full)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    real = os.path.relpath(os.path.realpath(full), os.path.realpath(repo.root))
    inside = real.replace(os.sep, "/") if not real.startswith("..") else None
    links = st.st_nlink if stat.S_ISREG(st.st_mode) else 1  # a link is staged as its text
    if repo.workspace.read_refusal(path, real_rel=inside, links=links) is not None:
        return False
    return not inside_git_directory(os.path.realpath(repo.root), path)


def git_unstage(workspace: Workspace, file_paths: PathList = None) -> GitUnstage:
    """Take staged changes out of the next commit; the files themselves are untouched."""
    repo = Repo(workspace)
    specs = _specs(workspace, file_paths)
    before = _staged(repo, specs)
    if before:
        if repo.head():
            repo.run("restore", "--staged", "--", *specs)
        else:  # nothing committed yet: unstaging is removing from the index
            repo.run("rm", "-r", "-q", "--cached", "--", *specs)
    return {"success": True, "unstaged_files": before}


def git_commit(
    workspace: Workspace,
    message: Annotated[str, pydantic.Field(description="Commit message", min_length=1)],
    author: Annotated[
        str | None,
        pydantic.Field(description="'Name <email>' when not the configured user", min_length=3),
    ] = None,
) -> GitCommit:
    """Commit the staged changes with message (stage them with git_stage first)."""
    if not message.strip():
        raise InvalidInput("the commit message is empty", field="message")
    repo = Repo(workspace)
    options = []
    if author is not None:
        check_text(author, field="author")
        if not (author.count("<") == 1 and author.rstrip().endswith(">")):
            raise InvalidInput("author must look like 'Name <email>'", field="author")
        options.append(f"--author={author}")
    # The message goes through stdin: no length limit, nothing read as an option.
    repo.run("commit", "--quiet", "--cleanup=strip", "--file=-", *options, input=message.encode())
    fields = repo.text("log", "-1", "--format=%H%x1f%h%x1f%an <%ae>%x1f%B", "HEAD", "--")
    commit, short, who, body = fields.split("\x1f", 3)
    changed = repo.run(
        "diff-tree", "--root", "--no-commit-id", "--name-only", "-r", "-z", commit, "--"
    ).stdout
    return {
        "success": True,
        "commit_hash": commit,
        "short_hash": short,
        "message": body.strip(),
        "author": who,
        "files_committed": [repo.shown(decode(item)) for item in changed.split(b"\0") if item],
    }


def git_merge_abort(workspace: Workspace) -> GitMergeAbort:
    """Abort the merge in progress and return to the state before it began."""
    repo = Repo(workspace)
    repo.run("merge", "--abort")
    workspace.invalidate()
    head = repo.text("rev-parse", "--short", "HEAD").strip()
    return {"success": True, "message": f"merge aborted; HEAD is at {head}"}
