"""The parsed shapes of a workspace: documents, headings, symbols, references, problems.

The shapes that know no document (scene items, ranked code, baselines) live in
:mod:`cuedeck.shapes` and are re-exported here, their public home for plugins.

They are frozen attrs classes; :data:`converter` (cattrs) turns them into plain
dicts and back, for the SQLite index and for JSON output. A markdown document has
headings; a code document (parsed by a plugin's parser) has symbols, its
definitions. Either kind of section can be named as an anchor.
"""

from __future__ import annotations

import posixpath
import re
from typing import Any, Literal

import attrs
import cattrs

from cuedeck.layout import CARDS_DIR, DOCS_DIR
from cuedeck.shapes.baseline import Baseline as Baseline
from cuedeck.shapes.baseline import BaselineFile as BaselineFile
from cuedeck.shapes.code import CodeQuery as CodeQuery
from cuedeck.shapes.code import CodeRanking as CodeRanking
from cuedeck.shapes.code import RankedSymbol as RankedSymbol
from cuedeck.shapes.code import left_out_of as left_out_of
from cuedeck.shapes.scene import Placement as Placement
from cuedeck.shapes.scene import SceneExtra as SceneExtra
from cuedeck.shapes.scene import SceneItem as SceneItem

Severity = Literal["error", "warning"]
ReferenceKind = Literal[
    "at", "markdown", "wiki", "frontmatter", "depends_on", "import", "include", "link", "label"
]
DocumentKind = Literal["card", "doc", "file"]
#: Languages of prose documents, whose sections are headings: what core's prose parsers
#: give (``markdown`` is the index's name for a document without a language).
PROSE_LANGUAGES = frozenset({"markdown", "rst", "asciidoc", "plaintext"})


@attrs.frozen
class Heading:
    """A heading and the 1-based, inclusive line range of its section.

    ``slug`` is its GitHub anchor; ``aliases`` are the other anchors sites give it
    (MkDocs, Sphinx, GitLab, MyST: :mod:`cuedeck.markdown.anchors`) where they differ.
    """

    level: int
    text: str
    slug: str
    line: int
    end_line: int
    aliases: tuple[str, ...] = ()

    def matches(self, anchor: str) -> bool:
        """Whether ``anchor`` names this heading: its text, slug or an alias, ignoring case."""
        wanted = anchor.strip().lower()
        if wanted in (self.text.lower(), self.slug.lower()):
            return True
        return any(wanted == alias.lower() for alias in self.aliases)


@attrs.frozen
class Symbol:
    """A definition in a code file: one section of a code document.

    ``name`` is qualified within the file (``Client.send``: the enclosing definitions'
    names joined with ``.``); ``kind`` is ``module``, ``class``, ``function``,
    ``method``, ``interface``, ``struct``, ``enum``, ``trait``, ``impl``, ``type``,
    ``namespace`` or another word a parser uses. ``line`` and ``end_line`` are the
    1-based, inclusive lines of the whole definition (decorators and all);
    ``sha256`` is of those lines' raw bytes, ``tokens`` their count by the index's
    counter. ``signature`` is the definition up to its body, on one line;
    ``docstring`` its documentation (docstring or the comment above), unindented.
    """

    name: str
    kind: str
    line: int
    end_line: int
    signature: str = ""
    docstring: str = ""
    sha256: str = ""
    tokens: int = 0

    @property
    def text(self) -> str:
        """The anchor that names it: its qualified name (as :attr:`Heading.text`)."""
        return self.name

    @property
    def slug(self) -> str:
        """Its qualified name again: symbols are named as written (as :attr:`Heading.slug`)."""
        return self.name

    @property
    def short_name(self) -> str:
        """The last part of the qualified name (``send`` of ``Client.send``)."""
        return self.name.rpartition(".")[2]


#: A line-range anchor: ``L120-L180``, ``L120-180`` or ``L120`` (one line).
LINE_RANGE = re.compile(r"L(\d+)(?:-L?(\d+))?")
#: Suffixes of the documents a bare ``@path`` may name without a folder (any file may be
#: named with one: ``@config/app.yaml``, or by its lines: ``@setup.cfg#L1-L9``).
DOCUMENT_SUFFIXES = ("md", "rst", "rest", "txt", "adoc", "asciidoc")


def names_path(target: str) -> bool:
    """Whether a ``refs:`` entry names a file by its path (``docs/x.rst``, ``api.md``)
    rather than by a bare name resolved like a wiki link (``api``)."""
    suffix = posixpath.splitext(target)[1]
    return bool(suffix) and ("/" in target or suffix[1:].lower() in DOCUMENT_SUFFIXES)


@attrs.frozen
class LineRange:
    """Lines of a file named by an anchor (``#L120-L180``): a section without a name.

    ``line`` and ``end_line`` are 1-based and inclusive, as for headings and symbols;
    :attr:`text` and :attr:`slug` are the canonical anchor ``L120-L180``.
    """

    line: int
    end_line: int

    @property
    def text(self) -> str:
        """The anchor that names these lines, ``L120-L180`` (``L120`` for one line)."""
        if self.line == self.end_line:
            return f"L{self.line}"
        return f"L{self.line}-L{self.end_line}"

    @property
    def slug(self) -> str:
        """The same canonical anchor."""
        return self.text

    @classmethod
    def parse(cls, anchor: str, line_count: int) -> LineRange | None:
        """The lines ``anchor`` names, if it is a line range inside a file of
        ``line_count`` lines (``L0``, a reversed range or a line past the end: None)."""
        match = LINE_RANGE.fullmatch(anchor.strip())
        if match is None:
            return None
        first = int(match.group(1))
        last = int(match.group(2) or first)
        if not 1 <= first <= last <= line_count:
            return None
        return cls(first, last)


@attrs.frozen
class Reference:
    """A reference as written in a file, before it is resolved against the workspace.

    ``kind``: ``at`` (``@doc/x``, ``@code/...``), ``frontmatter`` (``refs:``),
    ``depends_on`` and ``include`` (reStructuredText's and AsciiDoc's include
    directives) include their target in a scene; ``markdown`` (a markdown link),
    ``wiki``, ``link`` (a link or cross reference of another format) and ``label`` (a
    Sphinx ``:ref:``) are "see also"; ``import`` is a code file's import. ``target`` is
    a workspace-relative POSIX path for path-like syntaxes, a bare name for wiki links
    and a label (lower case) for ``label``; ``anchor`` is the section after ``#`` if any.
    """

    kind: ReferenceKind
    raw: str
    target: str
    anchor: str | None
    line: int

    @property
    def cites_code(self) -> bool:
        """Whether it is written ``@code/...`` (or ``code/...`` in ``refs:``)."""
        return self.raw.strip().removeprefix("@").startswith("code/")


@attrs.frozen
class Problem:
    """One finding of the parser, the config loader or ``cue doctor``."""

    severity: Severity
    code: int
    path: str | None
    line: int | None
    message: str
    help: str | None = None


@attrs.frozen
class BackgroundProcess:
    """A process that works for a workspace in the background (``cue status`` lists it).

    ``kind`` says what it is (``watcher``, ``resident MCP server``, ``embedder``);
    ``started`` is a Unix time; ``ends`` says how it ends, in a phrase that completes
    "it ends ..." (``after 15 min without a question (quiet for 2 min)``); ``detail``
    what it does now; ``log`` where it writes (a path).
    """

    kind: str
    pid: int
    started: float | None
    ends: str
    detail: str = ""
    log: str | None = None


@attrs.frozen
class Document:
    """Everything the index knows about one file, as its parser read it.

    ``path`` is workspace-relative with ``/`` separators. ``sha256`` is of the raw bytes;
    ``tokens`` is counted with the counter named by the index. Line numbers are 1-based
    and count the frontmatter. ``language`` is None for markdown and names the
    language of any other parser's document (``rst``, ``asciidoc``, ``plaintext``:
    prose, :data:`PROSE_LANGUAGES`; ``python``; ``text`` for a file read as plain
    lines); ``symbols`` are a code file's definitions, in file order, outer before
    inner.
    """

    path: str
    kind: DocumentKind
    sha256: str
    size: int
    line_count: int
    tokens: int
    title: str
    frontmatter: dict[str, Any] = attrs.field(factory=dict)
    body_line: int = 1
    headings: tuple[Heading, ...] = ()
    references: tuple[Reference, ...] = ()
    problems: tuple[Problem, ...] = ()
    language: str | None = None
    symbols: tuple[Symbol, ...] = ()

    def find_heading(self, anchor: str) -> Heading | None:
        """The first heading whose text or slug matches ``anchor`` (case-insensitive)."""
        return next((h for h in self.headings if h.matches(anchor)), None)

    def find_symbol(self, anchor: str) -> Symbol | None:
        """The symbol ``anchor`` names: its qualified name exactly, else ignoring case,
        else the one symbol whose last name part is ``anchor`` (``send`` for
        ``Client.send`` when no other symbol is called ``send``). A definition wins over
        the module of the same name (Java's ``Inventory`` class in ``Inventory.java``)."""
        wanted = anchor.strip()
        exact = [s for s in self.symbols if s.name == wanted]
        folded = exact or [s for s in self.symbols if s.name.lower() == wanted.lower()]
        if folded:
            return sorted(folded, key=lambda s: s.kind == "module")[0]
        short = [s for s in self.symbols if s.short_name == wanted]
        return short[0] if len(short) == 1 else None

    def find_section(self, anchor: str) -> Heading | Symbol | LineRange | None:
        """The heading, symbol or line range (``L120-L180``) ``anchor`` names (all have
        ``line``, ``end_line``, ``text`` and ``slug``)."""
        return (
            self.find_heading(anchor)
            or self.find_symbol(anchor)
            or LineRange.parse(anchor, self.line_count)
        )

    @property
    def prose(self) -> bool:
        """Whether it is prose (markdown, reStructuredText, AsciiDoc, plain text): its
        sections are headings, and a scene places it as text, not as code."""
        return self.language is None or self.language in PROSE_LANGUAGES

    @property
    def anchors(self) -> list[str]:
        """Every heading's text, then every symbol's qualified name, in file order."""
        return [h.text for h in self.headings] + [s.name for s in self.symbols]


@attrs.frozen
class SearchFilters:
    """Filters of a search: frontmatter (any tag, priority and assignee, case-insensitive),
    the kinds of document (``card``, ``doc``, ``file``) and code (a file's ``language``, a
    ``path`` glob, and a symbol ``kind``: only the sections of definitions of that kind
    count)."""

    tags: tuple[str, ...] = ()
    priority: str | None = None
    assignee: str | None = None
    kinds: tuple[DocumentKind, ...] = ()
    language: str | None = None
    path: str | None = None
    kind: str | None = None

    @property
    def frontmatter(self) -> bool:
        """Whether any frontmatter filter is set."""
        return bool(self.tags) or self.priority is not None or self.assignee is not None

    def admits(self, document: Document) -> bool:
        """Whether ``document`` passes the kind and frontmatter filters (the code filters
        are the searcher's: it knows each file's language and definitions)."""
        if self.kinds and document.kind not in self.kinds:
            return False
        return self.accepts(document.frontmatter)

    def accepts(self, frontmatter: dict[str, Any]) -> bool:
        """Whether a file with this frontmatter passes the frontmatter filters."""
        if self.tags:
            tags = frontmatter.get("tags") or []
            if isinstance(tags, str):
                tags = [tags]
            wanted = {t.lower() for t in self.tags}
            if not any(str(t).lower() in wanted for t in tags):
                return False
        for key in ("priority", "assignee"):
            wanted_value = getattr(self, key)
            actual = str(frontmatter.get(key) or "").lower()
            if wanted_value is not None and actual != wanted_value.lower():
                return False
        return True


@attrs.frozen
class SearchResult:
    """One file found by a search, with the sections (anchors) that matched best."""

    path: str
    title: str
    hash: str
    tokens: int
    score: float
    anchors: tuple[str, ...] = ()
    line: int | None = None
    snippet: str = ""
    keyword_score: float | None = None
    semantic_score: float | None = None
    #: Share of sections with a vector when a semantic or hybrid search ran (1.0 once
    #: every section is embedded); None for keyword searches.
    semantic_coverage: float | None = None
    #: The side that ranked the result: keyword, semantic or hybrid (a hybrid search
    #: answers by keyword until every section has a vector).
    answered_by: str | None = None


#: (De)serialises the models above; cattrs generates fast code per class.
converter = cattrs.Converter()


def _unstructure_document(cls: type[Document]) -> Any:
    """A document's ``language`` and ``symbols`` are left out while empty, so a markdown
    document is stored and printed exactly as before they existed."""
    from cattrs.gen import make_dict_unstructure_fn, override

    return make_dict_unstructure_fn(
        cls,
        converter,
        language=override(omit_if_default=True),
        symbols=override(omit_if_default=True),
    )


# Generated when a document is first unstructured: a command that only reads the index
# never compiles it.
converter.register_unstructure_hook_factory(lambda cls: cls is Document, _unstructure_document)


@attrs.frozen
class Snapshot:
    """The bytes of an indexed document as read now, with the document the index holds.

    ``sha256`` is the hash of these raw bytes, the one every write checks; when it
    differs from ``document.sha256`` the file changed since the index last read it.
    """

    document: Document
    data: bytes

    @property
    def path(self) -> str:
        """The document's workspace-relative path."""
        return self.document.path

    @property
    def sha256(self) -> str:
        """Hex sha256 of :attr:`data`."""
        import hashlib

        return hashlib.sha256(self.data).hexdigest()

    @property
    def text(self) -> str:
        """:attr:`data` as text (UTF-8, a BOM dropped, undecodable bytes replaced)."""
        return self.data.decode("utf-8-sig", errors="replace")


def replaced_bytes(path: str) -> Problem:
    """The warning of a file whose bytes were not all UTF-8 (they were replaced)."""
    return Problem(
        "warning",
        1004,
        path,
        None,
        "file is not valid UTF-8; undecodable bytes were replaced",
        "save the file as UTF-8",
    )


def document_kind(path: str) -> DocumentKind:
    """``card`` or ``doc`` for files under ``.cuedeck/``, else ``file``."""
    if path.startswith(CARDS_DIR + "/"):
        return "card"
    if path.startswith(DOCS_DIR + "/"):
        return "doc"
    return "file"
