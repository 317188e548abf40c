"""``find_symbol``: definitions by name, exact or fuzzy, filtered by kind, path and language.

A name is a definition's name or its qualified name (``wrap``, ``Text.wrap``); it may
start with the module or package the definition lives in (``rich.text.Text.wrap``,
``http.Client.Do``, ``com.acme.Cart.add``: those parts then match the file's folders and
name), and ``::``, ``#``, ``->`` and ``:`` separate parts like dots. ``exact`` finds the
definitions whose qualified name ends with the name's parts, case included; ``fuzzy``
also finds names that differ in case, start with it, contain it, abbreviate it (``pURL``
for ``parseURL``) or are a typo away. Best first: the closer match, then source before
tests, definitions before modules, the shorter name, then path and line.

The names come from the code graph (:mod:`.codegraph`, saved beside the index and kept
in memory while no code file changes), so a lookup in a large repository reads no file
but the few whose results it shows (for their signatures).
"""

from __future__ import annotations

import difflib
import posixpath
import re
from typing import TYPE_CHECKING, Annotated, Literal

import attrs
from typing_extensions import TypedDict  # pydantic needs it for TypedDicts on 3.11

from cuedeck.errors import InvalidInput

if TYPE_CHECKING:
    from collections.abc import Iterator

    import numpy as np
    import pydantic
    from numpy.typing import NDArray

    from cuedeck.workspace import Workspace
    from cuedeck_code.codegraph import CodeGraph
else:
    from cuedeck.plugins.tools import lazy_pydantic as pydantic

#: How each match is named in a result, best first (its index is its rank).
MATCHES = ("exact", "name", "case", "prefix", "substring", "abbreviation", "typo")
#: Least similarity of a typo (difflib's ratio of the lower-cased last parts).
TYPO_RATIO = 0.75
_SEPARATORS = re.compile(r"::|->|[#:/\\]")
_PART = re.compile(r"^[A-Za-z_$][\w$]*$")
#: Module files named after their folder (the folder is the module's name).
_PACKAGE_FILES = frozenset({"__init__", "index", "mod", "lib", "main"})


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


@attrs.frozen(eq=False)
class Names:
    """The graph's definitions by the last part of their name (a module by its own
    name), with what a lookup filters and sorts on."""

    graph: CodeGraph
    by_last: dict[str, list[int]]
    tests: NDArray[np.bool_]  # per definition
    languages: tuple[str, ...]  # per file


@attrs.frozen(eq=False)
class Spellings:
    """The last name parts of :class:`Names` lower-cased, joined one a line, with their
    lengths and by the pairs of letters they hold: what a fuzzy lookup scans (made on
    its first use)."""

    lasts: tuple[str, ...]
    joined: str
    starts: tuple[int, ...]  # where each line of ``joined`` starts
    lengths: NDArray[np.int64]
    pairs: dict[str, NDArray[np.int64]]

    @classmethod
    def of(cls, names: Names) -> Spellings:
        import numpy as np

        lasts = tuple(names.by_last)
        folded = [last.lower() for last in lasts]
        starts, at = [], 0
        for word in folded:
            starts.append(at)
            at += len(word) + 1
        pairs: dict[str, list[int]] = {}
        for number, word in enumerate(folded):
            for pair in {word[i : i + 2] for i in range(len(word) - 1)}:
                pairs.setdefault(pair, []).append(number)
        return cls(
            lasts,
            "\n".join(folded) + "\n",
            tuple(starts),
            np.array([len(word) for word in folded], dtype=np.int64),
            {pair: np.array(found, dtype=np.int64) for pair, found in pairs.items()},
        )

    def candidates(self, written: str) -> set[int]:
        """The last parts that may match ``written`` fuzzily: those holding it, those
        holding its letters in order from their start, and those of about its length
        sharing all but three of its pairs of letters (a typo); a superset that
        :func:`_name_match` decides on."""
        import bisect

        import numpy as np

        folded = written.lower()
        found: set[int] = set()
        spans = [re.escape(folded), "(?m)^_*" + "[^\n]*?".join(map(re.escape, folded))]
        for pattern in spans:
            for hit in re.finditer(pattern, self.joined):
                found.add(bisect.bisect_right(self.starts, hit.start()) - 1)
        own = {folded[i : i + 2] for i in range(len(folded) - 1)}
        postings = [self.pairs[pair] for pair in own if pair in self.pairs]
        if postings:
            shared = np.bincount(np.concatenate(postings), minlength=len(self.lasts))
            close = np.abs(self.lengths - len(folded)) <= 3
            least = max(1, len(own) - 3)
            found.update(np.flatnonzero(close & (shared >= least)).tolist())
        return found


def spellings_of(names: Names) -> Spellings:
    """The :class:`Spellings` of ``names`` (made once per graph)."""
    from cuedeck_code.codegraph import _memo

    return _memo(names.graph, "spellings", lambda: Spellings.of(names))


def names_of(workspace: Workspace, graph: CodeGraph) -> Names:
    """The :class:`Names` of ``graph`` (made once per graph)."""
    from cuedeck_code.codegraph import _memo
    from cuedeck_code.related_rules import tests_of

    def build() -> Names:
        by_last: dict[str, list[int]] = {}
        for number, name in enumerate(graph.names):
            by_last.setdefault(name.rpartition(".")[2], []).append(number)
        index = workspace.fresh_index()
        languages = tuple(index.language(path) or "" for path in graph.paths)
        return Names(graph, by_last, tests_of(graph), languages)

    return _memo(graph, "names", build)


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


def _qualified_match(parts: list[str], own: list[str], path: str, fold: bool) -> int | None:
    """0 when ``parts`` name a definition whole (its qualified name's parts ``own``; any
    parts before them match its file's module path), 1 when they are the last parts of
    its qualified name; None otherwise. ``fold`` compares without case."""

    def same(a: list[str], b: list[str]) -> bool:
        return [x.lower() for x in a] == [y.lower() for y in b] if fold else a == b

    if len(parts) <= len(own):
        if not same(parts, own[len(own) - len(parts) :]):
            return None
        return 0 if len(parts) == len(own) else 1
    if not same(parts[len(parts) - len(own) :], own):
        return None
    leading = parts[: len(parts) - len(own)]
    folders, modules = _module_parts(path)
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


def _name_match(written: str, last: str, fuzzy: bool) -> tuple[int, float] | None:
    """How a definition's last name part ``last`` matches the ``written`` one: its rank
    in :data:`MATCHES` (0 for the same) and a tie breaker, or None."""
    if last == written:
        return (0, 0.0)
    if not fuzzy:
        return None
    folded, other = written.lower(), last.lower()
    if other == folded:
        return (2, 0.0)
    if other.startswith(folded):
        return (3, len(other) - len(folded))
    if folded in other:
        return (4, len(other) - len(folded))
    if other.lstrip("_")[:1] == folded[:1] and _abbreviates(written, last):
        return (5, len(other) - len(folded))
    if abs(len(other) - len(folded)) <= 3:
        matcher = difflib.SequenceMatcher(None, folded, other)
        if matcher.real_quick_ratio() >= TYPO_RATIO and matcher.quick_ratio() >= TYPO_RATIO:
            ratio = matcher.ratio()
            if ratio >= TYPO_RATIO:
                return (6, 1.0 - ratio)
    return None


def _parts_of(graph: CodeGraph, number: int) -> list[str]:
    """A definition's qualified name in parts (a module's name is one part)."""
    name = graph.names[number]
    return [name] if graph.kinds[number] == "module" else name.split(".")


def _leading_fits(leading: list[str], own: list[str], path: str) -> bool:
    """Whether the parts written before the last one name, without case, what holds the
    definition: its enclosing definitions, after its file's module path."""
    if not leading:
        return True
    folders, modules = _module_parts(path)
    wanted = [part.lower() for part in leading]
    for where in ([*modules, *own[:-1]], [*folders, *own[:-1]]):
        folded = [part.lower() for part in where]
        if len(wanted) <= len(folded) and folded[len(folded) - len(wanted) :] == wanted:
            return True
    return False


def matches(names: Names, parts: list[str], fuzzy: bool) -> Iterator[tuple[int, int, float]]:
    """``(definition, rank in MATCHES, tie breaker)`` of each definition ``parts`` name."""
    graph = names.graph
    written = parts[-1]
    found: list[tuple[str, list[int]]] = [(written, names.by_last.get(written, []))]
    if fuzzy:
        spellings = spellings_of(names)
        lasts = (spellings.lasts[n] for n in sorted(spellings.candidates(written)))
        found = [(last, names.by_last[last]) for last in lasts if last != written] + found
    for last, numbers in found:
        match = _name_match(written, last, fuzzy)
        if match is None:
            continue
        for number in numbers:
            own = _parts_of(graph, number)
            path = graph.paths[graph.files[number]]
            if match[0] == 0 and (whole := _qualified_match(parts, own, path, False)) is not None:
                yield number, whole, 0.0
            elif not fuzzy:
                continue
            elif match[0] <= 2:
                if _qualified_match(parts, own, path, True) is not None:
                    yield number, 2, 0.0
            elif _leading_fits(parts[:-1], own, path):
                yield number, match[0], match[1]


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
    from cuedeck_code.related_rules import one_per_symbol

    parts = name_parts(name)
    if not parts or not all(_PART.match(part) for part in parts):
        raise InvalidInput(
            f"{name!r} is not a name: letters, digits and _ in parts joined by . (or ::, #)",
            field="name",
        )
    graph = workspace.service("code_graph").get()
    names = names_of(workspace, graph)
    wanted_kind = kind.strip().lower() if kind else None
    wanted_language = language.strip().lower() if language else None
    spec = None
    if path:
        from cuedeck.index.globs import Globs

        spec = Globs([path.strip()])
    in_glob: dict[int, bool] = {}
    scored: list[tuple[tuple[int, bool, bool, int, float, int, str, int], int, int]] = []
    for number, rank, tie in matches(names, parts, match == "fuzzy"):
        file = int(graph.files[number])
        if wanted_kind is not None and graph.kinds[number] != wanted_kind:
            continue
        if wanted_language is not None and names.languages[file] != wanted_language:
            continue
        if spec is not None:
            if file not in in_glob:
                in_glob[file] = bool(spec.match(graph.paths[file]))
            if not in_glob[file]:
                continue
        key = (
            0 if rank <= 1 else rank,  # what is written, whole or its last parts: alike
            bool(names.tests[number]),
            graph.kinds[number] == "module",
            rank,
            tie,
            len(graph.names[number]),
            graph.paths[file],
            int(graph.lines[number]),
        )
        scored.append((key, number, rank))
    scored.sort()
    ranks = {number: rank for _, number, rank in scored}
    found = one_per_symbol(graph, [number for _, number, _ in scored])
    page = found[offset : offset + limit]
    results = [
        _hit(workspace, graph, number, line, end, ranks[number]) for number, line, end in page
    ]
    has_more = len(found) > offset + limit
    return {
        "results": results,
        "total": len(found),
        "has_more": has_more,
        "next_offset": offset + len(results) if has_more else None,
        "hint": None
        if found
        else _hint(names, name, match == "fuzzy", wanted_kind, wanted_language),
    }


def _hit(
    workspace: Workspace, graph: CodeGraph, number: int, line: int, end: int, rank: int
) -> SymbolHit:
    """The result of definition ``number`` of ``graph``, its signature and doc read from
    the index, masked."""
    path = graph.paths[graph.files[number]]
    name, first = graph.names[number], int(graph.lines[number])
    document = workspace.fresh_index().get(path, counted=False)
    symbol = (
        next((s for s in document.symbols if s.line == first and s.name == name), None)
        if document is not None
        else None
    )
    session = workspace.mask_session()
    signature = symbol.signature if symbol is not None else ""
    doc = symbol.docstring.strip().split("\n", 1)[0] if symbol is not None else ""
    return {
        "path": path,
        "symbol": name,
        "kind": graph.kinds[number],
        "line": line,
        "end_line": end,
        "signature": session.mask(signature, path=path),
        "doc": session.mask(doc, path=path),
        "language": document.language or "" if document is not None else "",
        "match": MATCHES[rank],
    }


def _hint(names: Names, name: str, fuzzy: bool, kind: str | None, language: str | None) -> str:
    """Why nothing was found, and what to try."""
    kinds = sorted(set(names.graph.kinds))
    languages = sorted(set(names.languages) - {""})
    if not names.graph.names:
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
