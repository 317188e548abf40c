"""Sections: the unit of search.

A document splits into the text before its first heading (the preamble) and one section
per heading, from the heading line to the line before the next heading of any level, so
sections never overlap. Each section keeps its heading path (``Title > Part > Heading``)
as context: the keyword index weights it, and it leads the text the model embeds.

A code document (one with symbols) splits by its definitions instead: each symbol's
section runs from its first line to the line before the next definition inside it (a
class's header and docstring, then each method), and the lines between definitions
(imports, constants) are sections without an anchor. Its heading path is the file and
the qualified name; the model embeds the signature, the docstring and the head of the
body, not the whole definition.
"""

from __future__ import annotations

import functools
import hashlib
import re
from typing import TYPE_CHECKING

import attrs

from cuedeck.markdown.blocks import outside_fences

if TYPE_CHECKING:
    from collections.abc import Sequence

    from cuedeck.models import Document, Symbol

#: mkdocs-style include of a source file (``{* ../src/app.py hl[3] *}``): no prose in it.
_INCLUDE = re.compile(r"^\s*\{\*.*\*\}\s*$")
_ATTR_LIST = re.compile(r"\s*\{\s*#[^}]*\}\s*$")
_MARKUP = re.compile(r"<[^>]+>")
#: A line of one punctuation character repeated: a reStructuredText or setext title's
#: underline (or overline), or a rule; no prose.
_ADORNMENT = re.compile(r"([!-/:-@\[-`{-~])\1{2,}")
#: Where a code fence could open (cuedeck.markdown.blocks decides whether one does).
_FENCE_MARK = re.compile(r"^[ \t]*(?:```|~~~)", re.MULTILINE)


@attrs.frozen
class Section:
    """One searchable slice of a document.

    ``text`` is the raw section (heading line included) for keywords and snippets;
    :attr:`prose` drops the heading, code blocks and includes, for the embedding model.
    ``hash`` is the sha256 of what the model embeds, so an unchanged section is never
    embedded twice.
    """

    path: str
    anchor: str | None
    heading_path: tuple[str, ...]
    line: int
    end_line: int
    text: str
    hash: str
    #: A code section's symbol kind (``method``...), or ``code`` between definitions;
    #: None for prose.
    kind: str | None = None
    #: What the model embeds of a code section (signature, docstring, body head).
    summary: str | None = None
    #: Whether its code is fenced as markdown fences it (prose in another format, such
    #: as reStructuredText, whose ``~~~~`` underlines a title, is read without).
    fenced: bool = True

    @functools.cached_property
    def prose(self) -> str:
        """The text without its heading line, code blocks and source includes (a code
        section: its summary)."""
        if self.summary is not None:
            return self.summary
        lines = self.text.split("\n") if self.text else []  # the lines it was joined from
        return _prose(lines[1:] if self.anchor is not None else lines, fenced=self.fenced)

    @property
    def context(self) -> str:
        """The heading path joined with ``>``."""
        return " > ".join(self.heading_path)

    @property
    def embedding_text(self) -> str:
        """What the model sees: the heading path, then the prose."""
        return embedding_text(self.heading_path, self.prose)


def embedding_text(heading_path: Sequence[str], prose: str) -> str:
    """The heading path on the first line, then the prose."""
    context = " > ".join(heading_path)
    return f"{context}\n{prose}".strip()


def _prose(lines: Sequence[str], *, fenced: bool = True) -> str:
    kept: list[str] = []
    # Every line of every file passes here on a cold index: the regular expressions run
    # only on lines holding the character each one needs.
    fences = fenced and _FENCE_MARK.search("\n".join(lines))
    for line in outside_fences(lines) if fences else lines:
        stripped = line.strip()
        if not stripped or stripped.startswith("///"):
            continue  # blank, or an admonition marker of mkdocs (/// tip ... ///)
        if stripped[0] == "{" and _INCLUDE.match(line):
            continue
        if not stripped[0].isalnum() and _ADORNMENT.fullmatch(stripped):
            continue
        if "{" in stripped:
            stripped = _ATTR_LIST.sub("", stripped)
        if "<" in stripped:
            stripped = _MARKUP.sub("", stripped)
        kept.append(stripped)  # even when markup was all it held
    return "\n".join(kept)


#: Lines of a definition's body the model sees after its signature and docstring.
BODY_HEAD = 12
SUMMARY_CHARACTERS = 1200


@attrs.frozen
class Span:
    """Where a section lies and what it is called, before its text is read. A code
    section also has its ``kind`` (``code`` between definitions) and, for a definition's
    own section, its ``symbol``."""

    first: int
    last: int
    anchor: str | None
    heading_path: tuple[str, ...]
    kind: str | None = None
    symbol: Symbol | None = None


def section_spans(document: Document, lines: Sequence[str]) -> list[Span]:
    """The spans of ``document``'s sections (cheap: no text is joined or hashed), as
    :func:`split_sections` cuts them."""
    if any(symbol.kind != "module" for symbol in document.symbols):
        spans = code_spans(document, lines)
        if spans:
            return spans
    body = document.body_line
    total = len(lines)
    title = document.title.strip()
    headings = document.headings
    first_heading = headings[0].line if headings else total + 1
    spans = []
    if first_heading > body and any(line.strip() for line in lines[body - 1 : first_heading - 1]):
        spans.append(Span(body, first_heading - 1, None, (title,) if title else ()))
    stack: list[tuple[int, str]] = []  # (level, text) of the enclosing headings
    for index, heading in enumerate(headings):
        last = headings[index + 1].line - 1 if index + 1 < len(headings) else total
        while stack and stack[-1][0] >= heading.level:
            stack.pop()
        stack.append((heading.level, heading.text))
        heading_path = tuple(text for _, text in stack if text)
        if title and (not heading_path or heading_path[0] != title) and heading.level > 1:
            heading_path = (title, *heading_path)
        spans.append(Span(heading.line, max(heading.line, last), heading.text, heading_path))
    return spans


def section_of(document: Document, lines: Sequence[str], span: Span) -> Section:
    """The section of ``document`` at ``span`` (its text, prose or summary, and hash)."""
    chunk = lines[span.first - 1 : span.last]
    summary = None
    fenced = document.language in (None, "markdown") or not document.prose
    if span.kind is None:
        prose = _prose(chunk[1:] if span.anchor is not None else chunk, fenced=fenced)
    elif span.symbol is not None:
        body = chunk[span.symbol.line - span.first + 1 :]
        prose = summary = _summary(span.symbol.signature, span.symbol.docstring, body)
    else:
        prose = summary = _summary("", "", chunk)
    digest = hashlib.sha256(embedding_text(span.heading_path, prose).encode()).hexdigest()
    return Section(
        path=document.path,
        anchor=span.anchor,
        heading_path=span.heading_path,
        line=span.first,
        end_line=span.last,
        text="\n".join(chunk),
        hash=digest,
        kind=span.kind,
        summary=summary,
        fenced=fenced,
    )


#: What the keyword index reads of a section: the text of its body field, its heading
#: path, its first and last line, and the hash of its embedding text.
KeywordSection = tuple[str, tuple[str, ...], int, int, str]


def keyword_section(section: Section) -> KeywordSection:
    """What the keyword index reads of ``section``: a prose section's body is its text
    without the heading line (the heading is a field of its own)."""
    body = section.text
    if section.anchor is not None and section.kind is None:
        body = body.partition("\n")[2]
    return body, section.heading_path, section.line, section.end_line, section.hash


def keyword_sections(document: Document, lines: Sequence[str]) -> list[KeywordSection]:
    """:func:`keyword_section` of each of :func:`split_sections`."""
    return [keyword_section(section) for section in split_sections(document, lines)]


def split_sections(document: Document, lines: Sequence[str]) -> list[Section]:
    """The sections of ``document``, whose text is ``lines`` (1-based ranges index into it).

    Frontmatter is left out. A document without headings is one section; so is its
    preamble when it has text. A code document splits by its symbols (see above).
    """
    sections = [section_of(document, lines, span) for span in section_spans(document, lines)]
    if not sections:
        # An empty file or one holding only frontmatter: still findable by name.
        title = document.title.strip()
        body = document.body_line
        sections.append(
            Section(
                path=document.path,
                anchor=None,
                heading_path=(title,) if title else (),
                line=body,
                end_line=max(body, len(lines)),
                text="",
                hash=hashlib.sha256(title.encode()).hexdigest(),
            )
        )
    return sections


def code_spans(document: Document, lines: Sequence[str]) -> list[Span]:
    """The spans of a code document: one per definition (to its first inner one) and one
    per stretch of other code between definitions (blank stretches left out)."""
    symbols = sorted(
        (s for s in document.symbols if s.kind != "module"), key=lambda s: (s.line, -s.end_line)
    )
    total = len(lines)
    found: list[tuple[int, int, Symbol | None, bool]] = []  # first, last, symbol, its own
    covered_to = 0  # the last line some section holds
    stack: list[tuple[int, Symbol]] = []  # enclosing definitions: (end line, symbol)
    for index, definition in enumerate(symbols):
        while stack and stack[-1][0] < definition.line:
            stack.pop()
        start = definition.line
        if definition.docstring:  # its documentation comment, right above it, goes with it
            while start - 1 > covered_to and lines[start - 2].strip():
                start -= 1
        if start > covered_to + 1:
            # Between definitions, or after an inner one inside its parent: the parent's
            # rest, or code at module level.
            owner = stack[-1][1] if stack else None
            found.append((covered_to + 1, start - 1, owner, False))
        following = symbols[index + 1].line if index + 1 < len(symbols) else total + 1
        last = max(definition.line, min(definition.end_line, following - 1))
        found.append((start, last, definition, True))
        covered_to = max(covered_to, last)
        stack.append((definition.end_line, definition))
    if covered_to < total:
        while stack and stack[-1][0] <= covered_to:
            stack.pop()
        found.append((covered_to + 1, total, stack[-1][1] if stack else None, False))

    spans: list[Span] = []
    for first, last, symbol, own in found:
        if not own and not any(line.strip() for line in lines[first - 1 : last]):
            continue
        name = symbol.name if symbol is not None else ""
        heading_path = (document.path, name) if name else (document.path,)
        kind = symbol.kind if own and symbol is not None else "code"
        spans.append(Span(first, last, name or None, heading_path, kind, symbol if own else None))
    return spans


def _summary(signature: str, docstring: str, body: Sequence[str]) -> str:
    """Signature, docstring and the first lines of the body, for the model."""
    start = signature[:40]
    head = [
        line.strip()
        for line in body
        if line.strip() and not (start and line.strip().startswith(start))
    ][:BODY_HEAD]
    text = "\n".join(part for part in (signature, docstring, *head) if part)
    return text[:SUMMARY_CHARACTERS]
