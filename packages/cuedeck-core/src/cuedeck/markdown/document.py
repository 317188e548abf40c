"""Markdown files into :class:`~cuedeck.models.Document`: frontmatter, sections, references.

Headings and code regions come from one of the block scanners of :mod:`cuedeck.markdown.blocks`
(``fast`` by default, ``mistletoe`` as the parser of record); reference extraction and
everything else is shared.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
import unicodedata
from typing import TYPE_CHECKING, Any

from cuedeck.layout import CARD_ID, CARD_ID_PATTERN, CARDS_DIR, DOCS_DIR
from cuedeck.markdown.anchors import github_slug, heading_anchors
from cuedeck.markdown.blocks import ENGINES, SCANNERS, Engine
from cuedeck.markdown.frontmatter import load as read_frontmatter
from cuedeck.models import (
    DOCUMENT_SUFFIXES,
    LINE_RANGE,
    Document,
    Heading,
    Problem,
    Reference,
    document_kind,
    names_path,
    replaced_bytes,
)
from cuedeck.text import decode, split_lines

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence

    from cuedeck.index.parsers import ParseContext

__all__ = [
    "CARDS_DIR",
    "CARD_ID",
    "CARD_ID_PATTERN",
    "DOCS_DIR",
    "ENGINES",
    "Engine",
    "parse_document",
    "parse_markdown",
]


def _problem(path: str, line: int, message: str, severity: str = "error") -> Problem:
    return Problem(
        severity=severity,  # type: ignore[arg-type]
        code=1004,
        path=path,
        line=line,
        message=message,
        help="fix the YAML between the '---' lines at the top of the file",
    )


# --- headings ----------------------------------------------------------------------------

_ATTR_LIST = re.compile(r"\s*\{\s*:?\s*([^}]*)\}\s*$")
#: A code span: a run of backticks, then anything up to a run of exactly as many.
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK_TEXT = re.compile(r"\[([^\]]*)\]\([^)]*\)")
#: Emphasis by ``*`` anywhere, by ``_`` only at word edges (``SSL_CERT_FILE`` is a name).
_EMPHASIS = re.compile(
    r"(\*\*|\*|~~)(?=\S)(.+?)(?<=\S)\1|(?<![^\W_])(__|_)(?=\S)(.+?)(?<=\S)\3(?![^\W_])"
)
_TAG = re.compile(r"<[^>]+>")
#: A character one of the patterns above, an entity or a held stand-in needs.
_MARKUP_CHARACTER = re.compile(r"[`\\\[*~_<&\x00]")
#: Stand-ins for code spans and escaped characters while markup is stripped: NUL never
#: survives into a heading's text (icon fonts use the private-use area, so not that).
_HELD = re.compile("\x00(\\d+)\x00")


def heading_text(raw: str) -> tuple[str, str | None]:
    """Plain text of a heading as renderers show it (code spans verbatim, emphasis,
    links, images and tags stripped, escapes and entities resolved), and its explicit
    ``{ #id }`` if any."""
    import html

    explicit = None
    if "{" in raw and (match := _ATTR_LIST.search(raw)):
        ident = re.search(r"#([\w\-:.]+)", match.group(1))
        if ident:
            explicit = ident.group(1)
            raw = raw[: match.start()]
    if not _MARKUP_CHARACTER.search(raw):  # plain text: nothing below would change it
        return raw.strip(), explicit
    held: list[str] = []

    def hold(text: str) -> str:
        held.append(text)
        return f"\x00{len(held) - 1}\x00"

    def code(match: re.Match[str]) -> str:
        content = match.group(2)
        if content.startswith(" ") and content.endswith(" ") and content.strip():
            content = content[1:-1]  # CommonMark drops one space on each side
        return hold(content)

    text = _CODE_SPAN.sub(code, raw.replace("\x00", ""))
    text = _ESCAPED.sub(lambda m: hold(m.group(1)), text)
    text = _IMAGE.sub("", text)
    text = _LINK_TEXT.sub(r"\1", text)
    for _ in range(3):  # nested emphasis such as **_word_**
        text = _EMPHASIS.sub(lambda m: m.group(2) or m.group(4), text)
    text = html.unescape(_TAG.sub("", text))
    text = _HELD.sub(lambda m: held[int(m.group(1))], text)
    return text.strip(), explicit


def slugify(text: str) -> str:
    """GitHub's anchor slug (the canonical one): lower case, punctuation dropped, each
    space a hyphen."""
    return github_slug(unicodedata.normalize("NFC", text).strip())


def build_headings(found: Iterable[tuple[int, int, str]], line_count: int) -> tuple[Heading, ...]:
    """Headings with section ranges, GitHub's unique slugs (``-1``, ``-2`` for
    duplicates) and the anchors other conventions give them (:mod:`cuedeck.markdown.anchors`)."""
    items = list(found)
    texts = [heading_text(raw) for _, _, raw in items]
    anchors = heading_anchors(
        [(unicodedata.normalize("NFC", text), ident) for text, ident in texts]
    )
    result: list[Heading] = []
    for index, (line, level, _) in enumerate(items):
        end = line_count
        for later_line, later_level, _ in items[index + 1 :]:
            if later_level <= level:
                end = later_line - 1
                break
        slug = anchors[index]["github"]
        aliases = tuple(sorted({a for a in anchors[index].values() if a and a != slug}))
        result.append(
            Heading(
                level=level,
                text=texts[index][0],
                slug=slug,
                line=line,
                end_line=end,
                aliases=aliases,
            )
        )
    return tuple(result)


# --- references --------------------------------------------------------------------------

_INLINE_CODE = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)")
_AT_REF = re.compile(
    r"(?<![\w@/.`])@(?:(?P<kind>doc|card|code)/(?P<name>[\w\-./]+?)|(?P<path>"
    rf"[\w\-./]+?\.(?:{'|'.join(DOCUMENT_SUFFIXES)})"
    r"|[\w\-.]+(?:/[\w\-.]+)+?\.\w+|[\w\-.]*?\.\w+(?=#L\d)))"
    r"(?:#(?P<anchor>[^\s,;!?()\[\]<>'\"`]+))?(?=$|[\s,;:!?()\[\]<>'\"`]|\.(?:\s|$))"
)
_MD_LINK = re.compile(r"\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^()\s<>]+)>?(?:\s+[\"'(][^)]*)?\s*\)")
_MD_DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?")
_WIKI = re.compile(r"\[\[([^\[\]|#]+)(?:#([^\[\]|]+))?(?:\|[^\[\]]*)?\]\]")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.\-]*:")


def _strip_anchor(anchor: str | None) -> str | None:
    if anchor is None:
        return None
    anchor = anchor.rstrip(".:")
    return anchor or None


def at_target(kind: str | None, name: str | None, path: str | None) -> str:
    """Workspace-relative path named by an ``@`` reference's parts (``@code/`` names any
    workspace file by its path: ``@code/src/shop/cart.py``)."""
    if kind == "code":
        assert name is not None
        return posixpath.normpath(name.removeprefix("./"))
    if kind == "doc":
        assert name is not None
        return f"{DOCS_DIR}/{name.removesuffix('.md')}.md"
    if kind == "card":
        assert name is not None
        return f"{CARDS_DIR}/{name.removesuffix('.md')}.md"
    assert path is not None
    return posixpath.normpath(path.removeprefix("./"))


def parse_ref_spec(spec: str) -> tuple[str, str | None] | None:
    """A frontmatter ``refs:`` entry (``doc/api#Login``, ``@card/abc123``, ``docs/x.md``,
    ``code/src/shop/cart.py#Cart.add``, ``code/src/shop/cart.py#L120-L180``,
    ``docs/install.rst#payment``, ``setup.cfg#L1-L9``)."""
    spec = spec.strip().removeprefix("@")
    target, _, anchor = spec.partition("#")
    if target.startswith(("doc/", "card/", "code/")):
        kind, _, name = target.partition("/")
        return at_target(kind, name, None), anchor or None
    if names_path(target) or (posixpath.splitext(target)[1] and LINE_RANGE.fullmatch(anchor)):
        return at_target(None, None, target), anchor or None
    if target and not anchor:
        return target, None  # a bare name, resolved like a wiki link
    return None


def _link_target(target: str, source: str) -> tuple[str, str | None] | None:
    """A markdown link target relative to ``source``, if it points at a local .md file."""
    if _SCHEME.match(target) or target.startswith("#"):
        return None
    path, _, anchor = target.partition("#")
    path = path.split("?", 1)[0]
    if not path.lower().endswith(".md"):
        return None
    from urllib.parse import unquote

    path = unquote(path)
    if path.startswith("/"):
        joined = path.lstrip("/")
    else:
        joined = posixpath.join(posixpath.dirname(source), path)
    return posixpath.normpath(joined), unquote(anchor) or None


def extract_references(
    lines: Sequence[str], start: int, code: Iterable[tuple[int, int]], source: str
) -> list[Reference]:
    """References in the body, skipping code regions and inline code."""
    skip: set[int] = set()
    for first, last in code:
        skip.update(range(first, last + 1))
    refs: list[Reference] = []
    for number in _marked_lines(lines, start):
        if number in skip:
            continue
        written = lines[number - 1]
        line = written
        if "`" in line:
            # Inline code is blanked (same length) so nothing in it counts as a reference;
            # what a reference says is still taken from the line as written.
            line = _INLINE_CODE.sub(lambda m: " " * len(m.group(0)), line)
        refs.extend(_line_references(line, written, number, source))
    return refs


#: What a reference needs on its line: an ``@``, a link's ``](``, a definition's ``]:``
#: or a wiki link's ``[[``.
_REFERENCE_MARK = re.compile(r"@|\]\(|\]:|\[\[")


def _marked_lines(lines: Sequence[str], start: int) -> Iterator[int]:
    """The 1-based numbers of the lines from ``start`` on that hold a reference mark,
    found by searching the joined text instead of testing every line."""
    text = "\n".join(lines[start - 1 :])
    number, counted, position = start, 0, 0  # text[:counted] ends on line ``number``
    while match := _REFERENCE_MARK.search(text, position):
        number += text.count("\n", counted, match.start())
        counted = match.start()
        yield number
        position = text.find("\n", counted) + 1  # on to the next line
        if not position:
            return


def _line_references(line: str, written: str, number: int, source: str) -> Iterator[Reference]:
    """References found in ``line`` (inline code blanked), their text from ``written``."""

    def raw(match: re.Match[str]) -> str:
        return written[match.start() : match.end()]

    # Each pattern needs its mark on the line ("@", "](", "]:", "[["): most lines with
    # one mark have no other.
    for match in _AT_REF.finditer(line) if "@" in line else ():
        target = at_target(match.group("kind"), match.group("name"), match.group("path"))
        yield Reference(
            kind="at",
            raw=raw(match),
            target=target,
            anchor=_strip_anchor(match.group("anchor")),
            line=number,
        )
    for match in _MD_LINK.finditer(line) if "](" in line else ():
        if match.start() > 0 and line[match.start() - 1] == "!":
            continue  # an image
        resolved = _link_target(match.group(1), source)
        if resolved:
            yield Reference("markdown", raw(match), resolved[0], resolved[1], number)
    if "]:" in line and (definition := _MD_DEFINITION.match(line)):
        resolved = _link_target(definition.group(1), source)
        if resolved:
            yield Reference("markdown", raw(definition), resolved[0], resolved[1], number)
    for match in _WIKI.finditer(line) if "[[" in line else ():
        yield Reference(
            kind="wiki",
            raw=raw(match),
            target=match.group(1).strip(),
            anchor=_strip_anchor(match.group(2).strip() if match.group(2) else None),
            line=number,
        )


def frontmatter_references(
    frontmatter: dict[str, Any], lines: Sequence[str], body_line: int, path: str
) -> tuple[list[Reference], list[Problem]]:
    """References from frontmatter ``refs:`` and ``depends_on:`` lists."""
    refs: list[Reference] = []
    problems: list[Problem] = []

    def line_of(value: str, key: str) -> int:
        for number in range(2, body_line):
            if value in lines[number - 1]:
                return number
        for number in range(2, body_line):
            if lines[number - 1].startswith(f"{key}:"):
                return number
        return 1

    for key, kind in (("refs", "frontmatter"), ("depends_on", "depends_on")):
        value = frontmatter.get(key)
        if value is None:
            continue
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            problems.append(_problem(path, line_of(key, key), f"'{key}' must be a list of strings"))
            continue
        for item in value:
            if kind == "depends_on":
                target: tuple[str, str | None] | None = (f"{CARDS_DIR}/{item.strip()}.md", None)
            else:
                target = parse_ref_spec(item)
            if target is None:
                problems.append(
                    _problem(path, line_of(item, key), f"'{item}' in {key} is not a reference")
                )
                continue
            refs.append(Reference(kind, item, target[0], target[1], line_of(item, key)))  # type: ignore[arg-type]
    return refs, problems


# --- documents ---------------------------------------------------------------------------


def parse_document(
    path: str,
    data: bytes,
    *,
    count_tokens: Callable[[str], int],
    engine: Engine = "fast",
) -> Document:
    """Parse the bytes of the file at workspace-relative ``path``."""
    text, replaced = decode(data)
    lines = split_lines(text)
    problems: list[Problem] = [replaced_bytes(path)] if replaced else []
    frontmatter, body_line, fm_problems = read_frontmatter(lines, path)
    problems.extend(fm_problems)
    block = SCANNERS[engine](lines, body_line)
    headings = build_headings(block.headings, len(lines))
    refs, ref_problems = frontmatter_references(frontmatter, lines, body_line, path)
    problems.extend(ref_problems)
    refs.extend(extract_references(lines, body_line, block.code, path))
    title = frontmatter.get("title")
    if not isinstance(title, str) or not title.strip():
        first = next((h for h in headings if h.level == 1), None)
        title = first.text if first else posixpath.splitext(posixpath.basename(path))[0]
    return Document(
        path=path,
        kind=document_kind(path),
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
        line_count=len(lines),
        tokens=count_tokens(text),
        title=str(title),
        frontmatter=_jsonable(frontmatter),
        body_line=body_line,
        headings=headings,
        references=tuple(refs),
        problems=tuple(problems),
    )


def parse_markdown(path: str, data: bytes, context: ParseContext) -> Document:
    """The ``markdown`` parser registered by core: :func:`parse_document` for the index."""
    return parse_document(path, data, count_tokens=context.count_tokens)


def _jsonable(value: Any) -> Any:
    """Frontmatter with values JSON can hold (dates and odd scalars become strings)."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)
