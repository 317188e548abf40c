"""What the prose parsers share: headings nested into sections, reference targets
resolved against the file that writes them, and the document they make.

A heading is found as ``(line, level, text, slug, aliases)``; its section runs to the
line before the next heading of the same or a higher level, as in markdown.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from typing import TYPE_CHECKING

from cuedeck.models import Document, Heading, Problem, Reference, document_kind, replaced_bytes
from cuedeck.text import decode, split_lines

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable, Sequence

#: A heading as a scanner finds it: 1-based line, level, text, slug and other anchors.
Found = tuple[int, int, str, str, tuple[str, ...]]
#: Suffixes a reference in a prose file may leave off, tried in this order.
DOC_SUFFIXES = (".rst", ".txt", ".md", ".rest", ".adoc", ".asciidoc")

_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.\-]*:")
_ADORNMENT = re.compile(r"([!-/:-@\[-`{-~])\1+[ \t]*$")


def nest(found: Iterable[Found], line_count: int) -> tuple[Heading, ...]:
    """Headings with their section's last line (before the next heading of the same or
    a higher level, else the file's last line)."""
    items = list(found)
    headings = []
    open_at: list[int] = []  # indexes of headings whose section is still open
    ends = [line_count] * len(items)
    for index, (line, level, *_) in enumerate(items):
        while open_at and items[open_at[-1]][1] >= level:
            ends[open_at.pop()] = line - 1
        open_at.append(index)
    for index, (line, level, text, slug, aliases) in enumerate(items):
        kept = tuple(sorted({a for a in aliases if a and a != slug}))
        headings.append(Heading(level, text, slug, line, max(line, ends[index]), kept))
    return tuple(headings)


def heading_lines(language: str | None, first: str) -> int:
    """How many lines a heading takes, given its first: three for a reStructuredText
    title with an overline, two with an underline only, one in other formats."""
    if language != "rst":
        return 1
    return 3 if _ADORNMENT.match(first) else 2


def local_target(target: str, source: str, root: str | None = None) -> str | None:
    """The workspace-relative path a link target written in ``source`` names: relative
    to the source's folder, or to ``root`` when it starts with ``/`` (a Sphinx source
    folder); None for a URL, an in-page anchor or a path that leaves the workspace."""
    target = target.strip()
    if not target or _SCHEME.match(target) or target.startswith(("#", "//")):
        return None
    from urllib.parse import unquote

    target = unquote(target)
    if target.startswith("/"):
        joined = posixpath.join(root or "", target.lstrip("/"))
    else:
        joined = posixpath.join(posixpath.dirname(source), target)
    normal = posixpath.normpath(joined)
    if normal == "." or normal.startswith("../") or normal == "..":
        return None
    return normal


def with_suffix(path: str, paths: Collection[str], suffixes: Sequence[str] = DOC_SUFFIXES) -> str:
    """``path`` as indexed: itself when the index has it, else with the first of
    ``suffixes`` that names an indexed file, else with the first suffix."""
    if path in paths:
        return path
    for suffix in suffixes:
        if path + suffix in paths:
            return path + suffix
    return path if posixpath.splitext(path)[1] in suffixes else path + suffixes[0]


def line_span(first: int, last: int) -> str:
    """The line-range anchor of lines ``first`` to ``last`` (``L3-L9``)."""
    return f"L{first}" if first == last else f"L{first}-L{last}"


def prose_document(
    path: str,
    data: bytes,
    *,
    language: str,
    scan: Callable[[list[str]], tuple[list[Found], list[Reference], list[Problem]]],
    count_tokens: Callable[[str], int],
) -> Document:
    """The document of a prose file whose lines ``scan`` reads into headings,
    references and problems; its title is its first heading's text, else its name."""
    text, replaced = decode(data)
    lines = split_lines(text)
    found, references, problems = scan(lines)
    if replaced:
        problems.insert(0, replaced_bytes(path))
    headings = nest(found, len(lines))
    title = headings[0].text if headings else posixpath.splitext(posixpath.basename(path))[0]
    return Document(
        path=path,
        kind=document_kind(path),
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
        line_count=len(lines),
        tokens=count_tokens(text),
        title=title,
        headings=headings,
        references=tuple(references),
        problems=tuple(problems),
        language=language,
    )
