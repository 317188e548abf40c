"""``git_search_commits`` and ``git_search_diffs``: find the commit that did something.

Commits by message, author and dates (``git log --grep/--author/--since/--until``), and
commits whose diff adds or removes a string (``-S``, the pickaxe) or has an added or
removed line matching a regular expression (``-G``), with the files each touched.
Through :class:`~cuedeck_git.runner.Repo`: no shell, a deadline, validated refs, read-only.

A client's pattern is checked before git compiles it (:func:`cuedeck.system.bounds.
check_pattern`: ``-G`` is POSIX extended, ``--grep`` and ``--author`` basic, forced so
whatever ``grep.patternType`` says) and git runs under a memory bound. Paths no tool
reads (CueDeck's private files, ``[files] deny``) are left out of the search. And a match
must hold in the masked text: git searches the raw history, so a commit it found only
inside a secret (``-S ghp_ab`` finds the commit that added a token starting so) would
confirm a guess; each commit found is checked again on its masked changes (or message),
and dropped when the match was in a secret.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from typing_extensions import TypedDict  # pydantic needs it for TypedDicts on 3.11

from cuedeck.errors import InvalidInput
from cuedeck.system.bounds import check_pattern
from cuedeck_git.history import SEARCH_MEMORY
from cuedeck_git.runner import Repo, decode, exclusions, pathspecs

if TYPE_CHECKING:
    import pydantic

    from cuedeck.workspace import Workspace
else:
    from cuedeck.plugins.tools import lazy_pydantic as pydantic

_FIELD, _RECORD = "\x1f", "\x1e"
_FORMAT = _FIELD.join(("%H", "%h", "%an", "%ae", "%aI", "%s", "%b")) + _RECORD
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
    options = ["-i", "--basic-regexp"]
    checks: list[tuple[str, str]] = []
    if message:
        check_pattern(message, field="message", syntax="bre")
        options.append(f"--grep={message}")
        checks.append(("message", message))
    if author:
        check_pattern(author, field="author", syntax="bre")
        options.append(f"--author={author}")
        checks.append(("author", author))
    if since:
        options.append(f"--since={since}")
    if until:
        options.append(f"--until={until}")
    return _search(workspace, options, file_paths, ref, limit, offset, checks, within=False)


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
    Changes are matched as replies show them, secrets masked.
    """
    if "\n" in text or "\x00" in text:
        raise InvalidInput("the text must be one line", field="text")
    if match == "regex":
        check_pattern(text, field="text", syntax="ere")
    option = f"-S{text}" if match == "string" else f"-G{text}"
    return _search(workspace, [option], file_paths, ref, limit, offset, [(match, text)])


def _search(
    workspace: Workspace,
    options: list[str],
    file_paths: list[str] | None,
    ref: str | None,
    limit: int,
    offset: int,
    checks: list[tuple[str, str]],
    *,
    within: bool = True,
) -> CommitSearch:
    """The page of ``git log options``; ``within``: changes to paths no tool reads are
    not searched (a commit found by its message lists its other files only)."""
    from cuedeck.serving.file_tools import checked_path

    repo = Repo(workspace, read_only=True, memory_bytes=SEARCH_MEMORY)
    start = repo.commit_of(ref, field="ref") if ref else repo.head()
    if start is None:
        return _page([], offset, False, 0)
    paths = [checked_path(workspace, p)[0] for p in file_paths or []]
    specs = [*pathspecs(paths), *(exclusions(workspace) if within else ())]
    output = decode(
        repo.run(
            "log", *options, "--name-only", "--no-textconv", f"--format={_RECORD}{_FORMAT}",
            f"--skip={offset}", f"--max-count={limit + 1}", "--end-of-options", start,
            "--", *specs,
        ).stdout
    )  # fmt: skip
    readable = repo.readable
    commits: list[FoundCommit] = []
    messages: dict[str, str] = {}
    parts = output.split(_RECORD)
    for header, rest in zip(parts[1::2], parts[2::2], strict=False):
        sha, short, name, email, date, subject, body = header.split(_FIELD)[:7]
        files = [line for line in rest.splitlines() if line.strip() and readable(line)]
        messages[sha] = f"{subject}\n\n{body}"
        commits.append(
            {
                "commit_hash": sha, "short_hash": short, "author": name, "author_email": email,
                "date": date, "subject": subject, "files": [repo.shown(f) for f in files],
            }
        )  # fmt: skip
    has_more = len(commits) > limit
    listed = commits[:limit]
    if checks:
        shown = _outside_secrets(repo, listed, messages, checks, specs)
        listed = [commit for commit in listed if commit["commit_hash"] in shown]
    return _page(listed, offset, has_more, min(len(commits), limit))


def _outside_secrets(
    repo: Repo,
    commits: list[FoundCommit],
    messages: dict[str, str],
    checks: list[tuple[str, str]],
    specs: list[str],
) -> set[str]:
    """The commits whose every match git found also holds in their masked text: the
    message and author line for ``message`` and ``author``, the changed lines for
    ``string`` (-S) and ``regex`` (-G)."""
    import time

    from cuedeck.system.regex_worker import Worker, WorkerFailed

    if not commits:
        return set()
    session = repo.workspace.mask_session()
    texts: dict[str, dict[str, str]] = {c["commit_hash"]: {} for c in commits}
    for commit in commits:
        sha = commit["commit_hash"]
        texts[sha]["message"] = messages[sha]
        texts[sha]["author"] = f"{commit['author']} <{commit['author_email']}>"
    if any(kind in ("string", "regex") for kind, _ in checks):
        for sha, changed in _changed_lines(repo, [c["commit_hash"] for c in commits], specs):
            texts[sha]["string"] = texts[sha]["regex"] = changed
    deadline = time.monotonic() + repo.timeout
    kept = set(texts)
    for kind, pattern in checks:
        doubtful = {}  # commits where git may have matched inside a secret
        for sha in kept:
            raw = texts[sha].get(kind, "")
            masked = session.mask(raw)
            if masked != raw:
                doubtful[sha] = masked
        if not doubtful:
            continue
        if kind == "string":
            kept -= {sha for sha, masked in doubtful.items() if pattern not in masked}
            continue
        try:
            with Worker(deadline) as worker:
                worker.start(_as_python(pattern, kind), ignore_case=kind != "regex")
                kept -= {
                    sha
                    for sha, masked in doubtful.items()
                    if not worker.search(masked, skip=0, take=1).spans
                }
        except WorkerFailed:  # cannot be checked: the secrets win
            kept -= set(doubtful)
    return kept


def _changed_lines(repo: Repo, shas: list[str], specs: list[str]) -> list[tuple[str, str]]:
    """Per commit, the lines its diff adds and removes (no context), joined."""
    output = decode(
        repo.run(
            "log", "--no-walk=unsorted", "-p", "-U0", "--no-color", "--no-textconv",
            "--no-ext-diff", f"--format={_RECORD}%H", "--end-of-options", *shas, "--", *specs,
        ).stdout
    )  # fmt: skip
    found = []
    for record in output.split(_RECORD)[1:]:
        sha, _, patch = record.partition("\n")
        lines = [
            line
            for line in patch.splitlines()
            if line[:1] in "+-" and not line.startswith(("+++ ", "--- "))
        ]
        found.append((sha.strip(), "\n".join(lines)))
    return found


def _as_python(pattern: str, kind: str) -> str:
    """A POSIX pattern (basic for message and author, extended for -G) in Python's
    syntax: in a basic one, ``\\(``, ``\\{``, ``\\|``, ``\\+`` and ``\\?`` are the operators
    and the bare characters literal."""
    if kind == "regex":
        return pattern
    out, at = [], 0
    while at < len(pattern):
        char = pattern[at]
        if char == "\\" and pattern[at + 1 : at + 2] in tuple("(){}|+?"):
            out.append(pattern[at + 1])
            at += 2
            continue
        if char == "\\":
            out.append(pattern[at : at + 2])
            at += 2
            continue
        out.append("\\" + char if char in "(){}|+?" else char)
        at += 1
    return "".join(out)


def _page(commits: list[FoundCommit], offset: int, has_more: bool, read: int) -> CommitSearch:
    """A page of ``commits``; ``read`` commits of the history were looked at (the next
    page starts after them, whether or not each is shown)."""
    return {
        "success": True,
        "commits": commits,
        "offset": offset,
        "returned": len(commits),
        "has_more": has_more,
        "next_offset": offset + read if has_more else None,
    }
