"""``regex_search``: a regular expression over the workspace's text files.

Files are those :mod:`cuedeck_code.listing` walks (``.gitignore`` and ``[files] deny``
honoured, never ``.git`` nor a link that leaves the workspace). The pattern runs in the
``regex`` module with a deadline: a pattern that backtracks without end is stopped and
reported (1101), never left to hang the server. Bounded also in matches, tokens, file
size and context lines; results page with ``offset``.
"""

from __future__ import annotations

import bisect
import time
from typing import TYPE_CHECKING, Annotated

from typing_extensions import TypedDict  # pydantic needs it for TypedDicts on 3.11

from cuedeck.errors import InvalidInput
from cuedeck_code.errors import RegexTimeout

if TYPE_CHECKING:
    import pydantic

    from cuedeck.workspace import Workspace
else:
    from cuedeck.plugins.tools import lazy_pydantic as pydantic

#: Files larger than this are not searched (reported in ``skipped_large``).
MAX_FILE_BYTES = 4 * 1024 * 1024
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
        int | None, pydantic.Field(description="Page budget; default [files] max_tokens", ge=100)
    ] = None,
    timeout_seconds: Annotated[
        float, pydantic.Field(description="Time bound of the whole search", gt=0, le=60)
    ] = 10.0,
) -> RegexResults:
    """Search the workspace's text files with a regular expression; matches with context.

    gitignore-aware; never reads .git, CueDeck's cache, [files] deny or links that leave
    the workspace. Bounded in time, matches and tokens; follow next_offset while has_more.
    """
    import regex

    from cuedeck.index.walk import binary
    from cuedeck_code.listing import Walker, folder_path

    started = time.monotonic()
    deadline = started + timeout_seconds
    flags = regex.MULTILINE | (0 if case_sensitive else regex.IGNORECASE)
    try:
        compiled = regex.compile(pattern, flags | regex.VERSION0)
    except (regex.error, ValueError, OverflowError) as exc:
        raise InvalidInput(
            f"not a valid regular expression: {exc}",
            field="pattern",
            help="use Python's regular-expression syntax; escape ( [ { . * + ? with \\",
        ) from None
    folder = folder_path(workspace, path)
    wanted = _globs(globs)
    budget = max_tokens or workspace.config.files.max_tokens
    matches: list[RegexMatch] = []
    used = 0
    seen = searched = matched_files = large = 0
    has_more = cut = False
    for entry in Walker(workspace).walk(folder):
        if entry.is_dir or (wanted is not None and not _accepts(wanted, entry.path)):
            continue
        if entry.size > MAX_FILE_BYTES:
            large += 1
            continue
        if time.monotonic() > deadline:
            raise _timed_out(pattern, timeout_seconds, entry.path)
        try:
            data = (workspace.root / entry.path).read_bytes()
        except OSError:
            continue
        if binary(data):
            continue
        searched += 1
        text = data.decode("utf-8", errors="replace")
        try:
            found = list(compiled.finditer(text, timeout=max(deadline - time.monotonic(), 0.001)))
        except TimeoutError:
            raise _timed_out(pattern, timeout_seconds, entry.path) from None
        if not found:
            continue
        matched_files += 1
        lines = text.splitlines()
        starts = _line_starts(text)
        for hit in found:
            seen += 1
            if seen <= offset:
                continue
            if len(matches) == max_matches:
                has_more = True
                break
            number = bisect.bisect_right(starts, hit.start())
            item: RegexMatch = {
                "path": entry.path,
                "line": number,
                "column": hit.start() - starts[number - 1] + 1,
                "text": _shown(lines[number - 1] if number - 1 < len(lines) else ""),
                "match": _shown(hit.group(0)),
                "before": [
                    _shown(x) for x in lines[max(number - 1 - context_lines, 0) : number - 1]
                ],
                "after": [_shown(x) for x in lines[number : number + context_lines]],
            }
            cost = workspace.count_tokens(
                "\n".join([item["path"], *item["before"], item["text"], *item["after"]])
            )
            if matches and used + cost > budget:
                has_more = cut = True
                break
            matches.append(item)
            used += cost
        if has_more:
            break
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
        "elapsed_seconds": round(time.monotonic() - started, 3),
    }


def _globs(globs: list[str] | None) -> object | None:
    if not globs:
        return None
    from cuedeck.index.walk import Globs

    return Globs([g for g in globs if g.strip()])


def _accepts(globs: object, path: str) -> bool:
    return bool(globs.match(path))  # type: ignore[attr-defined]


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
        f"regex_search stopped after {seconds:g}s (in {path}): the pattern backtracks too "
        "much or matches too broadly for this workspace",
        pattern=pattern,
        timeout_seconds=seconds,
        help="anchor the pattern, avoid nested quantifiers such as (a+)+, narrow it with "
        "path or globs, or raise timeout_seconds",
    )
