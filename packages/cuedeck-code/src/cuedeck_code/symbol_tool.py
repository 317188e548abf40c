"""``find_symbol``: definitions by name, exact or fuzzy, filtered by kind, path and language.

A name is a definition's name or its qualified name (``wrap``, ``Text.wrap``); it may
start with the module or package the definition lives in (``rich.text.Text.wrap``,
``http.Client.Do``, ``com.acme.Cart.add``: those parts then match the file's folders and
name), and ``::``, ``#``, ``->`` and ``:`` separate parts like dots. ``exact`` finds the
definitions whose qualified name ends with the name's parts, case included; ``fuzzy``
also finds names that differ in case, start with it, contain it, abbreviate it (``pURL``
for ``parseURL``) or are a typo away. Best first: the closer match, then source before
tests, definitions before modules, the shorter name, then path and line.

The names come from the index (every code file's symbols), kept in memory while no code
file changes, so a lookup in a large repository scans no file.
"""

from __future__ import annotations

import difflib
import posixpath
import re
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Annotated, Literal

import attrs
from typing_extensions import TypedDict  # pydantic needs it for TypedDicts on 3.11

from cuedeck.errors import InvalidInput

if TYPE_CHECKING:
    from collections.abc import Iterator

    import pydantic

    from cuedeck.workspace import Workspace
else:
    from cuedeck.serving.tools import lazy_pydantic as pydantic

#: How each match is named in a result, best first (its index is its rank).
MATCHES = ("exact", "name", "case", "prefix", "substring", "abbreviation", "typo")
#: Least similarity of a typo (difflib's ratio of the lower-cased last parts).
TYPO_RATIO = 0.75
_SEPARATORS = re.compile(r"::|->|[#:/\\]")
_PART = re.compile(r"^[A-Za-z_$][\w$]*$")
#: Module files named after their folder (the folder is the module's name).
_PACKAGE_FILES = frozenset({"__init__", "index", "mod", "lib", "main"})
#: Symbol tables by (root, key of the code files), a few workspaces at once.
_TABLES: OrderedDict[tuple[str, str], SymbolTable] = OrderedDict()
_TABLES_LOCK = threading.Lock()


class SymbolHit(TypedDict):
    """One definition found."""

    path: str
    symbol: str
    kind: str
    line: int
    end_line: int
    signature: str
    doc: str
    language: str
    match: str


class SymbolResults(TypedDict):
    """What ``find_symbol`` returns."""

    results: list[SymbolHit]
    total: int
    has_more: bool
    next_offset: int | None
    hint: str | None


@attrs.frozen
class Definition:
    """A definition of the table: where it is and what it is."""

    path: str
    name: str
    kind: str
    line: int
    end_line: int
    signature: str
    doc: str
    language: str
    test: bool


@attrs.frozen(eq=False)
class SymbolTable:
    """Every definition of the workspace's code files, with lookups by last name part."""

    definitions: tuple[Definition, ...]
    by_last: dict[str, list[int]]
    by_folded: dict[str, list[int]]

    @classmethod
    def of(cls, workspace: Workspace, keys: list[tuple[str, str]]) -> SymbolTable:
        """The table of the code files ``keys`` (path, sha256) of the index."""
        from cuedeck_code.file_kinds import is_test

        index = workspace.fresh_index()
        paths = [path for path, _ in keys]
        index.fetch(paths)
        found: list[Definition] = []
        for path in paths:
            document = index.get(path, counted=False)
            if document is None:
                continue
            language = document.language or ""
            for symbol in document.symbols:
                found.append(
                    Definition(
                        path=path,
                        name=symbol.name,
                        kind=symbol.kind,
                        line=symbol.line,
                        end_line=symbol.end_line,
                        signature=symbol.signature,
                        doc=symbol.docstring.strip().split("\n", 1)[0],
                        language=language,
                        test=is_test(path, symbol.name),
                    )
                )
        found = _one_per_name(found)
        by_last: dict[str, list[int]] = {}
        by_folded: dict[str, list[int]] = {}
        for number, definition in enumerate(found):
            last = definition.name.rpartition(".")[2]
            by_last.setdefault(last, []).append(number)
            by_folded.setdefault(last.lower(), []).append(number)
        return cls(tuple(found), by_last, by_folded)


def _one_per_name(found: list[Definition]) -> list[Definition]:
    """``found`` (file by file, in file order) with the definitions of one name that
    follow each other in a file (a property and its setter, overloads: nothing but what
    they hold between them) made one, spanning them."""
    kept: list[Definition] = []
    last_of: dict[tuple[str, str], int] = {}  # (path, name) -> its entry in kept
    for definition in found:
        key = (definition.path, definition.name)
        at = last_of.get(key)
        if at is not None and definition.kind != "module":
            previous = kept[at]
            between = kept[at + 1 :]
            if all(other.line <= previous.end_line for other in between):
                kept[at] = attrs.evolve(
                    previous, end_line=max(previous.end_line, definition.end_line)
                )
                continue
        last_of[key] = len(kept)
        kept.append(definition)
    return kept


def symbol_table(workspace: Workspace) -> SymbolTable:
    """The workspace's table, built when a code file changed since the last one."""
    from cuedeck_code.codegraph import code_keys, graph_key

    keys = code_keys(workspace)
    cache_key = (str(workspace.root), graph_key(keys))
    with _TABLES_LOCK:
        table = _TABLES.get(cache_key)
        if table is not None:
            _TABLES.move_to_end(cache_key)
            return table
    table = SymbolTable.of(workspace, keys)
    with _TABLES_LOCK:
        _TABLES[cache_key] = table
        while len(_TABLES) > 4:
            _TABLES.popitem(last=False)
    return table


def name_parts(name: str) -> list[str]:
    """The parts of a written name: ``rich.text.Text.wrap()`` -> rich, text, Text, wrap."""
    cleaned = _SEPARATORS.sub(".", name.strip()).removesuffix("()").strip(".")
    return [part for part in cleaned.split(".") if part]


def _module_parts(path: str) -> tuple[list[str], list[str]]:
    """A file's folders, and its folders with its module name (the stem, unless the
    file is named after its folder: ``__init__.py``, ``index.ts``, ``mod.rs``...)."""
    *folders, name = path.split("/")
    stem = posixpath.splitext(name)[0]
    return folders, folders if stem in _PACKAGE_FILES else [*folders, stem]


def _qualified_match(parts: list[str], definition: Definition, fold: bool) -> int | None:
    """0 when ``parts`` name the definition whole (any parts before its own name match
    its file's module path), 1 when they are the last parts of its qualified name;
    None otherwise. ``fold`` compares without case."""
    own = definition.name.split(".") if definition.kind != "module" else [definition.name]

    def same(a: list[str], b: list[str]) -> bool:
        return [x.lower() for x in a] == [y.lower() for y in b] if fold else a == b

    if len(parts) <= len(own):
        if not same(parts, own[len(own) - len(parts) :]):
            return None
        return 0 if len(parts) == len(own) else 1
    if not same(parts[len(parts) - len(own) :], own):
        return None
    leading = parts[: len(parts) - len(own)]
    folders, modules = _module_parts(definition.path)
    for where in (modules, folders):
        if len(leading) <= len(where) and same(leading, where[len(where) - len(leading) :]):
            return 0
    return None


_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def _abbreviates(short: str, name: str) -> bool:
    """Whether ``short`` is made of the starts of ``name``'s words, in order, two words
    at least (``pURL`` and ``purl`` of ``parseURL``, ``gcs`` of ``get_cell_size``)."""
    words = [w.lower() for w in _WORDS.findall(name)]
    wanted = short.lower()
    if len(words) < 2 or not wanted:
        return False

    def fits(at: int, word: int, used: int) -> bool:
        if at == len(wanted):
            return used >= 2
        if word == len(words):
            return False
        for size in range(min(len(words[word]), len(wanted) - at), 0, -1):
            if wanted[at : at + size] == words[word][:size] and fits(at + size, word + 1, used + 1):
                return True
        return fits(at, word + 1, used)

    return fits(0, 0, 0)


def _name_match(written: str, last: str) -> tuple[int, float] | None:
    """How a definition's last name part ``last`` matches the ``written`` one: its rank
    in :data:`MATCHES` (0 for the same) and a tie breaker, or None."""
    if last == written:
        return (0, 0.0)
    folded, other = written.lower(), last.lower()
    if other == folded:
        return (2, 0.0)
    if other.startswith(folded):
        return (3, len(other) - len(folded))
    if folded in other:
        return (4, len(other) - len(folded))
    letters = iter(other)
    if all(char in letters for char in folded) and _abbreviates(written, last):
        return (5, len(other) - len(folded))
    if abs(len(other) - len(folded)) <= 3:
        matcher = difflib.SequenceMatcher(None, folded, other)
        if matcher.real_quick_ratio() >= TYPO_RATIO and matcher.quick_ratio() >= TYPO_RATIO:
            ratio = matcher.ratio()
            if ratio >= TYPO_RATIO:
                return (6, 1.0 - ratio)
    return None


def _leading_fits(leading: list[str], definition: Definition) -> bool:
    """Whether the parts written before the last one name, without case, what holds the
    definition: its enclosing definitions, after its file's module path."""
    if not leading:
        return True
    folders, modules = _module_parts(definition.path)
    qualifier = definition.name.split(".")[:-1] if definition.kind != "module" else []
    wanted = [part.lower() for part in leading]
    for where in ([*modules, *qualifier], [*folders, *qualifier]):
        folded = [part.lower() for part in where]
        if len(wanted) <= len(folded) and folded[len(folded) - len(wanted) :] == wanted:
            return True
    return False


def matches(table: SymbolTable, parts: list[str], fuzzy: bool) -> Iterator[tuple[int, int, float]]:
    """``(definition, rank in MATCHES, tie breaker)`` of each definition ``parts`` name."""
    written = parts[-1]
    names = table.by_last.items() if fuzzy else [(written, table.by_last.get(written, []))]
    for last, numbers in names:
        found = _name_match(written, last)
        if found is None:
            continue
        for number in numbers:
            definition = table.definitions[number]
            if (
                found[0] == 0
                and (whole := _qualified_match(parts, definition, fold=False)) is not None
            ):
                yield number, whole, 0.0
            elif not fuzzy:
                continue
            elif found[0] <= 2:
                if _qualified_match(parts, definition, fold=True) is not None:
                    yield number, 2, 0.0
            elif _leading_fits(parts[:-1], definition):
                yield number, found[0], found[1]


def find_symbol(
    workspace: Workspace,
    name: Annotated[
        str,
        pydantic.Field(
            description="A name or qualified name: wrap, Text.wrap, http.Client.Do",
            min_length=1,
            max_length=300,
        ),
    ],
    match: Literal["exact", "fuzzy"] = "exact",
    kind: Annotated[
        str | None, pydantic.Field(description="e.g. class, function, method", max_length=50)
    ] = None,
    path: Annotated[
        str | None, pydantic.Field(description="Glob, e.g. src/**", max_length=500)
    ] = None,
    language: Annotated[
        str | None, pydantic.Field(description="e.g. python", max_length=50)
    ] = None,
    limit: Annotated[int, pydantic.Field(ge=1, le=100)] = 20,
    offset: Annotated[int, pydantic.Field(description="next_offset", ge=0, le=10_000)] = 0,
) -> SymbolResults:
    """Find definitions by name or qualified name; each with its path, lines and signature.

    exact (the default) matches the qualified name's last parts, case included (wrap
    finds Text.wrap; rich.text.Text.wrap and http.Client.Do match the package by path);
    fuzzy also finds other cases, prefixes, substrings, abbreviations and typos. Filter
    by kind, path glob and language; follow next_offset while has_more. The symbol is an
    anchor for read_doc and get_file_content.
    """
    parts = name_parts(name)
    if not parts or not all(_PART.match(part) for part in parts):
        raise InvalidInput(
            f"{name!r} is not a name: letters, digits and _ in parts joined by . (or ::, #)",
            field="name",
        )
    table = symbol_table(workspace)
    wanted_kind = kind.strip().lower() if kind else None
    wanted_language = language.strip().lower() if language else None
    spec = None
    if path:
        from cuedeck.index.walk import Globs

        spec = Globs([path.strip()])
    fuzzy = match == "fuzzy"
    scored: list[tuple[tuple[int, float, bool, bool, int, str, int], int, int]] = []
    for number, rank, tie in matches(table, parts, fuzzy):
        definition = table.definitions[number]
        if wanted_kind is not None and definition.kind != wanted_kind:
            continue
        if wanted_language is not None and definition.language != wanted_language:
            continue
        if spec is not None and not spec.match(definition.path):
            continue
        key = (
            rank,
            tie,
            definition.test,
            definition.kind == "module",
            len(definition.name),
            definition.path,
            definition.line,
        )
        scored.append((key, number, rank))
    scored.sort()
    page = scored[offset : offset + limit]
    results: list[SymbolHit] = []
    session = workspace.mask_session()
    for _, number, matched in page:
        definition = table.definitions[number]
        results.append(
            {
                "path": definition.path,
                "symbol": definition.name,
                "kind": definition.kind,
                "line": definition.line,
                "end_line": definition.end_line,
                "signature": session.mask(definition.signature, path=definition.path),
                "doc": session.mask(definition.doc, path=definition.path),
                "language": definition.language,
                "match": MATCHES[matched],
            }
        )
    has_more = len(scored) > offset + limit
    return {
        "results": results,
        "total": len(scored),
        "has_more": has_more,
        "next_offset": offset + len(results) if has_more else None,
        "hint": None if scored else _hint(table, name, fuzzy, wanted_kind, wanted_language),
    }


def _hint(
    table: SymbolTable, name: str, fuzzy: bool, kind: str | None, language: str | None
) -> str:
    """Why nothing was found, and what to try."""
    kinds = sorted({d.kind for d in table.definitions})
    languages = sorted({d.language for d in table.definitions})
    if not table.definitions:
        return "No code is indexed (`cue index` lists the languages indexed)."
    if kind is not None and kind not in kinds:
        return f"No definition is of kind {kind!r}; kinds here: {', '.join(kinds)}."
    if language is not None and language not in languages:
        return f"No indexed code is in {language!r}; languages here: {', '.join(languages)}."
    if not fuzzy:
        return (
            f"No definition is named {name!r}: try a fuzzy match (match=fuzzy; cue find "
            "--fuzzy), or search_code for words."
        )
    return f"Nothing is named like {name!r}: try search_code for words, or regex_search."
