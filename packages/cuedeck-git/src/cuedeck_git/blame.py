"""``git_blame`` and ``git_file_history``: who wrote these lines, and how a file came to be.

Blame reads a line range (``git blame --porcelain -L``) at a revision; history follows a
file across renames (``git log --follow``) with each commit's old path. Both go through
:class:`~cuedeck_git.runner.Repo` (no shell, a deadline, refs that cannot be options).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from typing_extensions import TypedDict  # pydantic needs it for TypedDicts on 3.11

from cuedeck.errors import InvalidInput
from cuedeck_git.errors import NotInHistory
from cuedeck_git.runner import Repo, decode, pathspecs

if TYPE_CHECKING:
    import pydantic

    from cuedeck.workspace import Workspace
else:
    from cuedeck.plugins.tools import lazy_pydantic as pydantic

#: Most lines one blame may cover.
MAX_BLAME_LINES = 2000
Revision = Annotated[str | None, pydantic.Field(description="Commit, branch or tag", min_length=1)]
FilePath = Annotated[
    str, pydantic.Field(description="Workspace-relative path", min_length=1, max_length=1000)
]


class BlameLine(TypedDict):
    """One line and the commit that last changed it."""

    line: int
    commit_hash: str
    author: str
    date: str
    summary: str
    original_line: int
    original_path: str
    text: str


class GitBlame(TypedDict):
    """What ``git_blame`` returns."""

    success: bool
    path: str
    revision: str
    start_line: int
    end_line: int
    lines: list[BlameLine]
    commits: int


def _checked(workspace: Workspace, path: str) -> str:
    from cuedeck.serving.file_tools import checked_path

    return checked_path(workspace, path)[0]


def git_blame(
    workspace: Workspace,
    file_path: FilePath,
    start_line: Annotated[int, pydantic.Field(description="First line, 1-based", ge=1)] = 1,
    end_line: Annotated[
        int | None, pydantic.Field(description="Last line (default: +99)", ge=1)
    ] = None,
    ref: Revision = None,
) -> GitBlame:
    """Show who last changed each line of a range of a file, and in which commit.

    At HEAD by default, or at ref. At most 2000 lines per call.
    """
    rel = _checked(workspace, file_path)
    last = end_line if end_line is not None else start_line + 99
    if last < start_line:
        raise InvalidInput("end_line is before start_line", field="end_line")
    if last - start_line + 1 > MAX_BLAME_LINES:
        raise InvalidInput(f"at most {MAX_BLAME_LINES} lines per call", field="end_line")
    repo = Repo(workspace, read_only=True)
    revision = repo.commit_of(ref, field="ref") if ref else repo.head()
    if revision is None:
        raise NotInHistory(f"{rel}: the repository has no commits yet", path=rel)
    total = _line_count(repo, revision, rel)
    if start_line > total:
        raise InvalidInput(
            f"start_line {start_line} is past the end ({total} lines at {revision[:12]})",
            field="start_line",
            total_lines=total,
        )
    last = min(last, total)
    output = repo.text("blame", "--porcelain", f"-L{start_line},{last}", revision, "--", rel)
    lines = _porcelain(output)
    return {
        "success": True,
        "path": rel,
        "revision": revision,
        "start_line": start_line,
        "end_line": last,
        "lines": lines,
        "commits": len({line["commit_hash"] for line in lines}),
    }


def _line_count(repo: Repo, revision: str, rel: str) -> int:
    result = repo.run("cat-file", "-p", f"{revision}:./{rel}", check=False)
    if result.returncode != 0:
        raise NotInHistory(
            f"{rel} is not in the repository at {revision[:12]}",
            path=rel,
            help="git_file_history shows the commits that touched it (a new file needs a commit)",
        )
    return len(result.stdout.splitlines())


def _porcelain(output: str) -> list[BlameLine]:
    """The lines of ``git blame --porcelain`` (commit details given once per commit)."""
    commits: dict[str, dict[str, str]] = {}
    lines: list[BlameLine] = []
    current: dict[str, str] = {}
    sha = ""
    original = final = 0
    for raw in output.split("\n"):
        if raw.startswith("\t"):
            info = commits.setdefault(sha, current)
            lines.append(
                {
                    "line": final,
                    "commit_hash": sha,
                    "author": info.get("author", ""),
                    "date": info.get("date", ""),
                    "summary": info.get("summary", ""),
                    "original_line": original,
                    "original_path": info.get("filename", ""),
                    "text": raw[1:],
                }
            )
            continue
        parts = raw.split(" ")
        if len(parts) >= 3 and len(parts[0]) == 40 and parts[1].isdigit():
            sha, original, final = parts[0], int(parts[1]), int(parts[2])
            current = commits.get(sha, {})
            commits[sha] = current
        elif raw.startswith("author "):
            current["author"] = raw[7:]
        elif raw.startswith("author-time "):
            from datetime import UTC, datetime

            stamp = int(raw.split(" ")[1])
            current["date"] = datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        elif raw.startswith("summary "):
            current["summary"] = raw[8:]
        elif raw.startswith("filename "):
            current["filename"] = raw[9:]
    return lines


class FileCommit(TypedDict):
    """One commit of a file's history."""

    commit_hash: str
    short_hash: str
    author: str
    date: str
    subject: str
    path: str
    old_path: str | None
    status: str
    additions: int | None
    deletions: int | None


class FileHistory(TypedDict):
    """What ``git_file_history`` returns."""

    success: bool
    path: str
    commits: list[FileCommit]
    offset: int
    returned: int
    has_more: bool
    next_offset: int | None


_FIELD, _RECORD = "\x1f", "\x1e"
_STATUS = {
    "A": "added",
    "M": "modified",
    "D": "deleted",
    "R": "renamed",
    "C": "copied",
    "T": "type",
}


def git_file_history(
    workspace: Workspace,
    file_path: FilePath,
    limit: Annotated[int, pydantic.Field(description="Most commits to return", ge=1, le=200)] = 20,
    offset: Annotated[int, pydantic.Field(description="Commits to skip", ge=0)] = 0,
    ref: Revision = None,
) -> FileHistory:
    """List the commits that changed a file, newest first, following its renames.

    Each commit gives the path the file had then (old_path when it was renamed there).
    """
    rel = _checked(workspace, file_path)
    repo = Repo(workspace, read_only=True)
    start = repo.commit_of(ref, field="ref") if ref else repo.head()
    if start is None:
        raise NotInHistory(f"{rel}: the repository has no commits yet", path=rel)
    form = _FIELD.join(("%H", "%h", "%an", "%aI", "%s")) + _RECORD
    output = decode(
        repo.run(
            "log", "--follow", "-M", "--name-status", "--numstat", f"--format={_RECORD}{form}",
            f"--max-count={offset + limit + 1}", "--end-of-options", start,
            "--", *pathspecs([rel]),
        ).stdout
    )  # fmt: skip
    # Skipped here, not with --skip: git applies --skip before it follows a rename.
    commits = _file_commits(output)[offset:]
    if not commits and offset == 0:
        raise NotInHistory(
            f"git has no history of {rel}",
            path=rel,
            help="commit the file first; git_log lists the repository's commits",
        )
    has_more = len(commits) > limit
    page = commits[:limit]
    return {
        "success": True,
        "path": rel,
        "commits": page,
        "offset": offset,
        "returned": len(page),
        "has_more": has_more,
        "next_offset": offset + len(page) if has_more else None,
    }


def _file_commits(output: str) -> list[FileCommit]:
    commits: list[FileCommit] = []
    parts = output.split(_RECORD)
    for header, rest in zip(parts[1::2], parts[2::2], strict=False):
        if _FIELD not in header:
            continue
        sha, short, author, date, subject = header.split(_FIELD)[:5]
        additions = deletions = None
        status, path, old = "modified", "", None
        for line in rest.splitlines():
            fields = line.split("\t")
            if not line.strip():
                continue
            if fields[0][:1] in _STATUS and not fields[0][:1].isdigit():
                status = _STATUS[fields[0][0]]
                if fields[0][0] in "RC" and len(fields) >= 3:
                    old, path = fields[1], fields[2]
                else:
                    path = fields[-1]
            elif len(fields) >= 3:
                additions = None if fields[0] == "-" else int(fields[0])
                deletions = None if fields[1] == "-" else int(fields[1])
        commits.append(
            {
                "commit_hash": sha, "short_hash": short, "author": author, "date": date,
                "subject": subject, "path": path, "old_path": old, "status": status,
                "additions": additions, "deletions": deletions,
            }
        )  # fmt: skip
    return commits
