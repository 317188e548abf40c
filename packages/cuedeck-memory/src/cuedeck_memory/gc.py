"""Garbage collection of context: roots, what they reach, scores and plans.

Roots are the current task's latest messages and decisions (``[memory]
recency_window`` of them), the segments of the current file, pinned segments, and
every segment tied to the active card or a card it depends on (by ``task_id`` or a
reference). From the roots, ``refs`` to other segments are followed, and reaching one
segment of a topic reaches its whole topic (topics are grouped, never compared pair by
pair). Working segments nothing reaches are the candidates, scored in [0, 1]:

    0.40 · age + 0.25 · type + 0.20 · 1/(1 + refcount) + 0.15 · generation

``age`` is ``log(1 + whole minutes since last touch) / log(1 + minutes in 30 days)``,
capped at 1, so it tells a minute from an hour as well as a day from a month; ``type`` is the
type's weight (logs 1.0 ... decisions 0.2); ``refcount`` counts the working segments
that refer to this one; ``generation`` is 1.0 young, 0.6 mature, 0.3 old (what survived
many runs is likely worth keeping). Higher scores go first. The analysis runs over the
in-memory columns of :mod:`cuedeck_memory.table`, as vector operations.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from cuedeck.layout import CARD_ID, card_path
from cuedeck.text import counted
from cuedeck_memory.segments import GENERATIONS, generation_of, type_weight
from cuedeck_memory.table import NONE

if TYPE_CHECKING:
    from cuedeck_memory.store import MemoryStore
    from cuedeck_memory.table import SegmentTable

WEIGHTS = {"age": 0.40, "type": 0.25, "refcount": 0.20, "generation": 0.15}
GENERATION_FACTOR = {"young": 1.0, "mature": 0.6, "old": 0.3}
#: Where the age factor reaches 1: a segment untouched this long is as old as any.
AGE_HORIZON_HOURS = 720.0
_AGE_SCALE = math.log1p(AGE_HORIZON_HOURS * 60.0)


Column = np.ndarray[Any, Any]


def score_factors(
    type_weights: Column, age_hours: Column, refcounts: Column, survived: Column
) -> dict[str, Column]:
    """The four factors of each candidate's score, each in [0, 1]: the one GC score,
    which :func:`analyze` computes over a working set's columns.

    ``type_weights`` are the candidates' type weights (``segments.type_weight``); age is
    counted in whole minutes, so a segment less than a minute old has none; generations
    are those of ``segments.GENERATIONS``, as ``segments.generation_of`` names them."""
    hours = np.maximum(0.0, np.asarray(age_hours, dtype=np.float64))
    # Whole minutes: hours made from seconds are not exact (123 min can be 122.99999...).
    minutes = np.floor(hours * 60.0 + 1e-6)
    survived = np.asarray(survived)
    young, mature = GENERATIONS[0][0], GENERATIONS[1][0]
    return {
        "age": np.minimum(1.0, np.log1p(minutes) / _AGE_SCALE),
        "type": np.asarray(type_weights, dtype=np.float64),
        "refcount": 1.0 / (1.0 + np.maximum(0, np.asarray(refcounts))),
        "generation": np.where(
            survived < young,
            GENERATION_FACTOR["young"],
            np.where(survived < mature, GENERATION_FACTOR["mature"], GENERATION_FACTOR["old"]),
        ),
    }


def scores(factors: dict[str, Column]) -> Column:
    """The weighted sum of each candidate's factors, in [0, 1]."""
    weighted = [WEIGHTS[name] * np.asarray(value) for name, value in factors.items()]
    total: Column = np.sum(weighted, axis=0)
    return total


def _reason(kind: str, age_hours: float, refcount: int, generation: str) -> str:
    if age_hours >= 48:
        age = f"{age_hours / 24:.1f} days"
    elif age_hours >= 1:
        age = f"{age_hours:.1f} h"
    else:
        age = f"{age_hours * 60:.0f} min"
    refs = "no references" if refcount == 0 else counted(refcount, "reference")
    return f"{kind}, untouched for {age}, {refs}, {generation}, unreachable from the roots"


def tied_cards(store: MemoryStore, task_id: str | None) -> set[str]:
    """The active card, the current task when it is a card, and the cards they depend on
    (read from the cards' ``depends_on``)."""
    from cuedeck.state import active_card

    cards = {c for c in (active_card(store.root), task_id) if c and CARD_ID.match(c)}
    if not cards:  # spares the document index (and the token counter) a first load
        return cards
    documents = store.workspace.documents
    for card in list(cards):
        document = documents.get(card_path(card))
        depends = document.frontmatter.get("depends_on") if document else None
        if isinstance(depends, list):
            cards.update(str(d) for d in depends if CARD_ID.match(str(d)))
    return cards


@attrs.frozen(eq=False)
class Analysis:
    """One GC analysis of a project's working set; candidates best (highest score) first."""

    table: SegmentTable
    working: np.ndarray[Any, Any]  # rowids of the working set
    candidates: np.ndarray[Any, Any]  # rowids, best first
    candidate_tokens: np.ndarray[Any, Any]  # tokens of each, in that order
    scores: np.ndarray[Any, Any]
    factors: dict[str, np.ndarray[Any, Any]]
    age_hours: np.ndarray[Any, Any]
    refcounts: np.ndarray[Any, Any]
    roots: frozenset[int]
    reached_rows: np.ndarray[Any, Any]  # by rowid: whether the roots reach it

    @property
    def reached(self) -> frozenset[int]:
        """Rowids the roots reach (themselves included)."""
        return frozenset(np.flatnonzero(self.reached_rows).tolist())

    @property
    def working_tokens(self) -> int:
        """Tokens of the whole working set."""
        return int(self.table.tokens[self.working].sum())

    def ids(self, count: int | None = None) -> list[str]:
        """Segment ids of the first ``count`` candidates (all when None)."""
        return self.table.segment_ids(self.candidates[:count])

    def candidate(self, n: int) -> dict[str, Any]:
        """Candidate ``n`` in the reply shape of ``context_gc_analyze``."""
        table = self.table
        rowid = int(self.candidates[n])
        kind = table.kinds.strings[int(table.kind[rowid])] or "note"
        hours = float(self.age_hours[n])
        refs = int(self.refcounts[n])
        survived = int(table.survived[rowid])
        return {
            "segment_id": table.segment_id(rowid),
            "score": round(float(self.scores[n]), 4),
            "tokens": int(table.tokens[rowid]),
            "reason": _reason(kind, hours, refs, generation_of(survived)),
            "segment_type": kind,
            "age_hours": round(hours, 2),
            "factors": {k: round(float(v[n]), 4) for k, v in self.factors.items()},
        }


def analyze(
    store: MemoryStore,
    project: str,
    *,
    task_id: str | None = None,
    current_file: str | None = None,
    now: float | None = None,
) -> Analysis:
    """Roots, reachability and scored candidates of ``project``'s working set."""
    table = store.table
    settings = store.settings
    now = store.clock() if now is None else now
    task = task_id or store.current_task(project)
    cards = tied_cards(store, task)
    with table.lock:
        working = table.rows(project, stashed=False)
        in_working = np.zeros(table.capacity, np.bool_)
        in_working[working] = True
        roots = set(working[table.pinned[working]].tolist())
        values = table.values
        card_codes = [values.find(c) for c in cards]
        if card_codes:
            roots.update(working[np.isin(table.task[working], card_codes)].tolist())
        if current_file:
            roots.update(working[table.file[working] == values.find(current_file)].tolist())
        if task:
            kinds = [table.kinds.find("message"), table.kinds.find("decision")]
            mine = working[
                (table.task[working] == values.find(task)) & np.isin(table.kind[working], kinds)
            ]
            if len(mine):
                order = np.lexsort((-mine, -table.created[mine]))
                roots.update(mine[order[: settings.recency_window]].tolist())
        # References between working segments, and to the cards the task is tied to.
        links = table.links()
        inside = in_working[links.sources] & in_working[links.targets]
        sources, targets = links.sources[inside], links.targets[inside]
        if cards:
            roots.update(r for r, card in links.cards if card in cards and in_working[r])
        refcount = np.bincount(targets, minlength=table.capacity)
        reached = _reach(roots, sources, targets, table, working)
        candidates = np.flatnonzero(in_working & ~reached)
        hours = np.maximum(0.0, (now - table.touched[candidates]) / 3600.0)
        kind_weight = np.array([type_weight(k or "note") for k in table.kinds.strings])
        factors = score_factors(
            kind_weight[table.kind[candidates]],
            hours,
            refcount[candidates],
            table.survived[candidates],
        )
        scored = scores(factors)
        # Best first; ties: older rows first. The score (in [0, 1], to 1e-9) and the
        # position in rowid order make one integer key: an unstable sort of distinct
        # keys is a third of the time of a stable sort of the scores.
        grade = np.round(scored * 1e9).astype(np.int64)
        order = np.argsort(((1_000_000_000 - grade) << 33) | np.arange(len(candidates)))
        ranked = candidates[order]
        return Analysis(
            table=table,
            working=working,
            candidates=ranked,
            candidate_tokens=table.tokens[ranked],
            scores=scored[order],
            factors={k: np.asarray(v)[order] for k, v in factors.items()},
            age_hours=hours[order],
            refcounts=refcount[ranked],
            roots=frozenset(roots),
            reached_rows=reached,
        )


def _reach(
    roots: set[int],
    sources: np.ndarray[Any, Any],
    targets: np.ndarray[Any, Any],
    table: SegmentTable,
    working: np.ndarray[Any, Any],
) -> np.ndarray[Any, Any]:
    """Which rows ``roots`` reach by refs and shared topics (cycles are fine), as a mask
    by rowid: the frontier grows a step at a time, as vector operations."""
    reached = np.zeros(table.capacity, np.bool_)
    if not roots:
        return reached
    frontier = np.fromiter(roots, np.int64, len(roots))
    reached[frontier] = True
    # Only rows in a topic join one: the few the topic step has to look at.
    topics = table.topic[working]
    grouped = topics != NONE
    members, member_topics = working[grouped], topics[grouped]
    done = np.zeros(len(table.values.strings) + 1, np.bool_)
    done[NONE] = True  # "no topic" joins nothing
    step = np.zeros(table.capacity, np.bool_)
    while len(frontier):
        step[frontier] = True
        found = targets[step[sources]]
        step[frontier] = False
        joined = table.topic[frontier]
        joined = joined[~done[joined]]
        if len(joined):
            fresh = np.zeros(len(done), np.bool_)
            fresh[joined] = True
            done |= fresh
            found = np.concatenate([found, members[fresh[member_topics]]])
        # A row found twice in one step is harmless: the next step is a mask.
        frontier = found[~reached[found]]
        reached[frontier] = True
    return reached


def count(number: int, noun: str) -> str:
    """``number`` and ``noun``, plural unless one ("1 segment", "38 segments")."""
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def plan(
    analysis: Analysis, target_tokens: int, *, ids_at_most: int | None = None
) -> dict[str, Any]:
    """The best-scored candidates that free ``target_tokens``, or as many as there are:
    ``candidates_count`` of them, whose ids are ``stash_segments`` (the first
    ``ids_at_most`` of them: a reply cannot hold more ids than it has tokens)."""
    freed_by = np.cumsum(analysis.candidate_tokens)
    total = int(freed_by[-1]) if len(freed_by) else 0
    met = total >= target_tokens
    chosen = int(np.searchsorted(freed_by, target_tokens) + 1) if met else len(freed_by)
    freed = int(freed_by[chosen - 1]) if chosen else 0
    if met:
        reason = (
            f"stash {count(chosen, 'segment')} to free {freed:,} tokens "
            f"(target {target_tokens:,} met)"
        )
    else:
        reason = (
            f"only {freed:,} of {target_tokens:,} tokens can be freed (target partly met: "
            f"{count(chosen, 'candidate')}; the rest is reachable from the roots or pinned)"
        )
    return {
        "candidates_count": chosen,
        "total_tokens_freed": freed,
        "target_tokens": target_tokens,
        "target_met": met,
        "stash_segments": analysis.ids(chosen if ids_at_most is None else min(chosen, ids_at_most)),
        "delete_segments": [],
        "reason": reason,
    }
