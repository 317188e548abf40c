"""The ``code`` parser: a source file into a document whose sections are its symbols.

The file itself is a ``module`` symbol (its docstring or leading comment, every line);
each definition found by the language's query is another, with its qualified name,
kind, signature, docstring, exact lines, the sha256 of those lines' bytes and their
tokens. Imports are the document's references. A file that says it is generated, or
whose lines are minified, is passed over; one tree-sitter cannot parse cleanly is
indexed as plain text (no symbols) with a warning for ``cue doctor``.
"""

from __future__ import annotations

import hashlib
import itertools
import posixpath
from typing import TYPE_CHECKING

from cuedeck.index.parsers import SkipFile
from cuedeck.models import Document, Problem, Symbol, replaced_bytes
from cuedeck.text import decode, split_lines
from cuedeck_code.file_kinds import GENERATED_HEADER
from cuedeck_code.languages import grammar, language_of
from cuedeck_code.settings import CodeSettings

if TYPE_CHECKING:
    from collections.abc import Callable

    from cuedeck.index.parsers import ParseContext
    from cuedeck_code.symbols import Found

#: Problem code of a source file indexed as plain text (docs/errors.md).
PLAIN_TEXT = 1100
#: Files shorter than this are never judged minified (a one-line module is fine).
MINIFIED_FLOOR = 2048


def parse_code(path: str, data: bytes, context: ParseContext) -> Document:
    """The document of the source file at ``path`` (see the module docstring)."""
    text, replaced = decode(data)
    lines = split_lines(text)
    settings = context.config.section("code", CodeSettings) if context.config is not None else None
    if settings is None or settings.skip_generated:
        head = text[:4096]
        if "enerated" in head and GENERATED_HEADER.search(head):  # the cheap test first
            raise SkipFile("generated", "its first lines say it is generated")
    limit = settings.max_average_line if settings is not None else 200
    if limit and len(data) > MINIFIED_FLOOR and len(data) / max(len(lines), 1) > limit:
        raise SkipFile("minified", f"its lines average over {limit} characters")
    language = language_of(path)
    problems: list[Problem] = [replaced_bytes(path)] if replaced else []
    tokens = context.count_tokens(text)
    base = Document(
        path=path,
        kind="file",
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
        line_count=len(lines),
        tokens=tokens,
        title=posixpath.basename(path),
        language=language.name if language is not None else "text",
        problems=tuple(problems),
    )
    if language is None:
        return base
    found_grammar = grammar(language.name)
    tree = found_grammar.parser.parse(data)
    if tree.root_node.has_error:
        line = _first_error(tree.root_node)
        note = Problem(
            "warning",
            PLAIN_TEXT,
            path,
            line,
            f"indexed as plain text: {language.name} syntax error near line {line}",
            "fix the syntax (or check the file is really "
            f"{language.name}); its definitions are searchable once it parses",
        )
        return _evolve(base, problems=(*problems, note))
    import tree_sitter

    from cuedeck_code.imports import imports
    from cuedeck_code.symbols import definitions

    # One run of the query gives both the definitions and the imports.
    matches = tree_sitter.QueryCursor(found_grammar.query).matches(tree.root_node)
    found = definitions(found_grammar, matches, data)
    starts = _line_starts(data)
    tokens_of = _chunk_tokens(found, data, starts, context)
    symbols = [_module(base, found_grammar.language.name, tree, data, text)]
    symbols += [_symbol(f, data, starts, tokens_of(f.line, f.end_line)) for f in found]
    nodes = [captures["import"][0] for _, captures in matches if "import" in captures]
    references = imports(found_grammar, nodes, data, path, context.paths)
    return _evolve(base, symbols=tuple(symbols), references=tuple(references))


def _evolve(document: Document, **changes: object) -> Document:
    import attrs

    return attrs.evolve(document, **changes)  # type: ignore[arg-type]


def _first_error(node: object) -> int:
    """The line of the first ERROR or missing node under ``node``."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "ERROR" or current.is_missing:  # type: ignore[attr-defined]
            return int(current.start_point[0]) + 1  # type: ignore[attr-defined]
        children = [c for c in current.children if c.has_error or c.is_missing]  # type: ignore[attr-defined]
        stack.extend(reversed(children))
    return 1


def _line_starts(data: bytes) -> list[int]:
    """Byte offset of the start of each line (1-based line n starts at ``starts[n - 1]``),
    and the length of the data at the end."""
    starts = [0]
    position = data.find(b"\n")
    while position != -1:
        starts.append(position + 1)
        position = data.find(b"\n", position + 1)
    if starts[-1] != len(data):
        starts.append(len(data))
    return starts


def _chunk_tokens(
    found: list[Found], data: bytes, starts: list[int], context: ParseContext
) -> Callable[[int, int], int]:
    """``tokens(line, end_line)`` of any definition's lines, counting each stretch of the
    file between two definition boundaries once (a class and its methods share theirs).
    The counters split text at line ends, so the sum is the count of the whole but for a
    token that would span a boundary (a run of blank lines, at most one token each)."""
    total = len(starts) - 1
    cuts = sorted({1, total + 1, *(f.line for f in found), *(f.end_line + 1 for f in found)})
    cuts = [c for c in cuts if 1 <= c <= total + 1]
    position = {line: index for index, line in enumerate(cuts)}
    sums = [0]
    for first, stop in itertools.pairwise(cuts):
        chunk = data[starts[first - 1] : starts[min(stop - 1, total)]]
        sums.append(sums[-1] + context.count_tokens(chunk.decode("utf-8", errors="replace")))

    def tokens(line: int, end_line: int) -> int:
        return sums[position[min(end_line + 1, total + 1)]] - sums[position[line]]

    return tokens


def _symbol(found: Found, data: bytes, starts: list[int], tokens: int) -> Symbol:
    first = starts[found.line - 1]
    last = starts[min(found.end_line, len(starts) - 1)]
    return Symbol(
        name=found.name,
        kind=found.kind,
        line=found.line,
        end_line=found.end_line,
        signature=found.signature,
        docstring=found.docstring,
        sha256=hashlib.sha256(data[first:last]).hexdigest(),
        tokens=tokens,
    )


def _module(document: Document, language: str, tree: object, data: bytes, text: str) -> Symbol:
    """The file as a ``module`` symbol, named as it is imported (``models``, or the
    folder's name for ``__init__.py``, ``index.ts``, ``mod.rs``...)."""
    stem, _ = posixpath.splitext(posixpath.basename(document.path))
    if stem in ("__init__", "index", "mod", "lib", "main") and "/" in document.path:
        stem = posixpath.basename(posixpath.dirname(document.path))
    return Symbol(
        name=stem,
        kind="module",
        line=1,
        end_line=max(document.line_count, 1),
        signature="",
        docstring=_module_docstring(language, tree, data),
        sha256=document.sha256,
        tokens=document.tokens,
    )


def _module_docstring(language: str, tree: object, data: bytes) -> str:
    """Python's module docstring, else the comment block the file starts with."""
    from cuedeck_code.symbols import _clean_comment, _clean_string

    root = tree.root_node  # type: ignore[attr-defined]
    children = root.named_children
    if not children:
        return ""
    first = children[0]
    if language == "python":
        if first.type == "expression_statement" and first.named_children:
            string = first.named_children[0]
            if string.type == "string":
                return _clean_string(
                    data[string.start_byte : string.end_byte].decode("utf-8", "replace")
                )
        return ""
    comments = []
    for child in children:
        if "comment" not in child.type:
            break
        comments.append(data[child.start_byte : child.end_byte].decode("utf-8", "replace"))
    return _clean_comment("\n".join(comments))
