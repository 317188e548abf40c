"""AsciiDoc into documents: section titles with the ids Asciidoctor gives them, and the
references it follows.

A line scanner. A title is a line of one to six ``=`` (or ``#``) and a space, outside
delimited blocks, under a blank line, an anchor or an attribute line; its level is the
number of marks (the document title ``=`` is level 1). Its slug is its explicit id
(``[[id]]`` or ``[#id]`` on the line above, or ``[[id]]`` ending the title), else the id
Asciidoctor generates (``idprefix`` ``_``, ``idseparator`` ``_``, as the document's
attributes set them; ``_x_2`` for a repeat), with GitHub's slug and the ``-`` separated
form as aliases. An anchor not on a title belongs to the section it is in. The two-line
(underlined) titles Asciidoctor deprecated are not read.

References: ``xref:`` and ``<<...>>`` cross references and ``link:`` to local documents
are "see also"; ``include::`` includes (``lines=`` as a line range), also inside listing
blocks, where Asciidoctor reads it too. Attribute references in paths
(``{includedir}``) are resolved from the document's attributes; a path left with one is
skipped.
"""

from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING

from cuedeck.markdown.anchors import github_slug
from cuedeck.models import Problem, Reference
from cuedeck.prose.sections import line_span, local_target, prose_document

if TYPE_CHECKING:
    from cuedeck.index.parsers import ParseContext
    from cuedeck.models import Document
    from cuedeck.prose.sections import Found

_TITLE = re.compile(r"(={1,6}|#{1,6})[ \t]+(\S.*?)(?:[ \t]+\1)?[ \t]*$")
_TRAILING_ANCHOR = re.compile(r"[ \t]*\[\[([A-Za-z_:][\w:.\-]*)(?:,[^\]]*)?\]\][ \t]*$")
_BLOCK_ANCHOR = re.compile(r"\[\[([A-Za-z_:][\w:.\-]*)(?:,[^\]]*)?\]\][ \t]*$")
_ATTRIBUTE_ID = re.compile(r"\[[\w\-]*#([^\]\s.,%#]+)[^\]]*\][ \t]*$")
_ATTRIBUTE_LINE = re.compile(r"\[[^\[\]]*\][ \t]*$")
_INLINE_ANCHOR = re.compile(r"\[\[([A-Za-z_:][\w:.\-]*)(?:,[^\]]*)?\]\]|anchor:([\w:.\-]+)\[")
_ENTRY = re.compile(r":([\w][\w\-]*)(!?):(?:[ \t]+(.*?))?[ \t]*$")
#: A delimiter line: its kind by its characters.
_DELIMITER = re.compile(r"(-{4,}|\.{4,}|={4,}|\*{4,}|_{4,}|\+{4,}|/{4,}|`{3,}|--|\|===)[ \t]*$")
_INCLUDE = re.compile(r"include::([^\[\s]+)\[([^\]]*)\][ \t]*$")
_XREF = re.compile(r"xref:([^\[\s]+)\[[^\]]*\]|<<([^<>,\n]+?)(?:,[^<>\n]*)?>>")
_LINK = re.compile(r"link:([^\[\s]+)\[[^\]]*\]")
_CONSTRAINED = re.compile(r"([*_`#]{1,2})(\S(?:.*?\S)?)\1")
_MACRO_TEXT = re.compile(r"(?:link:|https?://)[^\[\s]*\[([^\]]*)\]")
_XREF_TEXT = re.compile(r"<<[^<>,]+,([^<>]*)>>")
_TAG = re.compile(r"<[^>]+>|&(?:[a-z][a-z]+\d{0,2}|#\d{2,5}|#x[\da-f]{2,4});")
_DOC_SUFFIXES = (".adoc", ".asciidoc", ".asc", ".md", ".rst", ".txt")


def parse_asciidoc(path: str, data: bytes, context: ParseContext) -> Document:
    """The ``asciidoc`` parser registered by core (see the module docstring)."""
    return prose_document(
        path,
        data,
        language="asciidoc",
        scan=lambda lines: scan_asciidoc(lines, path),
        count_tokens=context.count_tokens,
    )


def section_id(text: str, prefix: str = "_", separator: str = "_") -> str:
    """The id Asciidoctor generates for a title's text (before repeats are numbered)."""
    ident = _TAG.sub("", text.lower())
    ident = re.sub(r"[^\w \-.]", "", ident)
    if separator:
        ident = re.sub(r"[ .\-]+", separator, ident)
        ident = re.sub(re.escape(separator) + "{2,}", separator, ident).rstrip(separator)
        if not prefix:
            ident = ident.lstrip(separator)
    ident = prefix + ident
    if separator and prefix.endswith(separator):
        ident = prefix + ident[len(prefix) :].lstrip(separator)
    return ident


def title_text(raw: str) -> str:
    """A title's text as Asciidoctor shows it: formatting marks, macros' targets and
    cross references' ids dropped."""
    text = raw.strip()
    if not any(c in text for c in "*_`#[<&"):
        return text
    text = _MACRO_TEXT.sub(r"\1", text)
    text = _XREF_TEXT.sub(r"\1", text)
    for _ in range(2):
        text = _CONSTRAINED.sub(r"\2", text)
    return text.strip()


def scan_asciidoc(
    lines: list[str], path: str
) -> tuple[list[Found], list[Reference], list[Problem]]:
    """Headings and references of the AsciiDoc ``lines`` of file ``path``."""
    attributes: dict[str, str] = {}
    found: list[tuple[int, int, str, str | None, list[str]]] = []
    references: list[Reference] = []
    pending: list[str] = []  # anchors waiting for the title below them
    loose: list[str] = []  # anchors before any title
    block: str | None = None  # the delimiter of the open block
    opened = True  # the line before was blank, an anchor or an attribute line
    for number, line in enumerate(lines, start=1):
        if block is not None:
            if line.rstrip() == block:
                block, opened = None, False
            elif block[0] != "/" and line.startswith("include::"):
                _include(line, number, path, attributes, references)
            elif not _verbatim(block):
                _inline(line, number, path, references, found, loose)
            continue
        if not line or line.isspace():
            opened = True
            continue
        first = line[0]
        if first in "=#":
            title = _TITLE.match(line)
            if title is not None and opened:
                text = title.group(2)
                explicit = None
                if "[[" in text and (anchor := _TRAILING_ANCHOR.search(text)):
                    explicit = anchor.group(1)
                    text = text[: anchor.start()]
                ids = pending
                pending = []
                if explicit is None and ids:
                    explicit = ids.pop()
                found.append((number, len(title.group(1)), title_text(text), explicit, ids))
                opened = False
                continue
        if first == "[":
            anchor = _BLOCK_ANCHOR.match(line) or _ATTRIBUTE_ID.match(line)
            if anchor is not None:
                pending.append(anchor.group(1))
                opened = True
                continue
            if _ATTRIBUTE_LINE.match(line):
                opened = True
                continue
        if first == ":" and (entry := _ENTRY.match(line)):
            name, unset, value = entry.groups()
            attributes[name.lower()] = "" if unset else (value or "")
            opened = True
            continue
        if first == "/" and line.startswith("//") and not line.startswith("////"):
            continue  # a comment line
        delimiter = _DELIMITER.match(line)
        if delimiter is not None:
            block = line.rstrip()
            opened = False
            if pending:
                _place(pending, found, loose)
                pending = []
            continue
        if pending:
            _place(pending, found, loose)
            pending = []
        if line.startswith("include::"):
            _include(line, number, path, attributes, references)
        else:
            _inline(line, number, path, references, found, loose)
        opened = False
    if pending:
        _place(pending, found, loose)
    return _anchors(found, loose, attributes), references, []


def _verbatim(delimiter: str) -> bool:
    """Whether a block's lines are not AsciiDoc: listing, literal, passthrough, comment
    or fenced (an open block, ``--``, holds AsciiDoc)."""
    return delimiter[0] in ".+/`" or (delimiter[0] == "-" and len(delimiter) >= 4)


def _place(
    anchors: list[str], found: list[tuple[int, int, str, str | None, list[str]]], loose: list[str]
) -> None:
    """Anchors not on a title: the section they are in takes them."""
    if found:
        found[-1][4].extend(anchors)
    else:
        loose.extend(anchors)


def _anchors(
    found: list[tuple[int, int, str, str | None, list[str]]],
    loose: list[str],
    attributes: dict[str, str],
) -> list[Found]:
    """Each title's slug (its explicit id, else the generated one, numbered from ``_2``
    when taken) and aliases (its other anchors; for a generated id, the id under the
    default attributes and with ``-`` between words, and GitHub's slug)."""
    prefix = attributes.get("idprefix", "_")
    separator = attributes.get("idseparator", "_")[:1]
    taken: set[str] = {explicit for *_, explicit, _ in found if explicit}
    result: list[Found] = []
    for position, (line, level, text, explicit, anchors) in enumerate(found):
        aliases = [*anchors, *(loose if position == 0 else ())]
        if explicit is not None:
            slug = explicit
        else:
            slug = section_id(text, prefix, separator)
            if slug in taken:
                number = 2
                while f"{slug}{separator}{number}" in taken:
                    number += 1
                slug = f"{slug}{separator}{number}"
            taken.add(slug)
            aliases += [section_id(text), section_id(text, "", "-")]
        aliases.append(github_slug(text.lower()))
        result.append((line, level, text, slug, tuple(aliases)))
    return result


def _inline(
    line: str,
    number: int,
    path: str,
    references: list[Reference],
    found: list[tuple[int, int, str, str | None, list[str]]],
    loose: list[str],
) -> None:
    """Cross references, links and inline anchors written on one line."""
    if "[[" in line or "anchor:" in line:
        for match in _INLINE_ANCHOR.finditer(line):
            _place([match.group(1) or match.group(2)], found, loose)
    if "xref:" in line or "<<" in line:
        for match in _XREF.finditer(line):
            target = (match.group(1) or match.group(2)).strip()
            resolved = _xref_target(target, path)
            if resolved is not None:
                references.append(Reference("link", match.group(0), *resolved, number))
    if "link:" in line:
        for match in _LINK.finditer(line):
            location, _, anchor = match.group(1).partition("#")
            if posixpath.splitext(location)[1].lower() in _DOC_SUFFIXES:
                target = local_target(location, path)
                if target is not None:
                    references.append(
                        Reference("link", match.group(0), target, anchor or None, number)
                    )


def _xref_target(target: str, path: str) -> tuple[str, str | None] | None:
    """``(path, anchor)`` of a cross reference: another document (``other.adoc#id``,
    ``other#id``) or an id in this one."""
    if "{" in target or re.match(r"[\w.\-]+(?:@[\w.\-]*)?:", target):
        return None  # an attribute to resolve, or another Antora module or component
    location, hashed, anchor = target.partition("#")
    if not hashed and posixpath.splitext(location)[1].lower() not in _DOC_SUFFIXES:
        return (path, location) if location else None  # an id of this document
    if location and not posixpath.splitext(location)[1]:
        location += ".adoc"
    resolved = local_target(location, path) if location else path
    return (resolved, anchor or None) if resolved is not None else None


def _include(
    line: str, number: int, path: str, attributes: dict[str, str], references: list[Reference]
) -> None:
    """The reference of an ``include::`` line."""
    match = _INCLUDE.match(line)
    if match is None:
        return
    target = re.sub(
        r"\{([\w\-]+)\}", lambda m: attributes.get(m.group(1).lower(), m.group(0)), match.group(1)
    )
    if "{" in target:
        return
    resolved = local_target(target, path)
    if resolved is None:
        return
    anchor = None
    lines = re.search(r"lines=\"?([\d.;,\-]+)", match.group(2))
    if lines is not None and "-1" not in lines.group(1):
        numbers = [int(n) for n in re.findall(r"\d+", lines.group(1))]
        if numbers and min(numbers) >= 1:
            anchor = line_span(min(numbers), max(numbers))
    references.append(Reference("include", match.group(0), resolved, anchor, number))
