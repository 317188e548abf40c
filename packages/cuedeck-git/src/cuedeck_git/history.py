"""``git_diff`` and ``git_log``: token-limited pages, like ``get_file_content``.

A diff is paged in whole lines with core's paging scheme (``offset`` is a line of the
diff); a log in whole commits (``offset`` is a number of commits to skip). Files the
workspace's ``[files] deny`` list names never appear in a diff. Replies are masked on
their way out like every other tool's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from typing_extensions import TypedDict  # pydantic needs it for TypedDicts on 3.11

from cuedeck.errors import InvalidInput
from cuedeck.serving.paging import check_offset, cut, page_lines
from cuedeck.serving.reply import fit_reply
from cuedeck_git.runner import Repo, check_text, decode, exclusions, pathspecs

if TYPE_CHECKING:
    import pydantic

    from cuedeck.workspace import Workspace
else:
    from cuedeck.plugins.tools import lazy_pydantic as pydantic

PathList = Annotated[
    list[str] | None,
    pydantic.Field(description="Workspace-relative paths to limit to", max_length=1000),
]
Revision = Annotated[str | None, pydantic.Field(description="Commit, branch or tag", min_length=1)]
#: What git may take when it compiles a client's pattern (``--author``, ``-G``, ``--grep``)
#: and reads the history (pack files mapped in small windows: cuedeck.system.git.Git).
SEARCH_MEMORY = 1024 * 1024 * 1024


class DiffFile(TypedDict):
    """One file of a diff, with its line counts (None for binary files)."""

    path: str
    old_path: str | None
    additions: int | None
    deletions: int | None


class GitDiff(TypedDict):
    """The reply of ``git_diff``: one page of the unified diff and the files it touches."""

    success: bool
    diff: str
    files: list[DiffFile]
    total_lines: int
    offset: int
    returned_lines: int
    has_more: bool
    estimated_tokens: int
    max_tokens_per_request: int
    truncated: bool
    requires_pagination: bool
    pagination_hint: str | None


class Commit(TypedDict):
    """One commit of a log."""

    commit_hash: str
    short_hash: str
    author: str
    author_email: str
    date: str
    subject: str
    body: str


class GitLog(TypedDict):
    """The reply of ``git_log``: one page of commits, newest first."""

    success: bool
    commits: list[Commit]
    offset: int
    returned: int
    has_more: bool
    next_offset: int | None
    estimated_tokens: int
    max_tokens_per_request: int
    truncated: bool


def _paths(workspace: Workspace, paths: list[str] | None) -> list[str]:
    from cuedeck.serving.file_tools import checked_path

    return [checked_path(workspace, path)[0] for path in paths or []]


def _range(repo: Repo, staged: bool, from_ref: str | None, to_ref: str | None) -> list[str]:
    """The revisions part of a diff command line."""
    if staged and (from_ref or to_ref):
        raise InvalidInput("staged compares the index with HEAD: no refs with it", field="staged")
    if to_ref and not from_ref:
        raise InvalidInput("to_ref needs from_ref", field="to_ref")
    if staged:
        return ["--cached"]
    revisions = []
    if from_ref:
        revisions.append(repo.commit_of(from_ref, field="from_ref"))
    if to_ref:
        revisions.append(repo.commit_of(to_ref, field="to_ref"))
    return revisions


def _numstat(repo: Repo, command: list[str]) -> list[DiffFile]:
    """The files of a diff, from ``--numstat -z`` (renames come as three fields)."""
    raw = repo.run(*command[:1], "--numstat", "--no-textconv", "-z", *command[1:]).stdout
    fields = raw.split(b"\0")
    files: list[DiffFile] = []
    index = 0
    while index < len(fields):
        head = decode(fields[index])
        index += 1
        if not head:
            continue
        added, deleted, path = head.split("\t", 2)
        old_path = None
        if not path:  # a rename: old and new path follow as their own fields
            old_path, path = decode(fields[index]), decode(fields[index + 1])
            index += 2
        local = repo.local(path)
        if local is None:
            continue
        files.append(
            {
                "path": local,
                "old_path": repo.local(old_path) if old_path else None,
                "additions": None if added == "-" else int(added),
                "deletions": None if deleted == "-" else int(deleted),
            }
        )
    return files


def _shared_files(repo: Repo, revisions: list[str], specs: list[str]) -> list[str]:
    """Pathspecs leaving out changed files with several hard links: their content may be
    a file outside the workspace (the read boundary of every file tool)."""
    import os

    raw = repo.run("diff", "--name-only", "-z", *revisions, "--end-of-options", "--", *specs)
    left_out = []
    for item in raw.stdout.split(b"\0"):
        local = repo.local(decode(item)) if item else None
        if local is None:
            continue
        try:
            shared = os.stat(os.path.join(repo.root, local)).st_nlink > 1
        except OSError:
            continue
        if shared:
            left_out.append(f":(exclude,literal){local}")
    return left_out


def git_diff(
    workspace: Workspace,
    file_paths: PathList = None,
    staged: Annotated[bool, pydantic.Field(description="The staged changes")] = False,
    from_ref: Revision = None,
    to_ref: Revision = None,
    context_lines: Annotated[
        int, pydantic.Field(description="Lines around each change", ge=0, le=100)
    ] = 3,
    offset: Annotated[int, pydantic.Field(description="First line of the diff, 1-based", ge=1)] = 1,
) -> GitDiff:
    """Show changes as a unified diff, in token-limited pages of whole lines.

    Default: the working tree against the index. staged: the index against HEAD.
    from_ref (and to_ref): those commits. Follow pagination_hint while has_more.
    """
    repo = Repo(workspace, read_only=True)
    revisions = _range(repo, staged, from_ref, to_ref)
    paths = _paths(workspace, file_paths)
    specs = pathspecs(paths) or ["."]
    specs += exclusions(workspace)
    if not staged and not to_ref:  # the working tree's files are read
        specs += _shared_files(repo, revisions, specs)
    command = ["diff", *revisions, "--end-of-options", "--", *specs]
    text = repo.run(
        "diff", f"-U{context_lines}", "--no-ext-diff", "--no-textconv", *command[1:]
    ).stdout
    lines = text.splitlines(keepends=True)
    total = len(lines)
    check_offset(offset, total)
    start = offset - 1
    limit = workspace.config.files.max_tokens
    files = _numstat(repo, command)

    def reply(budget: int) -> GitDiff:
        page = page_lines(workspace.count_tokens, lines, start, total, budget)
        last = start + page.taken
        has_more = last < total
        hints = [f"Diff continues. Call again with offset={last + 1}"] if has_more else []
        if page.cut_from is not None:
            hints.insert(
                0, f"Line {offset} alone is {page.cut_from} tokens: only its start is here"
            )
        return {
            "success": True,
            "diff": page.text,
            "files": files,
            "total_lines": total,
            "offset": offset,
            "returned_lines": page.taken,
            "has_more": has_more,
            "estimated_tokens": page.tokens,
            "max_tokens_per_request": limit,
            "truncated": has_more or page.cut_from is not None,
            "requires_pagination": has_more,
            "pagination_hint": " ".join(hints) or None,
        }

    return fit_reply(workspace, limit, reply)


#: Field and record separators of the log format: bytes a commit message cannot hold.
_FIELD, _RECORD = "\x1f", "\x1e"
_FORMAT = _FIELD.join(("%H", "%h", "%an", "%ae", "%aI", "%s", "%b")) + _RECORD


def git_log(
    workspace: Workspace,
    limit: Annotated[int, pydantic.Field(description="Most commits to return", ge=1, le=500)] = 20,
    offset: Annotated[int, pydantic.Field(description="Commits to skip", ge=0)] = 0,
    ref: Revision = None,
    file_paths: PathList = None,
    author: Annotated[
        str | None, pydantic.Field(description="Only commits whose author matches", min_length=1)
    ] = None,
    since: Annotated[
        str | None, pydantic.Field(description="Only commits after, e.g. 2026-01-31", min_length=1)
    ] = None,
) -> GitLog:
    """List commits, newest first, in token-limited pages (follow next_offset)."""
    from cuedeck.system.bounds import check_pattern

    if author:  # a pattern git compiles: sized first, POSIX basic whatever the config says
        check_pattern(check_text(author, field="author"), field="author", syntax="bre")
    repo = Repo(workspace, read_only=True, memory_bytes=SEARCH_MEMORY if author else None)
    if repo.head() is None:
        return _log_page([], offset, False, 0, workspace.config.files.max_tokens, False)
    start = repo.commit_of(ref, field="ref") if ref else "HEAD"
    options = [f"--skip={offset}", f"--max-count={limit + 1}", f"--format={_FORMAT}"]
    if author:
        options += ["--basic-regexp", f"--author={author}"]
    if since:
        options.append(f"--since={check_text(since, field='since')}")
    paths = _paths(workspace, file_paths)
    output = repo.text("log", *options, "--end-of-options", start, "--", *pathspecs(paths))
    records = [record.strip("\n") for record in output.split(_RECORD) if record.strip("\n")]
    limit_tokens = workspace.config.files.max_tokens

    def page(budget: int) -> GitLog:
        commits: list[Commit] = []
        used = 0
        cut_short = False
        for record in records[:limit]:
            sha, short, name, email, date, subject, body = record.split(_FIELD)
            commit: Commit = {
                "commit_hash": sha, "short_hash": short, "author": name, "author_email": email,
                "date": date, "subject": subject, "body": body.strip(),
            }  # fmt: skip
            cost = workspace.count_tokens(f"{sha} {name} {email} {date} {subject}\n{body}")
            if commits and used + cost > budget:
                cut_short = True
                break
            if cost > budget:  # one commit alone over the budget: the start of its message
                rest = cost - workspace.count_tokens(commit["body"])
                commit["body"] = cut(workspace.count_tokens, commit["body"], max(budget - rest, 0))
                cost, cut_short = rest + workspace.count_tokens(commit["body"]), True
            commits.append(commit)
            used += cost
        has_more = len(commits) < len(records[:limit]) or len(records) > limit
        return _log_page(commits, offset, has_more, used, limit_tokens, cut_short)

    return fit_reply(workspace, limit_tokens, page)


def _log_page(
    commits: list[Commit], offset: int, has_more: bool, used: int, budget: int, cut: bool
) -> GitLog:
    return {
        "success": True,
        "commits": commits,
        "offset": offset,
        "returned": len(commits),
        "has_more": has_more,
        "next_offset": offset + len(commits) if has_more else None,
        "estimated_tokens": used,
        "max_tokens_per_request": budget,
        "truncated": cut,
    }
