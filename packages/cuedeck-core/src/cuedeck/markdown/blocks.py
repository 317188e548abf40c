"""Headings and code regions of markdown, by two block scanners, and the fence rule.

``mistletoe`` is the parser of record; ``fast`` is a line scanner that gives the same
headings and code regions on real corpora (tests/core/test_markdown_corpora.py compares
them on every file) at about a tenth of the cost, which the index needs to meet its
cold-start budget (numbers in benchmarks/README.md).

Where fenced code opens and closes is decided here once (:func:`fence_opened_by`,
:meth:`Fence.closed_by`, :func:`outside_fences`): the index, the outline pruner, search's
section prose and the card editor all skip code by this rule, so they agree on it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Literal

import attrs

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence

Engine = Literal["fast", "mistletoe"]


@attrs.frozen
class Block:
    """What a block scanner reports: headings (start lines only) and code line ranges."""

    headings: tuple[tuple[int, int, str], ...]  # (line, level, raw text)
    code: tuple[tuple[int, int], ...]  # inclusive 1-based ranges of fenced code / HTML


# --- fenced code -------------------------------------------------------------------------

_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})(.*)$")


@attrs.frozen
class Fence:
    """An open code fence: its character, its length and the 1-based line it opened on."""

    char: str
    length: int
    line: int = 0

    def closed_by(self, line: str) -> bool:
        """Whether ``line`` closes this fence: the same character, at least as many, and
        nothing else on the line."""
        if self.char not in line:  # most lines of a code block
            return False
        match = _FENCE.match(line)
        return bool(
            match
            and match.group(1)[0] == self.char
            and len(match.group(1)) >= self.length
            and not match.group(2).strip()
        )


def fence_opened_by(line: str, number: int = 0) -> Fence | None:
    """The fence ``line`` (1-based line ``number``) opens, or None.

    Three or more backticks or tildes, then an info string; a backtick fence's info
    string has no backtick (that line is inline code, not a fence).
    """
    match = _FENCE.match(line)
    if match is None:
        return None
    run, info = match.group(1), match.group(2)
    if run[0] == "`" and "`" in info:
        return None
    return Fence(run[0], len(run), number)


def outside_fences(lines: Iterable[str]) -> Iterator[str]:
    """The lines that are not fenced code (fence lines count as code)."""
    fence: Fence | None = None
    for line in lines:
        if fence is not None:
            if fence.closed_by(line):
                fence = None
            continue
        fence = fence_opened_by(line)
        if fence is None:
            yield line


# --- block scanners ----------------------------------------------------------------------

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_BREAK = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_LIST = re.compile(r"^ {0,3}(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)")
_HTML_BLOCK = re.compile(
    r"^ {0,3}<(?:!--|\?|![A-Z]|!\[CDATA\[|/?(?:script|pre|style|textarea)(?:\s|>|$))", re.I
)
_HTML_END = {"<!--": "-->", "<?": "?>", "<!": ">", "<![CDATA[": "]]>"}
#: The characters a line's first non-blank one must be for a pattern above to match it
#: (fence, ATX or setext heading, HTML block, thematic break, block quote, list item;
#: digits are tested apart, as ``\d`` matches every script's digits).
_BLOCK_MARKS = frozenset("`~#<=-*_>+")


def scan_fast(lines: Sequence[str], start: int) -> Block:
    """Headings and code regions by a line scan (from 1-based line ``start``)."""
    headings: list[tuple[int, int, str]] = []
    code: list[tuple[int, int]] = []
    fence: Fence | None = None
    html_end: str | None = None
    html_start = 0
    paragraph: list[str] = []
    paragraph_start = 0
    for number in range(start, len(lines) + 1):
        line = lines[number - 1]
        if fence is not None:
            if fence.closed_by(line):
                code.append((fence.line, number))
                fence = None
            continue
        if html_end is not None:
            if html_end in line:
                code.append((html_start, number))
                html_end = None
            continue
        stripped = line.strip()
        if not stripped:
            paragraph = []
            continue
        if stripped[0] not in _BLOCK_MARKS and not stripped[0].isdigit():
            # Most lines: no fence, heading, HTML block, rule, quote or list item can
            # start with this character, so the line is paragraph text (or indented code).
            if not paragraph:
                if line.startswith("    "):
                    continue
                paragraph_start = number
            paragraph.append(line)
            continue
        fence = fence_opened_by(line, number)
        if fence is not None:
            paragraph = []
            continue
        if not paragraph and line.startswith("    "):
            continue  # indented code (or list continuation): never a heading
        if match := _ATX.match(line):
            headings.append((number, len(match.group(1)), match.group(2) or ""))
            paragraph = []
            continue
        if _HTML_BLOCK.match(line) and not paragraph:
            opener = stripped[:9]
            end = next((e for o, e in _HTML_END.items() if opener.startswith(o)), None)
            if end is None:
                tag = re.match(r"</?([a-zA-Z]+)", stripped)
                end = f"</{tag.group(1).lower()}>" if tag else ">"
            if end in stripped[len(opener) :] or (end == ">" and stripped.endswith(">")):
                code.append((number, number))
            else:
                html_end, html_start = end, number
            continue
        first = paragraph[0].lstrip() if paragraph else ""
        if first and _SETEXT.match(line) and not _LIST.match(first) and first[0] != ">":
            level = 1 if stripped[0] == "=" else 2
            headings.append((paragraph_start, level, " ".join(p.strip() for p in paragraph)))
            paragraph = []
            continue
        if _BREAK.match(line) or stripped.startswith(">") or _LIST.match(line):
            paragraph = [] if _BREAK.match(line) else [line]
            paragraph_start = number
            continue
        if not paragraph:
            paragraph_start = number
        paragraph.append(line)
    if fence is not None:
        code.append((fence.line, len(lines)))
    if html_end is not None:
        code.append((html_start, len(lines)))
    return Block(headings=tuple(headings), code=tuple(code))


def scan_mistletoe(lines: Sequence[str], start: int) -> Block:
    """Headings and code regions as mistletoe's CommonMark parser sees them."""
    from mistletoe import block_token
    from mistletoe.html_renderer import HtmlRenderer

    body = [line + "\n" for line in lines[start - 1 :]]
    offset = start - 1
    with HtmlRenderer():  # type: ignore[no-untyped-call]  # switches on HTML blocks
        document = block_token.Document(body)
    headings: list[tuple[int, int, str]] = []
    code: list[tuple[int, int]] = []
    children = list(document.children or ())
    for position, token in enumerate(children):
        line = _line(token) + offset
        if isinstance(token, block_token.Heading | block_token.SetextHeading):
            raw = lines[line - 1]
            if isinstance(token, block_token.Heading):
                match = _ATX.match(raw)
                text = (match.group(2) or "") if match else raw.strip("# ")
            else:
                nxt = (
                    _line(children[position + 1]) + offset
                    if position + 1 < len(children)
                    else len(lines) + 1
                )
                para = []
                for candidate in lines[line - 1 : nxt - 1]:
                    if _SETEXT.match(candidate):
                        break
                    para.append(candidate.strip())
                text = " ".join(para)
            headings.append((line, token.level, text))
        elif isinstance(token, block_token.CodeFence | block_token.HtmlBlock):
            nxt = (
                _line(children[position + 1]) + offset
                if position + 1 < len(children)
                else len(lines) + 1
            )
            last = nxt - 1
            while last > line and not lines[last - 1].strip():
                last -= 1
            code.append((line, last))
    return Block(headings=tuple(headings), code=tuple(code))


def _line(token: Any) -> int:
    """1-based line of a mistletoe block token (untyped in mistletoe)."""
    return int(token.line_number)


SCANNERS: dict[str, Callable[[Sequence[str], int], Block]] = {
    "fast": scan_fast,
    "mistletoe": scan_mistletoe,
}
ENGINES: tuple[Engine, ...] = ("fast", "mistletoe")
