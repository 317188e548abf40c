"""Plain text into documents: each paragraph a section.

A ``.txt`` file whose lines hold reStructuredText titles (Sphinx projects often name
their sources so) is read as reStructuredText. Any other is split into paragraphs
(runs of non-blank lines): each is a section named by its first line, its slug the
line range (``L12-L20``). A file of one paragraph, or of more than
:data:`MAX_PARAGRAPHS`, is one section, the whole file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuedeck.markdown.anchors import github_slug
from cuedeck.prose.rst import has_titles, scan_rst
from cuedeck.prose.sections import line_span, prose_document

if TYPE_CHECKING:
    from cuedeck.index.parsers import ParseContext
    from cuedeck.models import Document, Problem, Reference
    from cuedeck.prose.sections import Found

#: More paragraphs than this (a log, a word list): the file is one section.
MAX_PARAGRAPHS = 5000
#: Characters of a paragraph's first line that name its section.
NAME_CHARS = 80


def parse_text(path: str, data: bytes, context: ParseContext) -> Document:
    """The ``text`` parser registered by core (see the module docstring)."""
    language = "plaintext"

    def scan(lines: list[str]) -> tuple[list[Found], list[Reference], list[Problem]]:
        nonlocal language
        if has_titles(lines):
            language = "rst"
            return scan_rst(lines, path, context.paths)
        return paragraphs(lines), [], []

    document = prose_document(
        path, data, language="plaintext", scan=scan, count_tokens=context.count_tokens
    )
    if language != document.language:
        import attrs

        document = attrs.evolve(document, language=language)
    return document


def paragraphs(lines: list[str]) -> list[Found]:
    """One heading per paragraph, or none when there is one (or too many)."""
    found: list[Found] = []
    start = None
    for number, line in enumerate([*lines, ""], start=1):
        if line.strip():
            if start is None:
                start = number
            continue
        if start is not None:
            name = lines[start - 1].strip()
            if len(name) > NAME_CHARS:
                name = name[: NAME_CHARS - 1].rstrip() + "…"
            span = line_span(start, number - 1)
            found.append((start, 1, name, span, (github_slug(name.lower()),)))
            if len(found) > MAX_PARAGRAPHS:
                return []
            start = None
    return found if len(found) > 1 else []
