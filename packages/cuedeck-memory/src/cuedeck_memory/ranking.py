"""Stash filters and query ranking.

Filters are the reference's (``file_path``, ``task_id``, ``tags`` (any), ``type``,
``created_after``, ``created_before``), given as an object or a JSON string; an unknown
key or a bad value is 1004 naming it. A query is ranked, never matched as a bare
substring: ``keyword`` is BM25 over the full-text index (always there); ``semantic``
and ``hybrid`` ask the workspace's ``semantic`` searcher to rank the texts (cuedeck-
search registers it), hybrid fusing its ranking with the keyword one by reciprocal
ranks. When the searcher cannot rank texts, the keyword ranking answers and the reply
says so.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import attrs

from cuedeck.errors import InvalidInput
from cuedeck_memory.index import fts_query
from cuedeck_memory.segments import parse_time

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from cuedeck_memory.segments import Segment
    from cuedeck_memory.store import MemoryStore

FILTER_KEYS = ("file_path", "task_id", "tags", "type", "created_after", "created_before")
#: Most texts handed to a semantic searcher per query (the keyword hits come first).
SEMANTIC_POOL = 500
RRF_K = 60


@attrs.frozen
class Filters:
    """Parsed stash filters, as SQL over the segments table."""

    given: dict[str, Any]
    where: str
    params: tuple[Any, ...]


def parse_filters(raw: Mapping[str, Any] | str | None) -> Filters:
    """``raw`` (object, JSON text or None) checked and turned into SQL."""
    if raw is None or raw == "":
        return Filters({}, "", ())
    if isinstance(raw, str):
        try:
            loaded = json.loads(raw)
        except ValueError as exc:
            raise InvalidInput(f"filters is not valid JSON: {exc}", field="filters") from None
    else:
        loaded = dict(raw)
    if not isinstance(loaded, dict):
        raise InvalidInput("filters must be an object", field="filters")
    clauses: list[str] = []
    params: list[Any] = []
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
            clauses.append(f"{key} = ?")
            params.append(value)
        elif key == "tags":
            tags = [value] if isinstance(value, str) else value
            if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
                raise InvalidInput("filter 'tags' must be a list of strings", field=field)
            if tags:
                marks = ", ".join("?" * len(tags))
                clauses.append(
                    f"EXISTS (SELECT 1 FROM json_each(segments.tags) WHERE value IN ({marks}))"
                )
                params.extend(tags)
        else:
            when = parse_time(value, field=field)
            clauses.append("created_at > ?" if key == "created_after" else "created_at < ?")
            params.append(when)
    return Filters(loaded, " AND ".join(clauses), tuple(params))


def tier_clause(tiers: Sequence[str], filters: Filters) -> tuple[str, tuple[Any, ...]]:
    """The SQL condition of ``tiers`` and ``filters`` together."""
    where = f"tier IN ({', '.join('?' * len(tiers))})"
    if filters.where:
        where += f" AND {filters.where}"
    return where, (*tiers, *filters.params)


def find(
    store: MemoryStore,
    project: str,
    query: str | None,
    filters: Filters,
    tiers: Sequence[str],
    *,
    limit: int | None = None,
) -> tuple[list[tuple[Segment, float | None]], str]:
    """Segments of ``tiers`` passing ``filters``, ranked by ``query`` when given (best
    first, with scores), else newest first; and the ranking used."""
    store.refresh(project)
    where, params = tier_clause(tiers, filters)
    if not query or not fts_query(query):
        found = store.index.select(project, where, params)
        found.sort(key=lambda s: (s.created_at, s.id), reverse=True)
        chosen = found if limit is None else found[:limit]
        return [(s, None) for s in chosen], "newest first"
    mode = store.settings.search_mode
    wanted = limit or 10_000
    keyword = _keyword(store, project, query, where, params, wanted)
    if mode == "keyword":
        return [(s, v) for s, v in keyword], "keyword"
    from cuedeck.plugins import get_searchers

    # Both rank by meaning through the semantic searcher; hybrid fuses it with keyword.
    searcher = get_searchers(store.workspace.plugins).get("semantic")
    rank_texts = getattr(searcher, "rank_texts", None)
    if rank_texts is None:
        return [(s, v) for s, v in keyword], f"keyword ({mode} unavailable: install cuedeck-search)"
    pool = [s for s, _ in keyword[:SEMANTIC_POOL]]
    if len(pool) < SEMANTIC_POOL:
        seen = {s.id for s in pool}
        recent = store.index.select(project, where, params)
        recent.sort(key=lambda s: s.created_at, reverse=True)
        pool.extend(s for s in recent if s.id not in seen)
        pool = pool[:SEMANTIC_POOL]
    scores = rank_texts(store.workspace, query, [s.text for s in pool])
    semantic = sorted(zip(pool, scores, strict=True), key=lambda pair: -pair[1])
    if mode == "semantic":
        return [(s, float(v)) for s, v in semantic[:wanted]], "semantic"
    fused: dict[str, float] = {}
    segments = {s.id: s for s in pool}
    for ranking in (keyword, semantic):
        for rank, (segment, _) in enumerate(ranking, start=1):
            segments.setdefault(segment.id, segment)
            fused[segment.id] = fused.get(segment.id, 0.0) + 1.0 / (RRF_K + rank)
    best = sorted(fused.items(), key=lambda pair: -pair[1])[:wanted]
    return [(segments[i], v) for i, v in best], "hybrid"


def _keyword(
    store: MemoryStore,
    project: str,
    query: str,
    where: str,
    params: Sequence[Any],
    limit: int,
) -> list[tuple[Segment, float]]:
    from cuedeck_memory.index import segment_of

    sql = (
        "SELECT s.id, s.project, s.type, s.text, s.created_at, s.task_id, s.tags, "
        "s.file_path, s.line_range, s.topic_id, s.refs, s.pinned, s.tier, s.tokens, "
        "s.text_hash, s.last_touched_at, s.gc_survival_count, -bm25(segments_fts) "
        "FROM segments_fts JOIN segments s ON s.rowid = segments_fts.rowid "
        "WHERE segments_fts MATCH ? AND s.project = ? AND "
        + where.replace("segments.", "s.")
        + " ORDER BY bm25(segments_fts) LIMIT ?"
    )
    rows = store.index.db.execute(sql, (fts_query(query), project, *params, limit))
    return [(segment_of(row[:17]), float(row[17])) for row in rows]
