"""``search_code``: definitions ranked for a query, by keyword, meaning or both.

It ranks the sections of code files with the workspace's search engine (cuedeck-search):
BM25F over identifiers split into words (``parseURL`` is parse, url) and the model's
similarity of a definition's signature, docstring and head of body, each scaled to
[0, 1] and added for ``hybrid`` with the workspace's hybrid weights (the semantic side
weighs less on code). The keyword side counts a definition's file too, and demotes
tests, as the engine does for files (cuedeck_search.code_files). Each hit is one
symbol (a stretch of code between definitions counts for the definition around it, or
the module), with its lines and signature. As
``read_context`` does, it says which side answered: a hybrid search ranks by keyword
until every section has a vector, and a semantic one falls back to keyword while no code
it may return has one.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Annotated, Any, Literal

from typing_extensions import TypedDict  # pydantic needs it for TypedDicts on 3.11

from cuedeck.errors import InvalidInput, MissingExtra
from cuedeck.models import PROSE_LANGUAGES
from cuedeck.watch.reflects import Reflects, reflects

if TYPE_CHECKING:
    import pydantic

    from cuedeck.models import Document, Symbol
    from cuedeck.workspace import Workspace
else:
    from cuedeck.plugins.tools import lazy_pydantic as pydantic

#: The code-indexer specification's names of the modes (``search_mode``).
SPEC_MODES = {"semantic": "semantic", "fts": "keyword", "hybrid": "hybrid"}
#: Which documents pass a filter, by (engine, index generation, size, language, glob).
_ALLOWED: OrderedDict[tuple[Any, ...], Any] = OrderedDict()


class CodeHit(TypedDict):
    """One symbol found."""

    path: str
    symbol: str
    kind: str
    line: int
    end_line: int
    signature: str
    doc: str
    language: str
    score: float
    keyword_score: float | None
    semantic_score: float | None


class CodeResults(TypedDict):
    """What ``search_code`` returns."""

    results: list[CodeHit]
    has_more: bool
    next_offset: int | None
    answered_by: str
    semantic_coverage: float | None
    hint: str | None
    reflects: Reflects


def search_code(
    workspace: Workspace,
    query: Annotated[
        str, pydantic.Field(description="Words or identifiers", min_length=1, max_length=500)
    ],
    mode: Literal["keyword", "semantic", "hybrid"] = "hybrid",
    language: Annotated[
        str | None, pydantic.Field(description="e.g. python", max_length=50)
    ] = None,
    path: Annotated[
        str | None, pydantic.Field(description="Glob, e.g. src/**", max_length=500)
    ] = None,
    kind: Annotated[str | None, pydantic.Field(description="e.g. method", max_length=50)] = None,
    limit: Annotated[int, pydantic.Field(ge=1, le=100)] = 10,
    offset: Annotated[int, pydantic.Field(description="next_offset", ge=0, le=1000)] = 0,
    search_mode: Annotated[
        Literal["semantic", "fts", "hybrid"] | None,
        pydantic.Field(description="The specification's name for mode (fts: keyword)"),
    ] = None,
) -> CodeResults:
    """Search code symbols by keyword, meaning or both; each a path, name and lines.

    The symbol's qualified name (Client.send) is an anchor for read_doc and
    get_file_content. search_mode (semantic, fts, hybrid) is the specification's name
    for mode. Filter by language, path glob and kind (class, function,
    method...); follow next_offset while has_more.
    """
    import numpy as np

    from cuedeck.plugins.services import SearchService

    if search_mode is not None:
        spec_mode = SPEC_MODES[search_mode]
        if mode != "hybrid" and mode != spec_mode:
            raise InvalidInput(
                f"mode={mode!r} and search_mode={search_mode!r} disagree: give one",
                field="search_mode",
            )
        mode = spec_mode  # type: ignore[assignment]
    if not query.strip():
        raise InvalidInput("the query is empty", field="query")
    try:
        engine = workspace.service(SearchService)
    except MissingExtra as exc:
        raise MissingExtra.needs("search_code needs cuedeck-search", "search") from exc
    index = workspace.fresh_index()
    with engine.held() as catalog:  # a background embedder may be adding vectors
        key = (id(engine), index.generation, len(catalog.keys), language, path)
        documents = _ALLOWED.get(key)
        if documents is None:  # the same filters on the same index: the same documents
            documents = _allowed_documents(workspace, catalog.keys, language, path)
            _ALLOWED[key] = documents
            while len(_ALLOWED) > 16:
                _ALLOWED.popitem(last=False)
        sections = catalog.live_sections & documents[catalog.section_doc]
        scored = engine.section_scores(query, mode)
        keyword, semantic, answered_by = scored.keyword, scored.semantic, scored.answered_by
        if getattr(scored, "definitions", None) is not None:
            keyword = scored.definitions  # with its file's evidence, tests demoted
        if semantic is not None and not (sections & (semantic > -1.0)).any():
            semantic, answered_by = None, "keyword"  # no code to rank by meaning yet
        weight = float(getattr(scored, "semantic_weight", 0.5))
        score = _score(answered_by, keyword, semantic, sections, weight)
        order = np.flatnonzero(sections & (score > 0))
        order = order[np.argsort(-score[order], kind="stable")]
        named = np.asarray([s for s in getattr(scored, "named", ()) if sections[s]], dtype=int)
        if len(named):  # the definitions the query names come first
            order = np.concatenate([named, order[~np.isin(order, named)]])
        hits: list[CodeHit] = []
        seen: set[tuple[str, str]] = set()
        wanted = offset + limit + 1
        for section_id in order.tolist():
            doc = int(catalog.section_doc[section_id])
            doc_path = catalog.keys[doc][0]
            local = section_id - int(catalog.starts[doc])
            section = catalog.section(doc, local)
            document = index.get(doc_path, counted=False)
            if document is None or section is None:
                continue
            symbol = _symbol_of(document, section.anchor, section.end_line)
            if symbol is not None and symbol.kind != "module":
                # A stub's definition stands for its implementation's: one entry.
                document, symbol = _implementation(index, document, symbol)
            if symbol is None or (kind is not None and symbol.kind != kind.lower()):
                continue
            if (document.path, symbol.name) in seen:
                continue  # one entry per qualified name per file (a getter and setter...)
            seen.add((document.path, symbol.name))
            hits.append(
                _hit(document, symbol, score[section_id], keyword[section_id], semantic, section_id)
            )
            if len(hits) == wanted:
                break
    page = hits[offset : offset + limit]
    has_more = len(hits) > offset + limit
    hint = None
    if not hits:
        if not documents.any():
            hint = (
                "No indexed code matches the language and path filters "
                "(`cue index` lists the languages indexed)."
            )
        else:
            hint = (
                "Nothing matched: try other words, mode=semantic, or regex_search for exact text."
            )
    elif answered_by != mode:
        hint = (
            f"Ranked by keyword: {scored.coverage or 0:.0%} of sections have a vector so far "
            "(embedding goes on in the background); ask again for a ranking by meaning."
        )
    return {
        "results": page,
        "has_more": has_more,
        "next_offset": offset + len(page) if has_more else None,
        "answered_by": answered_by,
        "semantic_coverage": scored.coverage,
        "hint": hint,
        "reflects": reflects(workspace),
    }


def _allowed_documents(
    workspace: Workspace, keys: list[tuple[str, str]], language: str | None, glob: str | None
) -> Any:
    """Per document of the engine: whether it is code passing the filters."""
    import numpy as np

    index = workspace.index
    spec = None
    if glob:
        from cuedeck.index.globs import Globs

        spec = Globs.of_arguments([glob.strip()], field="path")
    wanted = language.lower() if language else None
    allowed = np.zeros(len(keys), dtype=bool)
    for position, (doc_path, _) in enumerate(keys):
        found = index.language(doc_path)
        if found is None or found == "text" or found in PROSE_LANGUAGES:
            continue
        if wanted is not None and found != wanted:
            continue
        if spec is not None and not spec.match(doc_path):
            continue
        allowed[position] = True
    return allowed


def _score(mode: str, keyword: Any, semantic: Any, allowed: Any, weight: float) -> Any:
    """Each section's score: keyword, semantic, or both scaled to [0, 1] over the allowed
    sections and added, the semantic side weighing ``weight`` (the workspace's hybrid
    weight: less on code, where it ranks definitions worse; on the tuning repositories
    of benchmarks/code_cases.py, Acc@5 0.335 against 0.257 for the equal reciprocal rank
    fusion it replaces)."""
    import numpy as np

    if mode == "keyword" or semantic is None:
        return np.where(allowed, keyword, 0.0)
    if mode == "semantic":
        return np.where(allowed & (semantic > -1.0), semantic + 1.0, 0.0)  # cosine to (0, 2]
    matched = allowed & (keyword > 0)
    best = float(keyword[matched].max()) if matched.any() else 0.0
    keyword_part = np.where(matched, keyword / best, 0.0) if best > 0 else np.zeros(len(keyword))
    present = allowed & (semantic > -1.0)
    semantic_part = np.zeros(len(keyword), dtype=np.float64)
    if present.any():
        low, high = float(semantic[present].min()), float(semantic[present].max())
        span = high - low
        semantic_part = np.where(present, (semantic - low) / span if span > 0 else 1.0, 0.0)
    return np.where(allowed, (1.0 - weight) * keyword_part + weight * semantic_part, 0.0)


def _symbol_of(document: Document, anchor: str | None, line: int) -> Symbol | None:
    """The symbol a section belongs to: the definition called ``anchor`` around ``line``
    (the section's last: its first may be a comment above it; a module and a function
    may share a name, a getter and its setter do), else the first so called; the module
    for code outside any definition."""
    if anchor is not None:
        named = [s for s in document.symbols if s.name == anchor and s.kind != "module"]
        around = [s for s in named if s.line <= line <= s.end_line]
        if around or named:
            return (around or named)[0]
    return next((s for s in document.symbols if s.kind == "module"), None)


def _implementation(index: Any, document: Document, symbol: Symbol) -> tuple[Document, Symbol]:
    """For a definition of a stub (``x.pyi``, ``x.d.ts``), the same-named definition of
    the module it describes (``x.py``, ``x.ts`` or ``x.js``) when that is indexed; else
    the definition itself."""
    from cuedeck.index.file_kinds import stub_modules

    for path in stub_modules(document.path):
        found = index.get(path, counted=False)
        if found is not None:
            same = next((s for s in found.symbols if s.name == symbol.name), None)
            if same is not None and same.kind != "module":
                return found, same
    return document, symbol


def _hit(
    document: Document,
    symbol: Symbol,
    score: float,
    keyword: float,
    semantic: Any,
    section_id: int,
) -> CodeHit:
    return {
        "path": document.path,
        "symbol": symbol.name,
        "kind": symbol.kind,
        "line": symbol.line,
        "end_line": symbol.end_line,
        "signature": symbol.signature,
        "doc": symbol.docstring.split("\n", 1)[0],
        "language": document.language or "",
        "score": round(float(score), 6),
        "keyword_score": round(float(keyword), 6),
        "semantic_score": None if semantic is None else round(float(semantic[section_id]), 6),
    }
