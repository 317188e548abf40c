"""Search filters over the catalog: which documents a query may answer with, and which
of a file's sections count under a ``kind`` filter."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from cuedeck.models import SearchFilters

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from cuedeck.index.parsed import Index
    from cuedeck_search.catalog import Catalog


def allowed_documents(catalog: Catalog, index: Index, filters: SearchFilters) -> NDArray[np.bool_]:
    """Per document: whether it is live and passes the filters (a ``kind`` filter keeps
    the files defining something of that kind)."""
    live = catalog.live_docs
    if filters == SearchFilters():
        return live
    from cuedeck.index.globs import Globs

    spec = Globs([filters.path.strip()]) if filters.path else None
    language = filters.language.strip().lower() if filters.language else None
    kind = filters.kind.strip().lower() if filters.kind else None

    def accepts(path: str) -> bool:
        if spec is not None and not spec.match(path):
            return False
        if language is not None and index.language(path) != language:
            return False
        if not filters.frontmatter and not filters.kinds and kind is None:
            return True
        document = index.get(path, counted=False)
        if document is None or not filters.admits(document):
            return False
        return kind is None or any(s.kind == kind for s in document.symbols)

    accepted = (bool(live[i]) and accepts(path) for i, (path, _) in enumerate(catalog.keys))
    return np.fromiter(accepted, dtype=bool, count=len(live))


def of_kind(
    catalog: Catalog, index: Index, doc: int, scores: list[float], kind: str
) -> list[float]:
    """``scores`` of document ``doc``'s sections, 0 for those that are not of a definition
    of ``kind`` (code outside any definition is its module's)."""
    document = index.get(catalog.keys[doc][0], counted=False)
    if document is None:
        return [0.0] * len(scores)
    kinds = {symbol.name: symbol.kind for symbol in document.symbols}
    module = "module" if any(s.kind == "module" for s in document.symbols) else None
    anchors = catalog.section_anchors(doc)
    return [
        score if at < len(anchors) and (kinds.get(anchors[at] or "", module) == kind) else 0.0
        for at, score in enumerate(scores)
    ]
