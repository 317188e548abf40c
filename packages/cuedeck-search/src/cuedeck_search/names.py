"""Exact names: a query that is a definition's name ranks that definition first.

A query such as ``Text.wrap``, ``Console.print``, ``parseURL``, ``http.Client.Do`` or
``Parser::parse`` is a name (one identifier, or identifiers joined by ``.``, ``::`` or
``#``). BM25F alone ranks by how often the words occur, so a test calling ``Text.wrap``
ten times can pass the method that defines it. When the query is a name, the code files
the keyword side ranks highest (the defining file is among them: the name is in its
definition's heading, weighted three times) are looked up for a definition called that:

1. the qualified name itself (``Text.wrap``), with its case;
2. a name ending with it (``wrap`` finds ``Text.wrap``; ``Client.Do`` finds it in any
   file);
3. the query less a leading package or module path that the file's path holds
   (``http.Client.Do`` finds ``Client.Do`` in ``src/net/http/client.go``);

then the same, ignoring case and leading underscores. The first kind that finds anything
wins; its definitions come first, in the keyword side's order (a stub's, ``x.pyi`` or
``x.d.ts``, after the module's it declares), each with its own section as the file's
best anchor.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np

from cuedeck.index.file_kinds import stub_modules

if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from numpy.typing import NDArray

    from cuedeck.index.parsed import Index
    from cuedeck.models import Document
    from cuedeck_search.catalog import Catalog

#: Code files (best first on the keyword side) searched for the definition.
CANDIDATES = 20
_NAME = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::|#)[A-Za-z_$][\w$]*)*")


def as_name(query: str) -> str | None:
    """``query`` as a qualified name (``::`` and ``#`` written ``.``), or None when it is
    not one."""
    text = query.strip().strip("`").removesuffix("()")
    if not text or not _NAME.fullmatch(text):
        return None
    return text.replace("::", ".").replace("#", ".")


def matches(name: str, documents: Iterable[tuple[int, Document]]) -> list[tuple[int, int]]:
    """``(document, line)`` of each definition called ``name`` in ``documents`` (given
    best first), by the first kind of match (see the module docstring) that finds one."""
    found = [
        (doc, symbol.name, symbol.line, document.path)
        for doc, document in documents
        for symbol in document.symbols
        if symbol.kind != "module"
    ]
    for fold in (False, True):
        wanted = _folded(name) if fold else name
        # Only names sharing the query's last part can match any kind.
        tail = wanted.rsplit(".", 1)[-1]
        near = [
            (doc, _folded(symbol) if fold else symbol, line, path)
            for doc, symbol, line, path in found
            if (_folded(symbol) if fold else symbol).endswith(tail)
        ]
        for kind in range(3):
            hits = [
                (doc, line)
                for doc, symbol, line, path in near
                if _match(kind, symbol, wanted, path)
            ]
            if hits:
                # A module's definition before its stub's (x.py before x.pyi), else in order.
                stubs = {doc for doc, _, _, path in near if stub_modules(path)}
                return sorted(hits, key=lambda hit: hit[0] in stubs)
    return []


def _folded(name: str) -> str:
    """``name`` in lower case, each part without leading underscores (``_Wrapper.flush``
    is found as ``wrapper.flush``)."""
    return ".".join(part.lstrip("_") for part in name.lower().split("."))


def _match(kind: int, symbol: str, wanted: str, path: str) -> bool:
    if kind == 0:
        return symbol == wanted
    if kind == 1:
        return symbol.endswith("." + wanted)
    if not wanted.endswith("." + symbol):
        return False
    prefix = wanted[: -len(symbol) - 1].lower().split(".")
    folder = path.lower().replace("\\", "/")
    return all(part in folder for part in prefix)


def named_sections(
    catalog: Catalog, index: Index, name: str, files: NDArray[np.floating[Any]]
) -> list[int]:
    """The sections (catalog numbering) of the definitions called ``name`` among the
    ``CANDIDATES`` code files best by ``files``, best first."""
    code = np.flatnonzero(catalog.code_docs & (files > 0))
    code = code[np.argsort(-files[code], kind="stable")][:CANDIDATES]
    documents = [
        (doc, document)
        for doc in code.tolist()
        if (document := index.get(catalog.keys[doc][0], counted=False)) is not None
    ]
    found = []
    for doc, line in matches(name, documents):
        first, end = int(catalog.starts[doc]), int(catalog.ends[doc])
        lines = catalog.section_lines[first:end]
        inside = np.flatnonzero((lines[:, 0] <= line) & (line <= lines[:, 1]))
        if len(inside):
            found.append(first + int(inside[-1]))  # its own section: the last one holding it
    return list(dict.fromkeys(found))
