"""The ``read_doc`` tool: one indexed file, or one section of it, a page at a time.

A section is a markdown heading's, or a code symbol's (``Client.send``) when a code
parser indexed the file: exactly the lines of that definition.

Pages end on whole lines, and the whole reply fits ``max_tokens`` (a single line
longer than the budget is cut to fit, alone on its page, so paging always makes
progress). Page contents are decoded from the file's own bytes, line endings and all,
so joining every page rebuilds the file exactly (but for a line that was cut).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated

from typing_extensions import TypedDict  # pydantic needs it for TypedDicts on 3.11

from cuedeck.errors import FileNotFound, InvalidInput, did_you_mean, suggestion_text
from cuedeck.layout import WORKSPACE_DIR
from cuedeck.serving.paging import page_lines
from cuedeck.text import counted

if TYPE_CHECKING:
    import pydantic

    from cuedeck.models import Document
    from cuedeck.workspace import Workspace
else:
    # The tool's annotations name pydantic; ``cue --help`` imports this module without
    # ever evaluating them, so pydantic loads on first use.
    from cuedeck.plugins.tools import lazy_pydantic as pydantic

#: The published path pattern: the specification's, widened to any relative name. The
#: specification's character class would refuse ``.cuedeck/docs/*.md`` and names like
#: ``c++.md``, and code files are indexed too; :meth:`Workspace.relative_path` and the
#: index do the real checks.
PATH_PATTERN = r"^[^/\\]"
_MARKDOWN = re.compile(r"^[^/\\].*\.md$", re.DOTALL)
_CUEDECK_PREFIX = WORKSPACE_DIR + "/"


class LineRange(TypedDict):
    """1-based, inclusive lines of the file."""

    start: int
    end: int


class DocPage(TypedDict):
    """What ``read_doc`` returns."""

    path: str
    content: str
    anchor: str | None
    line_range: LineRange | None
    tokens: int
    hash: str
    cached: bool
    total_lines: int
    next_offset: int | None
    has_more: bool
    truncated: bool
    hint: str | None


def read_doc(
    workspace: Workspace,
    file_path: Annotated[
        str,
        pydantic.Field(
            description="Workspace-relative path",
            max_length=500,
            # ``path`` is what read_doc took before it spoke like get_file_content.
            validation_alias=pydantic.AliasChoices("file_path", "path"),
            json_schema_extra={"pattern": PATH_PATTERN},
        ),
    ],
    anchor: Annotated[
        str | None,
        pydantic.Field(
            description="Heading text or slug, or a code symbol (Client.send): read only its lines",
            max_length=200,
        ),
    ] = None,
    offset: Annotated[
        int, pydantic.Field(description="First line, 1-based (next_offset)", ge=0)
    ] = 1,
    limit: Annotated[int | None, pydantic.Field(description="Max lines", ge=1)] = None,
    max_tokens: Annotated[
        int | None, pydantic.Field(description="Reply budget; default 5000", ge=1)
    ] = None,
) -> DocPage:
    """Read an indexed file, or one section or symbol of it, in whole-line pages.

    Follow next_offset while has_more. offset and next_offset are 1-based lines of the
    file, or of the section when anchor is set (0 reads from the first line too);
    line_range is in file lines. The whole reply fits max_tokens.
    """
    from cuedeck.serving.reply import fit_reply

    document, data, digest, cached = _load(workspace, file_path)
    lines = data.splitlines(keepends=True)
    first, stop = 0, len(lines)  # the selection, as 0-based [first, stop)
    heading = None
    if anchor is not None:
        heading = document.find_section(anchor)
        if heading is None:
            raise anchor_not_found(document, anchor)
        first, stop = heading.line - 1, min(heading.end_line, len(lines))
    size = stop - first
    skip = max(offset, 1) - 1  # lines of the selection before the page
    if skip > 0 and skip >= size:
        raise InvalidInput(
            f"offset {offset} is past the end ({counted(size, 'line')})",
            field="offset",
            total_lines=size,
        )
    limit_tokens = max_tokens or workspace.config.docs.max_tokens
    start = first + skip
    end = stop if limit is None else min(stop, start + limit)

    def page(budget: int) -> DocPage:
        if start == 0 and end == len(lines) and document.tokens <= budget:
            # The whole file fits: the index already counted it.
            content, tokens, taken = data.decode("utf-8", errors="replace"), document.tokens, end
            cut_from = None
        else:
            found = page_lines(workspace.count_tokens, lines, start, end, budget)
            content, tokens, taken, cut_from = found.text, found.tokens, found.taken, found.cut_from
        page_end = start + taken
        has_more = page_end < stop
        overflow = (
            f"Line {start + 1} alone is {cut_from} tokens, over max_tokens={limit_tokens}: "
            "only its start is here."
            if cut_from is not None
            else None
        )
        return {
            "path": document.path,
            "content": content,
            "anchor": heading.text if heading is not None else None,
            "line_range": {"start": start + 1, "end": page_end} if taken else None,
            "tokens": tokens,
            "hash": digest,
            "cached": cached,
            "total_lines": len(lines),
            "next_offset": page_end - first + 1 if has_more else None,
            "has_more": has_more,
            "truncated": page_end < end or cut_from is not None,
            "hint": _hint(start, page_end, (first, stop), heading is None, overflow),
        }

    return fit_reply(workspace, limit_tokens, page)


def _load(workspace: Workspace, path: str) -> tuple[Document, bytes, str, bool]:
    """The indexed document at ``path``, the file's bytes and sha256, and whether the
    index already matched those bytes."""
    snapshot = workspace.snapshot(find_doc(workspace, path).path)
    if snapshot.sha256 == snapshot.document.sha256:
        return snapshot.document, snapshot.data, snapshot.sha256, True
    # Edited since the last refresh: re-index so headings and counts match these bytes.
    workspace.refresh()
    snapshot = workspace.snapshot(snapshot.path)
    return snapshot.document, snapshot.data, snapshot.sha256, False


def find_doc(workspace: Workspace, path: str) -> Document:
    """The indexed file at workspace-relative ``path``, or at ``.cuedeck/<path>``.

    Refuses paths outside the workspace, and files no parser indexes (1004); a missing
    markdown file is FileNotFound (1001) with the closest indexed paths. Refreshes once
    before giving up, so a file created since the last refresh is found.
    """
    rel = workspace.relative_path(path)
    markdown = _MARKDOWN.match(rel) is not None
    if not markdown and workspace.parsers.claim(rel) is None:
        raise InvalidInput(
            f"{path!r} is not a markdown (.md) file or a kind of file the index reads",
            field="path",
            help="read other files with get_file_content",
        )
    index = workspace.index
    workspace.documents  # noqa: B018 - the first access refreshes the index
    for attempt in range(2):
        for candidate in (rel, _CUEDECK_PREFIX + rel):
            if candidate in index:
                return workspace.document(candidate)
        if attempt == 0:
            workspace.refresh()  # a file created since the last refresh
    raise workspace.not_found(rel)


def anchor_not_found(document: Document, anchor: str) -> FileNotFound:
    anchors = document.anchors
    short = [s.short_name for s in document.symbols]
    matches = did_you_mean(anchor, [*anchors, *(h.slug for h in document.headings), *short])
    by_short: dict[str, list[str]] = {}
    for symbol in document.symbols:
        by_short.setdefault(symbol.short_name, []).append(symbol.name)
    matches = [m for found in matches for m in by_short.get(found, [found])]
    by_slug = {h.slug: h.text for h in document.headings}
    matches = list(dict.fromkeys(by_slug.get(m, m) for m in matches))
    return FileNotFound(
        f"{document.path} has no {'symbol' if document.symbols else 'heading'} {anchor!r}",
        path=document.path,
        anchor=anchor,
        suggestion=suggestion_text(matches),
        candidates=matches or anchors[:10],
    )


def _hint(
    start: int, page_end: int, selection: tuple[int, int], whole: bool, overflow: str | None
) -> str | None:
    """What to do next, for the agent reading the page."""
    notes = [overflow] if overflow else []
    first, stop = selection
    if page_end < stop:
        of = str(stop) if whole else f"the section's lines {first + 1}-{stop}"
        notes.append(
            f"Showing lines {start + 1}-{page_end} of {of}; "
            f"call again with offset={page_end - first + 1} for the rest."
        )
    return " ".join(notes) or None


__all__ = ["PATH_PATTERN", "DocPage", "LineRange", "find_doc", "read_doc"]
