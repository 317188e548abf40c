"""GC on real segment files: scores, roots, reachability and plans."""

from __future__ import annotations

from typing import Any

import attrs
from hypothesis import given
from hypothesis import strategies as st

from cuedeck.workspace import Workspace
from cuedeck_memory import gc
from cuedeck_memory.segments import Segment, type_weight
from cuedeck_memory.store import MemoryStore

DAY = 86400.0
T0 = 1_800_000_000.0


def draft(text: str, kind: str = "note", **fields: Any) -> Segment:
    return Segment(id="", type=kind, text=text, project_id="", created_at=0.0, **fields)


def store_at(workspace: Workspace, when: float) -> MemoryStore:
    return MemoryStore(workspace, clock=lambda: when)


@given(
    kind=st.sampled_from(["log", "message", "code", "note", "summary", "decision", "odd"]),
    age=st.floats(min_value=0, max_value=1e9, allow_nan=False),
    refcount=st.integers(min_value=0, max_value=10_000),
    survived=st.integers(min_value=0, max_value=1000),
    half_life=st.floats(min_value=0.01, max_value=1e6, allow_nan=False),
)
def test_every_factor_and_the_score_stay_in_the_unit_interval(
    kind: str, age: float, refcount: int, survived: int, half_life: float
) -> None:
    factors = gc.score_factors(kind, age, refcount, survived, half_life)
    assert all(0.0 <= value <= 1.0 for value in factors.values())
    assert 0.0 <= gc.score(factors) <= 1.0


def test_unknown_types_weigh_as_notes() -> None:
    assert type_weight("screenshot") == type_weight("note")


def test_an_old_log_outranks_a_fresh_decision_and_references_lower_a_score(
    workspace: Workspace,
) -> None:
    old = store_at(workspace, T0 - 30 * DAY)
    [log, lonely, cited] = old.add(
        "p", [draft("build log " * 20, "log"), draft("a note", "note"), draft("cited note", "note")]
    )
    fresh = store_at(workspace, T0)
    [decision, citing] = fresh.add(
        "p", [draft("we use postgres", "decision"), draft("see it", "summary", refs=(cited.id,))]
    )
    analysis = gc.analyze(fresh, "p", now=T0)
    by_id = {c.segment_id: c for c in analysis.candidates}
    assert by_id[log.id].score > by_id[decision.id].score
    assert analysis.candidates[0].segment_id == log.id
    assert by_id[cited.id].factors["refcount"] == 0.5
    assert by_id[cited.id].score < by_id[lonely.id].score
    assert "log" in by_id[log.id].reason and "30.0 days" in by_id[log.id].reason
    assert by_id[log.id].age_hours > 700
    assert citing.id in by_id


def test_roots_and_what_they_reach_are_never_candidates(workspace: Workspace) -> None:
    store = store_at(workspace, T0)
    [a, b, c, lone, topic_a, topic_b, pinned, of_file, of_card, of_dep, cites_card] = store.add(
        "p",
        [
            draft("a", refs=("__b__",)),
            draft("b"),
            draft("c"),
            draft("disconnected"),
            draft("topic one", topic_id="t1"),
            draft("topic two", topic_id="t1"),
            draft("pinned", pinned=True),
            draft("of the file", file_path="src/app.py"),
            draft("of the card", task_id="c2c2c2"),
            draft("of the dependency", task_id="a1a1a1"),
            draft("cites", refs=("@.cuedeck/cards/c2c2c2.md",)),
        ],
    )
    # A cycle a -> b -> c -> a, reached from a root (the pinned segment refers to a).
    store.change("p", [a.id], lambda s: attrs.evolve(s, refs=(b.id,)))
    store.change("p", [b.id], lambda s: attrs.evolve(s, refs=(c.id,)))
    store.change("p", [c.id], lambda s: attrs.evolve(s, refs=(a.id, topic_a.id)))
    nothing = gc.analyze(store, "p", now=T0 + DAY)
    candidates = {x.segment_id for x in nothing.candidates}
    assert pinned.id not in candidates and len(candidates) == 10

    store.change("p", [pinned.id], lambda s: attrs.evolve(s, refs=(a.id,)))
    store.set_current_task("p", "c2c2c2")
    analysis = gc.analyze(store, "p", current_file="src/app.py", now=T0 + DAY)
    candidates = {x.segment_id for x in analysis.candidates}
    assert candidates == {lone.id}
    assert {pinned.id, of_file.id, of_card.id, of_dep.id, cites_card.id} <= analysis.roots
    # The cycle ends, and reaching topic_a reaches its whole topic.
    assert {a.id, b.id, c.id, topic_a.id, topic_b.id} <= analysis.reached


def test_the_recency_window_is_read_from_config(make_workspace: Any) -> None:
    from cuedeck.workspace import open_workspace

    root = make_workspace(config="[memory]\nrecency_window = 2\n")
    store = store_at(open_workspace(root), T0)
    store.set_current_task("p", "t1")
    made = [
        store_at(store.workspace, T0 + n).add("p", [draft(f"m{n}", "message", task_id="t1")])[0]
        for n in range(4)
    ]
    analysis = gc.analyze(store, "p", now=T0 + 10)
    assert {x.segment_id for x in analysis.candidates} == {made[0].id, made[1].id}


def test_plans_meet_a_target_or_say_how_much_of_it(workspace: Workspace) -> None:
    store = store_at(workspace, T0 - 10 * DAY)
    store.add("p", [draft("log line " * 50, "log") for _ in range(3)])
    analysis = gc.analyze(store, "p", now=T0)
    total = sum(c.tokens for c in analysis.candidates)
    met = gc.plan(analysis, analysis.candidates[0].tokens)
    assert met["target_met"] and len(met["stash_segments"]) == 1
    assert "met" in met["reason"]
    partly = gc.plan(analysis, total + 1000)
    assert not partly["target_met"]
    assert partly["total_tokens_freed"] == total
    assert f"{total:,} of {total + 1000:,}" in partly["reason"]
