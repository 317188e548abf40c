"""``git_search_commits`` and ``git_search_diffs``: find the commit that did something.

Commits by message, author and dates (``git log --grep/--author/--since/--until``), and
commits whose diff adds or removes a string (``-S``, the pickaxe) or has an added or
removed line matching a regular expression (``-G``), with the files each touched.
Through :class:`~cuedeck_git.runner.Repo`: no shell, a deadline, validated refs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from typing_extensions import TypedDict  # pydantic needs it for TypedDicts on 3.11

from cuedeck.errors import InvalidInput
from cuedeck_git.runner import Repo, decode, pathspecs

if TYPE_CHECKING:
    import pydantic

    from cuedeck.workspace import Workspace
else:
    from cuedeck.plugins.tools import lazy_pydantic as pydantic

_FIELD, _RECORD = "\x1f", "\x1e"
_FORMAT = _FIELD.join(("%H", "%h", "%an", "%ae", "%aI", "%s")) + _RECORD
Revision = Annotated[str | None, pydantic.Field(description="Commit, branch or tag", min_length=1)]
Text = Annotated[str | None, pydantic.Field(min_length=1, max_length=500)]


class FoundCommit(TypedDict):
    """A commit found, with the files it changed."""

    commit_hash: str
    short_hash: str
    author: str
    author_email: str
    date: str
    subject: str
    files: list[str]


class CommitSearch(TypedDict):
    """What ``git_search_commits`` and ``git_search_diffs`` return."""

    success: bool
    commits: list[FoundCommit]
    offset: int
    returned: int
    has_more: bool
    next_offset: int | None


def git_search_commits(
    workspace: Workspace,
    message: Annotated[
        str | None,
        pydantic.Field(
            description="Text (a regex) in the commit message", min_length=1, max_length=500
        ),
    ] = None,
    author: Annotated[
        str | None,
        pydantic.Field(description="Author name or email (a regex)", min_length=1, max_length=200),
    ] = None,
    since: Annotated[
        str | None,
        pydantic.Field(description="After this date, e.g. 2026-01-31", min_length=1, max_length=50),
    ] = None,
    until: Annotated[
        str | None, pydantic.Field(description="Before this date", min_length=1, max_length=50)
    ] = None,
    file_paths: Annotated[
        list[str] | None,
        pydantic.Field(description="Only commits touching these paths", max_length=100),
    ] = None,
    ref: Revision = None,
    limit: Annotated[int, pydantic.Field(description="Most commits to return", ge=1, le=200)] = 20,
    offset: Annotated[int, pydantic.Field(description="Commits to skip", ge=0)] = 0,
) -> CommitSearch:
    """Find commits by message, author and date range, newest first, with their files."""
    if not any((message, author, since, until, file_paths)):
        raise InvalidInput(
            "say what to look for: message, author, since, until or file_paths", field="message"
        )
    options = ["-i"]
    if message:
        options.append(f"--grep={message}")
    if author:
        options.append(f"--author={author}")
    if since:
        options.append(f"--since={since}")
    if until:
        options.append(f"--until={until}")
    return _search(workspace, options, file_paths, ref, limit, offset)


def git_search_diffs(
    workspace: Workspace,
    text: Annotated[
        str,
        pydantic.Field(
            description="The string, or regex, to look for in diffs", min_length=1, max_length=500
        ),
    ],
    match: Annotated[
        Literal["string", "regex"],
        pydantic.Field(
            description="string: commits that add or remove it (-S); "
            "regex: a changed line matches (-G)"
        ),
    ] = "string",
    file_paths: Annotated[
        list[str] | None, pydantic.Field(description="Only in these paths", max_length=100)
    ] = None,
    ref: Revision = None,
    limit: Annotated[int, pydantic.Field(description="Most commits to return", ge=1, le=200)] = 20,
    offset: Annotated[int, pydantic.Field(description="Commits to skip", ge=0)] = 0,
) -> CommitSearch:
    """Find the commits whose changes add or remove a string, or touch lines matching a regex.

    The pickaxe: when did this function, constant or message appear or disappear?
    """
    if "\n" in text or "\x00" in text:
        raise InvalidInput("the text must be one line", field="text")
    option = f"-S{text}" if match == "string" else f"-G{text}"
    return _search(workspace, [option], file_paths, ref, limit, offset)


def _search(
    workspace: Workspace,
    options: list[str],
    file_paths: list[str] | None,
    ref: str | None,
    limit: int,
    offset: int,
) -> CommitSearch:
    from cuedeck.serving.file_tools import checked_path

    repo = Repo(workspace)
    start = repo.commit_of(ref, field="ref") if ref else repo.head()
    if start is None:
        return _page([], offset, False)
    paths = [checked_path(workspace, p)[0] for p in file_paths or []]
    output = decode(
        repo.run(
            "log", *options, "--name-only", f"--format={_RECORD}{_FORMAT}",
            f"--skip={offset}", f"--max-count={limit + 1}", "--end-of-options", start,
            "--", *pathspecs(paths),
        ).stdout
    )  # fmt: skip
    commits: list[FoundCommit] = []
    parts = output.split(_RECORD)
    for header, rest in zip(parts[1::2], parts[2::2], strict=False):
        sha, short, name, email, date, subject = header.split(_FIELD)[:6]
        files = [line for line in rest.splitlines() if line.strip()]
        commits.append(
            {
                "commit_hash": sha, "short_hash": short, "author": name, "author_email": email,
                "date": date, "subject": subject, "files": [repo.shown(f) for f in files],
            }
        )  # fmt: skip
    has_more = len(commits) > limit
    return _page(commits[:limit], offset, has_more)


def _page(commits: list[FoundCommit], offset: int, has_more: bool) -> CommitSearch:
    return {
        "success": True,
        "commits": commits,
        "offset": offset,
        "returned": len(commits),
        "has_more": has_more,
        "next_offset": offset + len(commits) if has_more else None,
    }
