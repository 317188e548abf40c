"""Stash filters and query ranking.

Filters are the reference's (``file_path``, ``task_id``, ``tags`` (any), ``type``,
``created_after``, ``created_before``), given as an object or a JSON string; an unknown
key or a bad value is 1004 naming it. A query is ranked, never matched as a bare
substring: ``keyword`` is BM25 over the full-text index (always there; a word counts
once per segment); ``semantic``
and ``hybrid`` ask the workspace's ``semantic`` searcher to rank the texts (cuedeck-
search registers it), hybrid fusing its ranking with the keyword one by reciprocal
ranks. When the searcher cannot rank texts, the keyword ranking answers and the reply
says so.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from cuedeck.errors import InvalidInput
from cuedeck_memory.database import fts_query
from cuedeck_memory.segments import parse_time

if TYPE_CHECKING:
    from collections.abc import Mapping

    from cuedeck_memory.store import MemoryStore
    from cuedeck_memory.table import SegmentTable

FILTER_KEYS = ("file_path", "task_id", "tags", "type", "created_after", "created_before")
#: Most texts handed to a semantic searcher per query (the keyword hits come first).
SEMANTIC_POOL = 500
RRF_K = 60
BM25_K1 = 1.2
BM25_B = 0.75


@attrs.frozen
class Filters:
    """Parsed stash filters: the given object, and each condition as a value."""

    given: dict[str, Any]
    equal: dict[str, str]  # file_path, task_id, type
    tags: tuple[str, ...] = ()
    after: float | None = None
    before: float | None = None


def parse_filters(raw: Mapping[str, Any] | str | None) -> Filters:
    """``raw`` (object, JSON text or None) checked and parsed."""
    if raw is None or raw == "":
        return Filters({}, {})
    if isinstance(raw, str):
        try:
            loaded = json.loads(raw)
        except ValueError as exc:
            raise InvalidInput(f"filters is not valid JSON: {exc}", field="filters") from None
    else:
        loaded = dict(raw)
    if not isinstance(loaded, dict):
        raise InvalidInput("filters must be an object", field="filters")
    equal: dict[str, str] = {}
    tags: tuple[str, ...] = ()
    after = before = None
    for key, value in loaded.items():
        field = f"filters.{key}"
        if key not in FILTER_KEYS:
            raise InvalidInput(
                f"unknown filter {key!r} (one of {', '.join(FILTER_KEYS)})", field=field
            )
        if value is None:
            continue
        if key in ("file_path", "task_id", "type"):
            if not isinstance(value, str):
                raise InvalidInput(f"filter {key!r} must be a string", field=field)
            equal[key] = value
        elif key == "tags":
            listed = [value] if isinstance(value, str) else value
            if not isinstance(listed, list) or not all(isinstance(t, str) for t in listed):
                raise InvalidInput("filter 'tags' must be a list of strings", field=field)
            tags = tuple(listed)
        elif key == "created_after":
            after = parse_time(value, field=field)
        else:
            before = parse_time(value, field=field)
    return Filters(loaded, equal, tags, after, before)


def select(
    table: SegmentTable, project: str | None, filters: Filters, *, stashed: bool | None
) -> np.ndarray[Any, Any]:
    """Rowids of the live segments of ``project`` (every project when None) in a tier
    (``stashed``; both when None) that pass ``filters``."""
    rows = table.rows(project, stashed=stashed)
    columns = {"file_path": table.file, "task_id": table.task}
    for key, value in filters.equal.items():
        if key == "type":
            rows = rows[table.kind[rows] == table.kinds.find(value)]
        else:
            rows = rows[columns[key][rows] == table.values.find(value)]
    if filters.after is not None:
        rows = rows[table.created[rows] > filters.after]
    if filters.before is not None:
        rows = rows[table.created[rows] < filters.before]
    if filters.tags:
        rows = table.with_any_tag(rows, set(filters.tags))
    return rows


@attrs.frozen
class Found:
    """What a stash query found: rowids best first (at most the limit asked), their
    scores (None when newest first), how many matched in all, and the ranking used."""

    rowids: list[int]
    scores: list[float | None]
    total: int
    ranking: str


def newest_first(table: SegmentTable, rows: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """``rows`` newest first (by creation, then rowid)."""
    return rows[np.lexsort((-rows, -table.created[rows]))]


def find(
    store: MemoryStore,
    project: str | None,
    query: str | None,
    filters: Filters,
    *,
    stashed: bool | None,
    limit: int,
) -> Found:
    """Segments passing ``filters`` ranked by ``query`` when given (best first, with
    scores), else newest first; ``total`` is the true number that matched."""
    table = store.table
    rows = select(table, project, filters, stashed=stashed)
    if not query or not fts_query(query):
        chosen = newest_first(table, rows)[:limit]
        return Found(chosen.tolist(), [None] * len(chosen), len(rows), "newest first")
    mode = store.settings.search_mode
    keyword, total = _keyword(store, table, rows, query, max(limit, SEMANTIC_POOL))
    if mode == "keyword":
        top = keyword[:limit]
        return Found([r for r, _ in top], [v for _, v in top], total, "keyword")
    from cuedeck.hookspecs import TextRanker
    from cuedeck.plugins.host import get_searchers

    # Both rank by meaning through the semantic searcher; hybrid fuses it with keyword.
    workspace = store.workspace
    offered = "semantic" in get_searchers(workspace.plugins)
    ranker = workspace.searcher("semantic") if offered else None
    if not isinstance(ranker, TextRanker):
        top = keyword[:limit]
        return Found(
            [r for r, _ in top],
            [v for _, v in top],
            total,
            f"keyword ({mode} unavailable: install cuedeck-search)",
        )
    pool = [r for r, _ in keyword[:SEMANTIC_POOL]]
    if len(pool) < SEMANTIC_POOL:
        seen = set(pool)
        pool.extend(r for r in newest_first(table, rows).tolist() if r not in seen)
        pool = pool[:SEMANTIC_POOL]
    texts = store.fetch(pool)
    scores = ranker.rank_texts(query, [texts[r].text for r in pool])
    semantic = sorted(zip(pool, scores, strict=True), key=lambda pair: -pair[1])
    if mode == "semantic":
        top_semantic = semantic[:limit]
        return Found(
            [r for r, _ in top_semantic], [float(v) for _, v in top_semantic], len(rows), "semantic"
        )
    fused: dict[int, float] = {}
    for ranked in (keyword, semantic):
        for rank, (rowid, _) in enumerate(ranked, start=1):
            fused[rowid] = fused.get(rowid, 0.0) + 1.0 / (RRF_K + rank)
    best = sorted(fused.items(), key=lambda pair: -pair[1])[:limit]
    return Found([r for r, _ in best], [v for _, v in best], len(fused), "hybrid")


def _keyword(
    store: MemoryStore, table: SegmentTable, rows: np.ndarray[Any, Any], query: str, cap: int
) -> tuple[list[tuple[int, float]], int]:
    """(rowid, BM25 score) of ``rows`` whose text holds a word of ``query``, best first
    (ties: newest first), at most ``cap`` of them; and how many matched in all.

    BM25 over the whole store (k1 1.2, b 0.75), a word counted once per segment: a
    segment is a few hundred tokens, where repeats say little, and this way the cost of
    a common word is a walk of its rowids rather than a score computed inside SQLite
    for every segment that holds it (the length of a segment is its token count)."""
    postings = [p[p < table.capacity] for p in store.database.term_rows(query)]
    postings = [p for p in postings if len(p)]
    if not postings:
        return [], 0
    documents, average = table.length_stats()
    hits = np.concatenate(postings)
    weights = np.concatenate(
        [
            np.full(len(p), np.log((documents - len(p) + 0.5) / (len(p) + 0.5) + 1.0))
            for p in postings
        ]
    )
    if len(postings) > 1:
        hits, where = np.unique(hits, return_inverse=True)
        weights = np.bincount(where, weights=weights)
    allowed = np.zeros(table.capacity, np.bool_)
    allowed[rows] = True
    keep = allowed[hits]
    matched, weights = hits[keep], weights[keep]
    lengths = table.tokens[matched].astype(np.float64)
    values = (
        weights * (BM25_K1 + 1.0) / (1.0 + BM25_K1 * (1.0 - BM25_B + BM25_B * lengths / average))
    )
    total = len(matched)
    if total > cap:
        head = np.argpartition(-values, cap)[:cap]
        matched, values = matched[head], values[head]
    order = np.lexsort((-table.created[matched], -values))
    return list(zip(matched[order].tolist(), values[order].tolist(), strict=True)), total
