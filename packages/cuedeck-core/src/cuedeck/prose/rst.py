"""reStructuredText into documents: section titles with the anchors Sphinx gives them,
and the references Sphinx follows.

A line scanner, not docutils (75 times slower on 400 of numpy's docstrings, 0.5 MB, and
the index reads every file on a cold start); tests compare its titles and anchors with
docutils' on real files. A title
is an unindented line under a blank line, with an underline (and maybe an overline of
the same character) at least as long as the title or four characters long; its level is
the order in which its style first appears. Its slug is the docutils id Sphinx
publishes (``x-1`` for a repeat); the explicit targets (``.. _label:``) right above it
are aliases, by name and id, as is GitHub's slug.

References: ``:ref:`` (a label, resolved across the workspace), ``:doc:``, links to
local prose files and ``toctree`` entries are "see also"; ``.. include::`` and
``.. literalinclude::`` include what they name (``:lines:``, ``:start-line:`` and
``:end-line:`` as a line range, ``:pyobject:`` as a symbol). A path starting with ``/``
is relative to the Sphinx source folder: the folder of the nearest ``conf.py`` the index
holds, else the highest folder above the file holding an ``index`` page (``index.rst``,
``index.txt``...). As these depend on which files the index holds, a file of those kinds
coming or going has the documents scanned so read again (:func:`resolves_against`). Literal blocks,
code directives and comments are skipped.
"""

from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING

from cuedeck.markdown.anchors import SuffixDuplicates, github_slug, sphinx_slug
from cuedeck.models import Problem, Reference
from cuedeck.prose.sections import (
    DOC_SUFFIXES,
    line_span,
    local_target,
    prose_document,
    with_suffix,
)

if TYPE_CHECKING:
    from collections.abc import Collection

    from cuedeck.index.parsers import ParseContext
    from cuedeck.models import Document
    from cuedeck.prose.sections import Found


def resolves_against(path: str) -> bool:
    """Whether ``path`` coming or going can change what a scanned document's references
    resolve to: a page (the suffix a ``:doc:`` leaves off, an ``index`` page) or a
    Sphinx ``conf.py``."""
    return path.endswith(DOC_SUFFIXES) or posixpath.basename(path) == "conf.py"


#: A section adornment: one punctuation character repeated, nothing else.
_ADORNMENT = re.compile(r"([!-/:-@\[-`{-~])\1*[ \t]*$")
#: An explicit markup line: ``.. name:: argument`` (a directive) or another construct.
_DIRECTIVE = re.compile(r"([ \t]*)\.\.[ \t]+([\w:.+-]+)::(?:[ \t]+(.*))?$")
_TARGET = re.compile(r"[ \t]*\.\.[ \t]+_(`[^`]+`|(?:[^:\\]|\\.)+):[ \t]*(.*)$")
_EXPLICIT = re.compile(r"([ \t]*)\.\.(?:[ \t]|$)")
_OPTION = re.compile(r"[ \t]+:([\w-]+):[ \t]*(.*)$")
#: Lines that open a list item or explicit markup, which a title line cannot be.
_NOT_TITLE = re.compile(r"(?:[-*+•‣⁃][ \t]|\.\.(?:[ \t]|$))")
_ROLE = re.compile(r"(?<![\w`]):(?:std:)?(ref|numref|doc):`((?:[^`\\]|\\.)+)`")
_LINK = re.compile(r"(?<![\w`])`((?:[^`\\<]|\\.)*)<([^<>`]+)>`__?(?!\w)")
_LITERAL = re.compile(r"``.+?``")

#: Directives whose content is not reStructuredText (code, data, markup for others).
_RAW_CONTENT = frozenset(
    {
        "code",
        "code-block",
        "sourcecode",
        "highlight",
        "literalinclude",
        "doctest",
        "testcode",
        "testoutput",
        "testsetup",
        "testcleanup",
        "ipython",
        "raw",
        "math",
        "graphviz",
        "graph",
        "digraph",
        "mermaid",
        "plantuml",
        "productionlist",
        "csv-table",
        "jupyter-execute",
        "code-cell",
        "parsed-literal",
    }
)
#: A title as the scan finds it: line, level, text, the labels right above it and
#: those inside its section.
_Title = tuple[int, int, str, list[str], list[str]]
#: Labels Sphinx defines itself.
_BUILTIN_LABELS = frozenset({"genindex", "modindex", "py-modindex", "search"})


def parse_rst(path: str, data: bytes, context: ParseContext) -> Document:
    """The ``rst`` parser registered by core (see the module docstring)."""
    return prose_document(
        path,
        data,
        language="rst",
        scan=lambda lines: scan_rst(lines, path, context.paths),
        count_tokens=context.count_tokens,
    )


def has_titles(lines: list[str]) -> bool:
    """Whether ``lines`` hold a reStructuredText section title (a ``.txt`` file written
    in it, as Sphinx projects often do)."""
    return bool(_Scanner(lines, "", frozenset()).titles(only_first=True))


def scan_rst(
    lines: list[str], path: str, paths: Collection[str]
) -> tuple[list[Found], list[Reference], list[Problem]]:
    """Headings and references of the reStructuredText ``lines`` of file ``path``
    (``paths``: the files the index covers, to resolve documents named without suffix)."""
    scanner = _Scanner(lines, path, paths)
    found = scanner.titles()
    # A directive's references are made when its block ends: put them in line order.
    return found, sorted(scanner.references, key=lambda r: r.line), []


def normal_label(label: str) -> str:
    """A label as Sphinx matches it: lower case, whitespace collapsed."""
    return " ".join(label.split()).lower()


def title_text(raw: str) -> str:
    """The text of a title as docutils renders it: inline markup dropped, roles and
    links shown by their text, escapes resolved."""
    text = raw.strip()
    if not any(c in text for c in "`*\\_|"):
        return text
    text = _LITERAL.sub(lambda m: m.group(0)[2:-2], text)
    text = re.sub(r":[\w:.+-]+:`((?:[^`\\]|\\.)+)`", lambda m: _role_title(m.group(1)), text)
    text = re.sub(r"`((?:[^`\\<]|\\.)*?)\s*<[^<>`]+>`__?", r"\1", text)
    text = re.sub(r"_?`((?:[^`\\]|\\.)+)`_{0,2}", r"\1", text)
    text = re.sub(r"\*\*(\S(?:.*?\S)?)\*\*", r"\1", text)
    text = re.sub(r"(?<![\w*])\*(\S(?:.*?\S)?)\*(?![\w*])", r"\1", text)
    text = re.sub(r"(?<=\w)__?(?=[\s.,;:!?)]|$)", "", text)
    text = re.sub(r"\\(.)", lambda m: "" if m.group(1).isspace() else m.group(1), text)
    return text.strip()


def _role_title(body: str) -> str:
    """What a role shows: its explicit title, else its target (``~a.b.c``: ``c``)."""
    body = body.strip()
    if body.endswith(">") and "<" in body:
        return body[: body.rindex("<")].strip()
    body = body.lstrip("!")
    if body.startswith("~"):
        return body[1:].rpartition(".")[2]
    return body


def _role_target(body: str) -> str:
    """The target of a role: inside ``<...>`` when it has an explicit title."""
    body = body.strip()
    if body.endswith(">") and "<" in body:
        body = body[body.rindex("<") + 1 : -1]
    return body.lstrip("!~").strip()


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


class _Scanner:
    """One pass over a file's lines: titles, labels and references."""

    def __init__(self, lines: list[str], path: str, paths: Collection[str]) -> None:
        self.lines = lines
        self.path = path
        self.paths = paths
        self.references: list[Reference] = []
        self._root: str | None = None

    # -- titles ----------------------------------------------------------------------------

    def titles(self, *, only_first: bool = False) -> list[Found]:
        lines = self.lines
        styles: list[tuple[str, bool]] = []
        found: list[_Title] = []
        pending: list[str] = []  # labels waiting for the title below them
        loose: list[str] = []  # labels before any title, not right above one
        skip_below: int | None = None  # skip lines indented deeper than this
        directive: _Directive | None = None
        previous_blank = True  # or indented: an unindented line starts a new block
        after_title = False
        count = len(lines)
        number = 0
        while number < count:
            line = lines[number]
            number += 1
            if not line or line.isspace():
                previous_blank = True
                continue
            indent = _indent(line) if line[0] in " \t" else 0
            if skip_below is not None:
                if indent > skip_below:
                    if directive is not None:
                        directive.take(line, number)
                    previous_blank = False
                    continue
                skip_below = None
                if directive is not None:
                    self._emit(directive)
                    directive = None
            if indent == 0:
                opened = previous_blank or after_title or lines[number - 2][:1] in (" ", "\t")
                title = self._title_at(number - 1, opened)
                if title is not None:
                    style, text, used = title
                    if style not in styles:
                        styles.append(style)
                    found.append((number, styles.index(style) + 1, text, pending, []))
                    pending = []
                    if only_first:
                        break
                    number += used - 1
                    previous_blank, after_title = False, True
                    continue
            after_title = False
            if line.lstrip(" \t").startswith(".."):
                target = _TARGET.match(line)
                if target is not None:
                    if not target.group(2):  # an internal target, a label
                        pending.append(target.group(1).strip("`"))
                    else:
                        self._link(target.group(2).strip(), number, target.group(0).strip())
                    previous_blank = False
                    continue
                if pending:
                    self._place(pending, found, loose)
                    pending = []
                match = _DIRECTIVE.match(line)
                if match is not None:
                    name = match.group(2).rpartition(":")[2].lower()
                    argument = (match.group(3) or "").strip()
                    directive = _Directive(name, argument, number, line.strip())
                    skip_below = indent
                    if name not in _RAW_CONTENT and name not in ("include", "toctree"):
                        directive = None
                        skip_below = None
                        self._inline(line, number)
                    previous_blank = False
                    continue
                if _EXPLICIT.match(line) and not line.lstrip().startswith(("..[", ".. [", ".. |")):
                    skip_below = indent  # a comment: its indented lines go with it
                    previous_blank = False
                    continue
            elif pending:
                self._place(pending, found, loose)
                pending = []
            if line.rstrip().endswith("::") and not line.rstrip().endswith(":::"):
                self._inline(line, number)
                skip_below = indent  # a literal block follows
            elif line.lstrip().startswith(">>>"):
                while number < count and lines[number].strip():
                    number += 1  # a doctest block runs to the next blank line
            else:
                self._inline(line, number)
            previous_blank = False
        if directive is not None:
            self._emit(directive)
        if pending:
            self._place(pending, found, loose)
        return self._anchors(found, loose)

    def _title_at(self, index: int, opened: bool) -> tuple[tuple[str, bool], str, int] | None:
        """``(style, text, lines used)`` of a title starting at line ``index`` (0-based)."""
        if not opened:
            return None
        lines = self.lines
        line = lines[index]
        if index + 1 >= len(lines):
            return None
        below = lines[index + 1]
        if not below:
            return None
        over = _ADORNMENT.match(line)
        if over is not None and len(line.rstrip()) >= 2:
            # An overline: the title below it, then an underline of the same kind.
            if index + 2 >= len(lines) or not below.strip() or _ADORNMENT.match(below):
                return None
            under = lines[index + 2]
            if _ADORNMENT.match(under) is None or under.rstrip() != line.rstrip():
                return None
            return (line[0], True), title_text(below), 3
        if below[0] in " \t" or _ADORNMENT.match(below) is None or _NOT_TITLE.match(line):
            return None
        title, underline = line.rstrip(), below.rstrip()
        if len(underline) < len(title) and len(underline) < 4:
            return None
        if over is not None:
            return None  # a line of punctuation over an adornment: a transition or table
        return (below[0], False), title_text(title), 2

    def _place(self, labels: list[str], found: list[_Title], loose: list[str]) -> None:
        """Labels not right above a title: the section they are in takes them."""
        if found:
            found[-1][4].extend(labels)
        else:
            loose.extend(labels)

    @staticmethod
    def _anchors(found: list[_Title], loose: list[str]) -> list[Found]:
        """Each title's docutils id and aliases: its labels' names and ids, and GitHub's
        slug. The ids of the labels right above a title are taken first, as docutils
        takes them, so a title whose id one of them holds gets ``x-1`` (as a repeated
        title does); a title that gives no id is ``section-N``."""
        repeats = SuffixDuplicates()
        unnamed = 0
        result: list[Found] = []
        for position, (line, level, text, above, inside) in enumerate(found):
            repeats.taken.update(sphinx_slug(label) for label in above)
            slug = sphinx_slug(text)
            if slug:
                slug = repeats(slug)
            else:
                unnamed += 1
                slug = f"section-{unnamed}"
            named = [*above, *inside, *(loose if position == 0 else ())]
            repeats.taken.update(sphinx_slug(label) for label in inside)
            aliases = [normal_label(label) for label in named]
            aliases += [sphinx_slug(label) for label in named]
            aliases.append(github_slug(text.lower()))
            result.append((line, level, text, slug, tuple(aliases)))
        return result

    # -- references ------------------------------------------------------------------------

    def _inline(self, line: str, number: int) -> None:
        """The roles and links written on one line."""
        if "`" not in line:
            return
        if "``" in line:
            line = _LITERAL.sub(lambda m: " " * len(m.group(0)), line)
        for match in _ROLE.finditer(line):
            role, body = match.group(1), match.group(2)
            raw = match.group(0)
            target = _role_target(body)
            if not target or "://" in target:
                continue
            if role in ("ref", "numref"):
                self._label(target, raw, number)
            elif role == "doc":
                self._doc(target, raw, number)
        for match in _LINK.finditer(line):
            self._link(match.group(2), number, match.group(0))

    def _label(self, target: str, raw: str, number: int) -> None:
        label = normal_label(target)
        if label in _BUILTIN_LABELS:
            return
        if ":" in label:  # autosectionlabel's ``doc:Title``, or another project's label
            document, _, title = target.rpartition(":")
            path = self._document_path(document, from_root=True)
            if path is not None and path in self.paths and title:
                self.references.append(Reference("link", raw, path, title.strip(), number))
            return
        self.references.append(Reference("label", raw, label, None, number))

    def _doc(self, target: str, raw: str, number: int) -> None:
        path = self._document_path(target, from_root=False)
        if path is not None:
            self.references.append(Reference("link", raw, path, None, number))

    def _document_path(self, name: str, *, from_root: bool) -> str | None:
        """The file of a Sphinx document name (no suffix), relative to this file's folder
        or (``/name``, or ``from_root``) to the source folder."""
        name = name.strip()
        if from_root and not name.startswith("/"):
            name = "/" + name
        resolved = local_target(name, self.path, self.root)
        return with_suffix(resolved, self.paths) if resolved is not None else None

    def _link(self, target: str, number: int, raw: str) -> None:
        """A hyperlink to a local prose file (``other.rst``, ``other.html#x``)."""
        if target.endswith("_") or target.startswith(("mailto:", "#")):
            return  # a reference to a named target, or a page anchor
        location, _, anchor = target.partition("#")
        stem, suffix = posixpath.splitext(location)
        if suffix == ".html":
            location = stem
        elif suffix not in (".rst", ".txt", ".md", ".rest"):
            return
        resolved = local_target(location, self.path, self.root)
        if resolved is None:
            return
        if suffix == ".html":
            resolved = with_suffix(resolved, self.paths)
        self.references.append(Reference("link", raw, resolved, anchor or None, number))

    @property
    def root(self) -> str:
        """The Sphinx source folder that ``/`` paths start from (see the module docstring)."""
        if self._root is None:
            folder = posixpath.dirname(self.path)
            parts = folder.split("/") if folder else []
            found = None
            for depth in range(len(parts), -1, -1):
                base = "/".join(parts[:depth])
                if posixpath.join(base, "conf.py") in self.paths:
                    found = base
                    break
            if found is None:
                found = folder
                for depth in range(len(parts) + 1):
                    index = posixpath.join("/".join(parts[:depth]), "index")
                    if any(index + suffix in self.paths for suffix in DOC_SUFFIXES):
                        found = "/".join(parts[:depth])
                        break
            self._root = found
        return self._root

    def _emit(self, directive: _Directive) -> None:
        """The references of an include, a literalinclude or a toctree."""
        if directive.name in ("include", "literalinclude"):
            argument = directive.argument
            if not argument or (argument.startswith("<") and argument.endswith(">")):
                return  # a standard include of docutils
            target = local_target(argument, self.path, self.root)
            if target is not None:
                anchor = directive.anchor()
                self.references.append(
                    Reference("include", directive.raw, target, anchor, directive.line)
                )
        elif directive.name == "toctree" and "glob" not in directive.options:
            for number, entry in directive.content:
                name = _role_target(entry) if entry.endswith(">") else entry
                if name == "self" or "://" in name or any(c in name for c in "*?["):
                    continue
                path = self._document_path(name, from_root=False)
                if path is not None:
                    self.references.append(Reference("link", entry, path, None, number))


class _Directive:
    """A directive whose options or content make references."""

    def __init__(self, name: str, argument: str, line: int, raw: str) -> None:
        self.name = name
        self.argument = argument
        self.line = line
        self.raw = raw
        self.options: dict[str, str] = {}
        self.content: list[tuple[int, str]] = []
        self._in_options = True

    def take(self, line: str, number: int) -> None:
        """One indented line (``number``) of the directive's block."""
        option = _OPTION.match(line) if self._in_options else None
        if option is not None:
            self.options[option.group(1).lower()] = option.group(2).strip()
        else:
            self._in_options = False
            self.content.append((number, line.strip()))

    def anchor(self) -> str | None:
        """The section of the included file: ``:pyobject:``, ``:lines:`` (their span) or
        ``:start-line:`` with ``:end-line:`` (counted from 0, end excluded)."""
        options = self.options
        if options.get("pyobject"):
            return options["pyobject"]
        spans = re.findall(r"(\d+)\s*-\s*(\d+)|(\d+)(?!\s*-)", options.get("lines", ""))
        if spans and not re.search(r"\d\s*-\s*(?:,|$)", options["lines"]):
            numbers = [int(n) for span in spans for n in span if n]
            if numbers and min(numbers) >= 1:
                return line_span(min(numbers), max(numbers))
        start, end = options.get("start-line", ""), options.get("end-line", "")
        if end.isdigit() and int(end) > int(start or 0):
            return line_span(int(start or 0) + 1, int(end))
        return None
