"""``regex_search``: a regular expression over the workspace's text files.

Files are those :mod:`cuedeck_code.listing` walks (the read boundary every file tool
keeps: ``.gitignore`` and ``[files] deny`` honoured, never ``.git``, CueDeck's private
files, a hard-linked file nor a link that leaves the workspace). Each file is masked
before it is searched, with the whole file as context, so a pattern sees the text as a
reply shows it and can neither find nor confirm a masked secret. The pattern's size is
checked before anything is compiled (1016), then it is compiled and run in a worker
process under a memory bound and the call's deadline (:mod:`cuedeck.system.regex_worker`):
a pattern that backtracks without end is stopped at ``timeout_seconds`` (1101), one that
needs too much memory is refused (1016), and matches are taken a page at a time.
Bounded also in tokens, file size and context lines; results page with ``offset``."""

from __future__ import annotations

import bisect
import time
from typing import TYPE_CHECKING, Annotated

from typing_extensions import TypedDict  # pydantic needs it for TypedDicts on 3.11

from cuedeck.errors import InvalidInput, PatternTooLarge
from cuedeck.serving.reply import fit_reply
from cuedeck.system.regex_worker import MEMORY_BYTES
from cuedeck_code.errors import RegexTimeout

if TYPE_CHECKING:
    import pydantic

    from cuedeck.index.globs import Globs
    from cuedeck.system.regex_worker import WorkerFailed
    from cuedeck.workspace import Workspace
else:
    from cuedeck.plugins.tools import lazy_pydantic as pydantic

#: Files larger than this are not searched (reported in ``skipped_large``).
MAX_FILE_BYTES = 4 * 1024 * 1024
MEMORY_MB = MEMORY_BYTES // (1024 * 1024)
#: Characters of a matched or context line shown (the rest is cut with an ellipsis).
LINE_CHARACTERS = 400


class RegexMatch(TypedDict):
    """One match: where it starts, its line, the lines around it."""

    path: str
    line: int
    column: int
    text: str
    match: str
    before: list[str]
    after: list[str]


class RegexResults(TypedDict):
    """What ``regex_search`` returns."""

    success: bool
    pattern: str
    matches: list[RegexMatch]
    files_searched: int
    files_matched: int
    skipped_large: int
    offset: int
    returned: int
    has_more: bool
    next_offset: int | None
    estimated_tokens: int
    truncated: bool
    elapsed_seconds: float


def regex_search(
    workspace: Workspace,
    pattern: Annotated[
        str,
        pydantic.Field(
            description="Regular expression (Python syntax)", min_length=1, max_length=1000
        ),
    ],
    path: Annotated[
        str, pydantic.Field(description="Folder to search, workspace-relative", max_length=1000)
    ] = ".",
    globs: Annotated[
        list[str] | None,
        pydantic.Field(description='Only files matching these globs, e.g. ["*.py"]', max_length=50),
    ] = None,
    case_sensitive: Annotated[bool, pydantic.Field(description="Match case exactly")] = True,
    context_lines: Annotated[
        int, pydantic.Field(description="Lines shown before and after each match", ge=0, le=10)
    ] = 0,
    max_matches: Annotated[
        int, pydantic.Field(description="Most matches in this page", ge=1, le=1000)
    ] = 100,
    offset: Annotated[int, pydantic.Field(description="Matches to skip (next_offset)", ge=0)] = 0,
    max_tokens: Annotated[
        int | None, pydantic.Field(description="Reply budget; default [files] max_tokens", ge=100)
    ] = None,
    timeout_seconds: Annotated[
        float, pydantic.Field(description="Time bound of the whole search", gt=0, le=60)
    ] = 10.0,
) -> RegexResults:
    """Search the workspace's text files with a regular expression; matches with context.

    gitignore-aware; never reads .git, CueDeck's cache, [files] deny or links that leave
    the workspace. Secrets are masked before the search: a pattern finds the text as
    replies show it. Bounded in time, memory, matches and tokens; follow next_offset
    while has_more.
    """
    from cuedeck.index.left_out import binary
    from cuedeck.system.bounds import check_pattern
    from cuedeck.system.regex_worker import Worker, WorkerFailed
    from cuedeck_code.listing import Walker, folder_path

    started = time.monotonic()
    deadline = started + timeout_seconds
    check_pattern(pattern, field="pattern")
    folder = folder_path(workspace, path)
    wanted = _globs(globs)
    limit = max_tokens or workspace.config.files.max_tokens
    session = workspace.mask_session()
    collected: list[tuple[RegexMatch, int]] = []  # matches past offset, with their tokens
    spent = 0
    skip = offset
    searched = matched_files = large = 0
    more = False  # matches are left that no page of this call can hold
    where = "compiling the pattern"
    try:
        with Worker(deadline) as worker:
            worker.start(pattern, ignore_case=not case_sensitive)
            for entry in Walker(workspace).walk(folder):
                if entry.is_dir or (wanted is not None and not wanted.match(entry.path)):
                    continue
                if entry.size > MAX_FILE_BYTES:
                    large += 1
                    continue
                where = entry.path
                if time.monotonic() > deadline:
                    raise WorkerFailed("timeout")
                try:
                    data = (workspace.root / entry.path).read_bytes()
                except OSError:
                    continue
                if binary(data):
                    continue
                searched += 1
                # Masked first, with the whole file as context: what a reply shows is
                # what is searched, so no pattern can find or confirm a masked secret.
                text = session.mask(data.decode("utf-8", errors="replace"), path=entry.path)
                found = worker.search(text, skip=skip, take=max_matches - len(collected))
                skip -= found.skipped
                if found.skipped or found.spans or found.more:
                    matched_files += 1
                for item in _items(entry.path, text, found.spans, context_lines):
                    if spent > limit:  # more than any page of this call can hold
                        more = True
                        break
                    cost = workspace.count_tokens(
                        "\n".join([item["path"], *item["before"], item["text"], *item["after"]])
                    )
                    collected.append((item, cost))
                    spent += cost
                if more or found.more:
                    more = True
                    break
    except WorkerFailed as failed:
        raise _failure(failed, pattern, timeout_seconds, where) from None
    elapsed = round(time.monotonic() - started, 3)

    def page(budget: int) -> RegexResults:
        matches: list[RegexMatch] = []
        used = 0
        for item, cost in collected:
            if matches and used + cost > budget:
                break
            matches.append(item)
            used += cost
        cut = len(matches) < len(collected)
        has_more = more or cut
        return {
            "success": True,
            "pattern": pattern,
            "matches": matches,
            "files_searched": searched,
            "files_matched": matched_files,
            "skipped_large": large,
            "offset": offset,
            "returned": len(matches),
            "has_more": has_more,
            "next_offset": offset + len(matches) if has_more else None,
            "estimated_tokens": used,
            "truncated": cut,
            "elapsed_seconds": elapsed,
        }

    return fit_reply(workspace, limit, page)


def _items(
    path: str, text: str, spans: list[tuple[int, int]], context_lines: int
) -> list[RegexMatch]:
    """The matches at ``spans`` of ``text`` (masked), each with its line and context."""
    if not spans:
        return []
    lines = text.splitlines()
    starts = _line_starts(text)
    items: list[RegexMatch] = []
    for start, end in spans:
        number = bisect.bisect_right(starts, start)
        items.append(
            {
                "path": path,
                "line": number,
                "column": start - starts[number - 1] + 1,
                "text": _shown(lines[number - 1] if number - 1 < len(lines) else ""),
                "match": _shown(text[start:end]),
                "before": [
                    _shown(x) for x in lines[max(number - 1 - context_lines, 0) : number - 1]
                ],
                "after": [_shown(x) for x in lines[number : number + context_lines]],
            }
        )
    return items


def _failure(
    failed: WorkerFailed, pattern: str, seconds: float, where: str
) -> InvalidInput | PatternTooLarge | RegexTimeout:
    if failed.kind == "invalid":
        return InvalidInput(
            f"not a valid regular expression: {failed.message}",
            field="pattern",
            help="use Python's regular-expression syntax; escape ( [ { . * + ? with \\",
        )
    if failed.kind == "timeout":
        return _timed_out(pattern, seconds, where)
    return PatternTooLarge(
        f"regex_search stopped while {'compiling' if where.startswith('compiling') else where}"
        f": the pattern needed more than the {MEMORY_MB} MB a search may use",
        field="pattern",
        pattern=pattern[:200],
        limit=f"{MEMORY_MB} MB",
        help="use * or + instead of large counts, avoid capturing groups that repeat, "
        "or narrow the search with path or globs",
    )


def _globs(globs: list[str] | None) -> Globs | None:
    if not globs:
        return None
    from cuedeck.index.globs import Globs

    return Globs.of_arguments([g for g in globs if g.strip()], field="globs")


def _line_starts(text: str) -> list[int]:
    """Offsets where each line of ``text`` starts (as ``str.splitlines`` splits)."""
    starts = [0]
    for index, line in enumerate(text.splitlines(keepends=True)):
        starts.append(starts[index] + len(line))
    return starts[:-1] if len(starts) > 1 else starts


def _shown(line: str) -> str:
    line = line.rstrip("\r\n")
    return line if len(line) <= LINE_CHARACTERS else line[: LINE_CHARACTERS - 1] + "…"


def _timed_out(pattern: str, seconds: float, path: str) -> RegexTimeout:
    return RegexTimeout(
        f"regex_search stopped after {seconds:g}s ({path}): the pattern backtracks too "
        "much or matches too broadly for this workspace",
        pattern=pattern,
        timeout_seconds=seconds,
        help="anchor the pattern, avoid nested quantifiers such as (a+)+, narrow it with "
        "path or globs, or raise timeout_seconds",
    )
