"""Usage, health and advice: what ``context_analyze_usage`` and ``context_capture`` report.

The health score is ``100 · (0.5 · usage + 0.25 · distribution + 0.25 · age)``; each
factor is in [0, 1] and reported: ``usage`` is the share of the window still free,
``distribution`` one minus the token-weighted GC score of the candidates (how much of
the working set is garbage, and how surely), ``age`` the token-weighted freshness
``0.5^(age / half-life)``.
Warnings at 60, 80 and 90 % name the next call and its measured effect: the GC plan
that brings usage back to half the window is computed, and the warning says how many
segments it stashes and how many tokens that frees.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import attrs

from cuedeck.errors import InvalidInput
from cuedeck.text import counted
from cuedeck_memory import gc
from cuedeck_memory.fitting import FRAME_TOKENS, fit_ids, measure
from cuedeck_memory.segments import Segment

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from cuedeck_memory.store import MemoryStore

LEVELS = ((90.0, "urgent"), (80.0, "high"), (60.0, "warning"))
#: Where the advice aims: half the window.
TARGET_PERCENT = 50.0


@attrs.frozen
class Descriptors:
    """What a platform's context descriptors told us."""

    current_file: str | None = None
    current_tokens: int | None = None
    limit: int | None = None
    captured: tuple[str, ...] = ()


def ingest(
    store: MemoryStore,
    project: str,
    raw: Mapping[str, Any] | str | None,
    task_id: str | None,
) -> Descriptors:
    """Read descriptors: ``recent_messages`` become message segments (deduplicated by
    hash), ``current_file`` a GC root, ``token_usage`` overrides the measured usage."""
    if raw is None or raw == "":
        return Descriptors()
    if isinstance(raw, str):
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise InvalidInput(
                f"context_descriptors is not valid JSON: {exc}", field="context_descriptors"
            ) from None
    else:
        data = dict(raw)
    if not isinstance(data, dict):
        raise InvalidInput("context_descriptors must be an object", field="context_descriptors")
    current = data.get("current_file")
    path = current.get("path") if isinstance(current, dict) else current
    if path is not None and not isinstance(path, str):
        raise InvalidInput("current_file.path must be a string", field="current_file")
    usage = data.get("token_usage") or {}
    if not isinstance(usage, dict):
        raise InvalidInput("token_usage must be an object", field="token_usage")
    tokens, limit = usage.get("current"), usage.get("limit")
    for name, value in (("current", tokens), ("limit", limit)):
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            raise InvalidInput(
                f"token_usage.{name} must be an integer", field=f"token_usage.{name}"
            )
    messages = data.get("recent_messages") or []
    if not isinstance(messages, list):
        raise InvalidInput("recent_messages must be a list", field="recent_messages")
    drafts = []
    task = task_id or store.current_task(project)
    for n, message in enumerate(messages):
        if isinstance(message, dict):
            text = message.get("content", message.get("text"))
            role = message.get("role")
        else:
            text, role = message, None
        if not isinstance(text, str):
            raise InvalidInput("a message has no text", field=f"recent_messages.{n}")
        if text.strip():
            tags = (f"role:{role}",) if isinstance(role, str) else ()
            drafts.append(_draft(text, "message", task, tags))
    captured = store.add(project, drafts, dedupe=True) if drafts else []
    return Descriptors(
        current_file=path,
        current_tokens=tokens,
        limit=limit if limit and limit > 0 else None,
        captured=tuple(s.id for s in captured),
    )


def _draft(text: str, kind: str, task: str | None, tags: tuple[str, ...]) -> Segment:
    # Masked by the store, as everything it writes.
    return Segment(
        id="", type=kind, text=text, project_id="", created_at=0.0, task_id=task, tags=tags
    )


def report(
    store: MemoryStore,
    project: str,
    *,
    task_id: str | None = None,
    token_limit: int | None = None,
    descriptors: Descriptors | None = None,
    max_tokens: int,
    reserved: int = 0,
) -> dict[str, Any]:
    """The usage report of ``project`` (the reply of ``context_analyze_usage``), fitted
    to ``max_tokens`` (``reserved`` of them spent elsewhere)."""
    import numpy as np

    described = descriptors or Descriptors()
    now = store.clock()
    analysis = gc.analyze(
        store, project, task_id=task_id, current_file=described.current_file, now=now
    )
    table = analysis.table
    rows = analysis.working
    limit = token_limit or described.limit or store.settings.token_limit
    tokens = table.tokens[rows]
    measured = int(tokens.sum())
    current = described.current_tokens if described.current_tokens is not None else measured
    percent = 100.0 * current / limit
    kinds = table.kind[rows]
    tasks = table.task[rows]
    kind_tokens = np.bincount(kinds, weights=tokens, minlength=len(table.kinds.strings))
    kind_counts = np.bincount(kinds, minlength=len(table.kinds.strings))
    tokens_by_type = {
        str(table.kinds.strings[k]): int(kind_tokens[k]) for k in np.flatnonzero(kind_counts)
    }
    segments_by_type = {
        str(table.kinds.strings[k]): int(kind_counts[k]) for k in np.flatnonzero(kind_counts)
    }
    task_tokens = np.bincount(tasks, weights=tokens, minlength=len(table.values.strings))
    task_counts = np.bincount(tasks, minlength=len(table.values.strings))
    tokens_by_task = {
        table.values.strings[int(code)] or "(none)": int(task_tokens[code])
        for code in np.flatnonzero(task_counts)
    }
    ages = np.maximum(0.0, (now - table.created[rows]) / 3600.0)
    touched = np.maximum(0.0, (now - table.touched[rows]) / 3600.0)
    freshness = float((tokens * 0.5 ** (touched / store.settings.half_life_hours)).sum())
    pinned = table.pinned[rows]
    candidate_tokens = int(analysis.candidate_tokens.sum())
    garbage = float((analysis.candidate_tokens * analysis.scores).sum())
    factors = {
        "usage": _unit(1.0 - percent / 100.0),
        "distribution": _unit(1.0 - garbage / measured) if measured else 1.0,
        "age": _unit(freshness / measured) if measured else 1.0,
    }
    score = 100.0 * (
        0.5 * factors["usage"] + 0.25 * factors["distribution"] + 0.25 * factors["age"]
    )
    # The suggested ids are in the reply twice, a token each at the least.
    advice = advise(project, analysis, current, limit, ids_at_most=max_tokens // 2)
    after = 100.0 * max(0, current - candidate_tokens) / limit
    reply: dict[str, Any] = {
        "project_id": project,
        "task_id": task_id or store.current_task(project),
        "usage_metrics": {
            "total_tokens": current,
            "measured_tokens": measured,
            "total_segments": len(rows),
            "tokens_by_type": tokens_by_type,
            "segments_by_type": segments_by_type,
            "tokens_by_task": tokens_by_task,
            "oldest_segment_age_hours": round(float(ages.max()), 2) if len(rows) else 0.0,
            "newest_segment_age_hours": round(float(ages.min()), 2) if len(rows) else 0.0,
            "pinned_segments_count": int(pinned.sum()),
            "pinned_tokens": int(tokens[pinned].sum()),
            "usage_percent": round(percent, 2),
            "token_limit": limit,
            "estimated_remaining_tokens": max(0, limit - current),
        },
        "health_score": {
            "score": round(score, 1),
            "usage_percent": round(percent, 2),
            "factors": {k: round(v, 4) for k, v in factors.items()},
            "weights": {"usage": 0.5, "distribution": 0.25, "age": 0.25},
        },
        "recommendations": advice["recommendations"],
        "warnings": advice["warnings"],
        "suggested_actions": advice["suggested_actions"],
        "impact_summary": {
            "pruning_candidates_count": len(analysis.candidates),
            "estimated_tokens_freed": candidate_tokens,
            "estimated_usage_after_pruning": round(after, 2),
        },
        "pruning_candidates_count": len(analysis.candidates),
    }
    fit_report(reply, max_tokens, store.workspace.token_counter.count, analysis, reserved=reserved)
    return reply


def _unit(value: float) -> float:
    return min(1.0, max(0.0, value))


def fit_report(
    reply: dict[str, Any],
    max_tokens: int,
    count: Callable[[str], int],
    analysis: gc.Analysis,
    *,
    reserved: int = 0,
) -> None:
    """Fit a usage report to ``max_tokens`` (``reserved`` of them spent elsewhere): when
    the suggested stash lists too many ids to fit, it keeps the best-scored ones, says
    what those free, and that the rest come from context_gc_analyze (paged)."""
    actions: Sequence[dict[str, Any]] = reply["suggested_actions"]
    if not actions:
        return
    action = actions[0]
    ids: list[str] = action["arguments"]["segment_ids"]
    total = int(action["segments"])
    current, limit = reply["usage_metrics"]["total_tokens"], reply["usage_metrics"]["token_limit"]

    def describe(kept: int) -> None:
        # The plan's ids are its first candidates, best first: what the kept ones free.
        freed = int(analysis.candidate_tokens[:kept].sum())
        action.update(
            segments=kept,
            tokens_freed=freed,
            usage_percent_after=round(100.0 * max(0, current - freed) / limit, 2),
            complete=False,
            segments_in_plan=total,
            rest=(
                f"the best {kept} of the plan's {counted(total, 'segment')} fit this reply; "
                "context_gc_analyze with target_tokens pages through all of them"
            ),
        )

    budget = max_tokens - reserved - FRAME_TOKENS
    # Its ids are in the reply twice, a token each at the least: more cannot fit, uncounted.
    if len(ids) == total and 2 * len(ids) <= budget and measure(reply, count) <= budget:
        return
    describe(total)  # measured with the keys a cut plan adds, then filled in
    kept = fit_ids(reply, ids, budget, count, copies=2)
    describe(kept)


def advise(
    project: str, analysis: gc.Analysis, current: int, limit: int, *, ids_at_most: int
) -> dict[str, list[dict[str, Any]]]:
    """Warnings (60/80/90 %) with the measured effect of the call they suggest."""
    percent = 100.0 * current / limit
    level = next((name for threshold, name in LEVELS if percent >= threshold), None)
    if level is None:
        return {
            "recommendations": [
                {"priority": "low", "message": "Context usage is healthy", "action": None}
            ],
            "warnings": [],
            "suggested_actions": [],
        }
    target = max(1, current - int(limit * TARGET_PERCENT / 100))
    proposal = gc.plan(analysis, target, ids_at_most=ids_at_most)
    freed, ids = proposal["total_tokens_freed"], proposal["stash_segments"]
    chosen = proposal["candidates_count"]
    after = 100.0 * max(0, current - freed) / limit
    if ids:
        effect = (
            f"stash {gc.count(chosen, 'segment')} with context_gc_prune to free {freed:,} tokens "
            f"({percent:.1f}% -> {after:.1f}%)"
        )
        if not proposal["target_met"]:
            effect += (
                f"; that is all GC may prune, {target - freed:,} tokens short of "
                f"{TARGET_PERCENT:g}%"
            )
    else:
        effect = (
            "nothing can be pruned: every working segment is pinned or reachable from the "
            "roots; unpin segments or switch task (context_set_current_task)"
        )
    message = f"Context at {percent:.1f}% of {limit:,} tokens ({level}): {effect}"
    action = (
        {
            "tool": "context_gc_prune",
            "arguments": {"project_id": project, "segment_ids": ids, "action": "stash"},
            "segments": chosen,
            "tokens_freed": freed,
            "usage_percent_after": round(after, 2),
        }
        if ids
        else None
    )
    return {
        "recommendations": [{"priority": level, "message": message, "action": action}],
        "warnings": [{"level": level, "usage_percent": round(percent, 2), "message": message}],
        "suggested_actions": [action] if action else [],
    }
