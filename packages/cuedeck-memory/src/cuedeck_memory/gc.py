"""Garbage collection of context: roots, what they reach, scores and plans.

Roots are the current task's latest messages and decisions (``[memory]
recency_window`` of them), the segments of the current file, pinned segments, and
every segment tied to the active card or a card it depends on (by ``task_id`` or a
reference). From the roots, ``refs`` to other segments are followed, and reaching one
segment of a topic reaches its whole topic (topics are grouped, never compared pair by
pair). Working segments nothing reaches are the candidates, scored in [0, 1]:

    0.40 · age + 0.25 · type + 0.20 · 1/(1 + refcount) + 0.15 · generation

``age`` is ``1 − 0.5^(hours since last touch / half-life)``, bounded below 1; ``type``
is the type's weight (logs 1.0 ... decisions 0.2); ``refcount`` counts the segments
that refer to this one; ``generation`` is 1.0 young, 0.6 mature, 0.3 old (what
survived many runs is likely worth keeping). Higher scores go first.
"""

from __future__ import annotations

import json
import re
from collections import deque
from typing import TYPE_CHECKING, Any

import attrs

from cuedeck.layout import CARD_ID, card_path
from cuedeck.wording import counted
from cuedeck_memory.segments import generation_of, type_weight

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from cuedeck_memory.index import Light
    from cuedeck_memory.store import MemoryStore

WEIGHTS = {"age": 0.40, "type": 0.25, "refcount": 0.20, "generation": 0.15}
GENERATION_FACTOR = {"young": 1.0, "mature": 0.6, "old": 0.3}
_CARD_PATH = re.compile(r"(?:^|/)\.cuedeck/cards/([a-z0-9]{6})\.md$")


@attrs.frozen
class Candidate:
    """A segment GC may prune, with its score and the factors behind it."""

    segment_id: str
    score: float
    tokens: int
    segment_type: str
    age_hours: float
    factors: dict[str, float]
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """The reply shape of ``context_gc_analyze``."""
        return {
            "segment_id": self.segment_id,
            "score": round(self.score, 4),
            "tokens": self.tokens,
            "reason": self.reason,
            "segment_type": self.segment_type,
            "age_hours": round(self.age_hours, 2),
            "factors": {k: round(v, 4) for k, v in self.factors.items()},
        }


@attrs.frozen
class Analysis:
    """The outcome of one GC analysis of a project's working set."""

    candidates: tuple[Candidate, ...]  # best (highest score) first
    roots: frozenset[str]
    reached: frozenset[str]
    working_tokens: int
    working_count: int


def score_factors(
    kind: str, age_hours: float, refcount: int, survived: int, half_life: float
) -> dict[str, float]:
    """The four factors of a score, each in [0, 1]."""
    age = 1.0 - 0.5 ** (max(0.0, age_hours) / half_life)
    return {
        "age": min(1.0, max(0.0, age)),
        "type": type_weight(kind),
        "refcount": 1.0 / (1.0 + max(0, refcount)),
        "generation": GENERATION_FACTOR[generation_of(survived)],
    }


def score(factors: dict[str, float]) -> float:
    """The weighted sum of the factors, in [0, 1]."""
    return sum(WEIGHTS[name] * value for name, value in factors.items())


def _reason(kind: str, age_hours: float, refcount: int, generation: str) -> str:
    age = f"{age_hours / 24:.1f} days" if age_hours >= 48 else f"{age_hours:.1f} h"
    refs = "no references" if refcount == 0 else counted(refcount, "reference")
    return f"{kind}, untouched for {age}, {refs}, {generation}, unreachable from the roots"


def card_of(ref: str) -> str | None:
    """The card id a reference names (``abc123``, ``@.cuedeck/cards/abc123.md``), or None."""
    target = ref.strip().removeprefix("@").split("#", 1)[0]
    if CARD_ID.match(target):
        return target
    found = _CARD_PATH.search(target)
    return found.group(1) if found else None


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


def analyze(
    store: MemoryStore,
    project: str,
    *,
    task_id: str | None = None,
    current_file: str | None = None,
    now: float | None = None,
    rows: Sequence[Light] | None = None,
) -> Analysis:
    """Roots, reachability and scored candidates of ``project``'s working set."""
    settings = store.settings
    now = store.clock() if now is None else now
    task = task_id or store.current_task(project)
    if rows is None:
        store.refresh(project)
        rows = store.index.light(project, ("working",))
    cards = tied_cards(store, task)
    by_id = {row.id: row for row in rows}
    refs: dict[str, list[str]] = {}
    refcount: dict[str, int] = {}
    topics: dict[str, list[str]] = {}
    roots: set[str] = set()
    recent: list[tuple[float, str]] = []
    for row in rows:
        targets = json.loads(row.refs) if row.refs != "[]" else []
        refs[row.id] = targets
        for target in targets:
            if target in by_id and target != row.id:
                refcount[target] = refcount.get(target, 0) + 1
            elif (card := card_of(target)) is not None and card in cards:
                roots.add(row.id)
        if row.topic_id:
            topics.setdefault(row.topic_id, []).append(row.id)
        if row.pinned or (row.task_id is not None and row.task_id in cards):
            roots.add(row.id)
        if current_file and row.file_path == current_file:
            roots.add(row.id)
        if task and row.task_id == task and row.type in ("message", "decision"):
            recent.append((row.created_at, row.id))
    recent.sort(reverse=True)
    roots.update(segment_id for _, segment_id in recent[: settings.recency_window])
    reached = _reach(roots, refs, topics, by_id)
    candidates = []
    half_life = settings.half_life_hours
    for row in rows:
        if row.id in reached:
            continue
        age_hours = max(0.0, (now - (row.last_touched_at or row.created_at)) / 3600.0)
        count = refcount.get(row.id, 0)
        factors = score_factors(row.type, age_hours, count, row.gc_survival_count, half_life)
        reason = _reason(row.type, age_hours, count, generation_of(row.gc_survival_count))
        candidates.append(
            Candidate(row.id, score(factors), row.tokens, row.type, age_hours, factors, reason)
        )
    candidates.sort(key=lambda c: (-c.score, -c.tokens, c.segment_id))
    return Analysis(
        tuple(candidates),
        frozenset(roots),
        frozenset(reached),
        sum(row.tokens for row in rows),
        len(rows),
    )


def _reach(
    roots: Iterable[str],
    refs: dict[str, list[str]],
    topics: dict[str, list[str]],
    by_id: dict[str, Light],
) -> set[str]:
    """Segments reachable from ``roots`` by refs and shared topics (cycles are fine)."""
    reached = set(roots)
    queue = deque(reached)
    topics_done: set[str] = set()
    while queue:
        current = queue.popleft()
        following = [t for t in refs.get(current, ()) if t in by_id]
        topic = by_id[current].topic_id if current in by_id else None
        if topic and topic not in topics_done:
            topics_done.add(topic)
            following.extend(topics[topic])
        for target in following:
            if target not in reached:
                reached.add(target)
                queue.append(target)
    return reached


def count(number: int, noun: str) -> str:
    """``number`` and ``noun``, plural unless one ("1 segment", "38 segments")."""
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def plan(analysis: Analysis, target_tokens: int) -> dict[str, Any]:
    """The best-scored candidates that free ``target_tokens``, or as many as there are."""
    chosen: list[Candidate] = []
    freed = 0
    for candidate in analysis.candidates:
        if freed >= target_tokens:
            break
        chosen.append(candidate)
        freed += candidate.tokens
    met = freed >= target_tokens
    if met:
        reason = (
            f"stash {count(len(chosen), 'segment')} to free {freed:,} tokens "
            f"(target {target_tokens:,} met)"
        )
    else:
        reason = (
            f"only {freed:,} of {target_tokens:,} tokens can be freed (target partly met: "
            f"{count(len(chosen), 'candidate')}; the rest is reachable from the roots or pinned)"
        )
    return {
        "candidates": [c.to_dict() for c in chosen],
        "total_tokens_freed": freed,
        "target_tokens": target_tokens,
        "target_met": met,
        "stash_segments": [c.segment_id for c in chosen],
        "delete_segments": [],
        "reason": reason,
    }
