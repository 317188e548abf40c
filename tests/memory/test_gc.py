"""GC on a real store: each score factor pinned by a table, roots, reachability, plans,
and scores that spread over [0, 1] for a realistic mix."""

from __future__ import annotations

import math
from typing import Any

import attrs
import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from cuedeck.workspace import Workspace
from cuedeck_memory import gc
from cuedeck_memory.segments import Segment, type_weight
from cuedeck_memory.store import MemoryStore

DAY = 86400.0
HOUR = 3600.0
T0 = 1_800_000_000.0


def draft(text: str, kind: str = "note", **fields: Any) -> Segment:
    return Segment(id="", type=kind, text=text, project_id="", created_at=0.0, **fields)


def store_at(workspace: Workspace, when: float) -> MemoryStore:
    return MemoryStore(workspace, clock=lambda: when)


def by_id(analysis: gc.Analysis) -> dict[str, dict[str, Any]]:
    return {c["segment_id"]: c for c in map(analysis.candidate, range(len(analysis.candidates)))}


def factors_of(
    kind: str = "note", hours: float = 0.0, refcount: int = 0, survived: int = 0
) -> dict[str, float]:
    """The factors of one candidate, by the GC's one score (gc.score_factors)."""
    found = gc.score_factors(
        np.array([type_weight(kind)]), np.array([hours]), np.array([refcount]), np.array([survived])
    )
    return {name: float(value[0]) for name, value in found.items()}


def score_of(factors: dict[str, float]) -> float:
    return float(gc.scores({name: np.array([value]) for name, value in factors.items()})[0])


# -- one table per factor ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("hours", "expected"),
    [
        (0.0, 0.0),
        (0.5 / 60, 0.0),  # under a minute: whole minutes count
        (1 / 60, 0.0649),  # a minute
        (10 / 60, 0.2247),
        (1.0, 0.3851),
        (6.0, 0.5517),
        (24.0, 0.6814),
        (7 * 24.0, 0.8637),
        (30 * 24.0, 1.0),
        (365 * 24.0, 1.0),  # capped
    ],
)
def test_the_age_factor(hours: float, expected: float) -> None:
    assert factors_of(hours=hours)["age"] == pytest.approx(expected, abs=5e-5)


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("log", 1.0),
        ("message", 0.7),
        ("code", 0.6),
        ("note", 0.5),
        ("summary", 0.3),
        ("decision", 0.2),
        ("screenshot", 0.5),  # unknown types weigh as notes
    ],
)
def test_the_type_factor(kind: str, expected: float) -> None:
    assert type_weight(kind) == expected


@pytest.mark.parametrize(("refcount", "expected"), [(0, 1.0), (1, 0.5), (3, 0.25), (9, 0.1)])
def test_the_refcount_factor(refcount: int, expected: float) -> None:
    assert factors_of(refcount=refcount)["refcount"] == expected


@pytest.mark.parametrize(
    ("survived", "expected"), [(0, 1.0), (1, 1.0), (2, 0.6), (4, 0.6), (5, 0.3), (50, 0.3)]
)
def test_the_generation_factor(survived: int, expected: float) -> None:
    assert factors_of(survived=survived)["generation"] == expected


@pytest.mark.parametrize(
    ("factor", "weight"), [("age", 0.40), ("type", 0.25), ("refcount", 0.20), ("generation", 0.15)]
)
def test_each_factor_weighs_what_the_docs_say(factor: str, weight: float) -> None:
    base = {"age": 0.5, "type": 0.5, "refcount": 0.5, "generation": 0.5}
    assert score_of({**base, factor: 1.0}) - score_of({**base, factor: 0.0}) == pytest.approx(
        weight
    )


@given(
    kind=st.sampled_from(["log", "message", "code", "note", "summary", "decision", "odd"]),
    age=st.floats(min_value=0, max_value=1e9, allow_nan=False),
    refcount=st.integers(min_value=0, max_value=10_000),
    survived=st.integers(min_value=0, max_value=1000),
)
def test_every_factor_and_the_score_stay_in_the_unit_interval(
    kind: str, age: float, refcount: int, survived: int
) -> None:
    factors = factors_of(kind, age, refcount, survived)
    assert all(0.0 <= value <= 1.0 for value in factors.values())
    assert 0.0 <= score_of(factors) <= 1.0


# -- the same factors, through a real analysis ------------------------------------------


#: What docs/memory.md says, written out here rather than read from the code: young
#: below 2 runs survived, mature below 5, old after.
def documented_generation(survived: int) -> float:
    return 1.0 if survived < 2 else 0.6 if survived < 5 else 0.3


_project = iter(range(1_000_000))


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@example(segments=[("log", 123, 0)])  # hours from seconds: 123 min must not floor to 122
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["log", "message", "code", "note", "summary", "decision"]),
            st.integers(min_value=0, max_value=60 * 24 * 60),  # whole minutes untouched
            st.integers(min_value=0, max_value=8),  # GC runs survived
        ),
        min_size=1,
        max_size=6,
    )
)
def test_an_analysis_scores_every_candidate_as_documented(
    workspace: Workspace, segments: list[tuple[str, int, int]]
) -> None:
    """Segments of any type, age and survival count, none reachable: the analysis the
    GC runs scores each by the documented factors and weights, best first."""
    project = f"prop{next(_project)}"
    made = []
    for n, (kind, minutes, _) in enumerate(segments):
        then = store_at(workspace, T0 - minutes * 60.0)
        [segment] = then.add(project, [draft(f"segment {n} of {kind}", kind)])
        then.close()  # a store per example: its database must not stay open
        made.append(segment.id)
    store = store_at(workspace, T0)
    try:
        _analysed_as_documented(store, project, made, segments)
    finally:
        store.close()


def _analysed_as_documented(
    store: MemoryStore, project: str, made: list[str], segments: list[tuple[str, int, int]]
) -> None:
    with store.database.writing() as version:
        for segment_id, (_, _, survived) in zip(made, segments, strict=True):
            rowid = store.table.rowid(project, segment_id) or 0
            store.database.set_fields([rowid], version, gc_survival_count=survived)
    got = by_id(gc.analyze(store, project, now=T0))
    assert set(got) == set(made)
    for segment_id, (kind, minutes, survived) in zip(made, segments, strict=True):
        found = got[segment_id]["factors"]
        expected = {
            "age": min(1.0, math.log1p(minutes) / math.log1p(30 * 24 * 60)),
            "type": type_weight(kind),
            "refcount": 1.0,
            "generation": documented_generation(survived),
        }
        assert found == pytest.approx(expected, abs=2e-4), (segment_id, survived)
        assert got[segment_id]["score"] == pytest.approx(
            sum(WEIGHT[name] * value for name, value in expected.items()), abs=5e-4
        )
    ranked = [got[segment_id]["score"] for segment_id in gc.analyze(store, project, now=T0).ids()]
    assert ranked == sorted(ranked, reverse=True)


WEIGHT = {"age": 0.40, "type": 0.25, "refcount": 0.20, "generation": 0.15}


def test_each_factor_orders_candidates_that_differ_only_in_it(workspace: Workspace) -> None:
    """Pairs of segments equal but for one factor: the analysis scores them as the
    tables above say, factor by factor."""
    old = store_at(workspace, T0 - 3 * DAY)
    [aged] = old.add("p", [draft("same words here", "note")])
    fresh = store_at(workspace, T0 - HOUR)
    [young, logged, decided, cited, citing] = fresh.add(
        "p",
        [
            draft("same words here", "note"),
            draft("same words here", "log"),
            draft("same words here", "decision"),
            draft("same words here", "note"),
            draft("refers", "summary"),
        ],
    )
    fresh.change("p", [citing.id], lambda s: attrs.evolve(s, refs=(cited.id,)))
    survivor = store_at(workspace, T0 - HOUR).add("p", [draft("same words here", "note")])[0]
    database = fresh.database
    with database.writing() as version:  # five GC runs survived, this one only
        database.set_fields(
            [fresh.table.rowid("p", survivor.id) or 0], version, gc_survival_count=5
        )
    got = by_id(gc.analyze(fresh, "p", now=T0))
    base = got[young.id]
    assert base["factors"] == {"age": 0.3851, "type": 0.5, "refcount": 1.0, "generation": 1.0}
    assert base["score"] == pytest.approx(0.4 * 0.3851 + 0.25 * 0.5 + 0.2 + 0.15, abs=1e-4)
    expected_delta = {
        aged.id: ("age", 0.4 * (factors_of(hours=72.0)["age"] - factors_of(hours=1.0)["age"])),
        logged.id: ("type", 0.25 * (1.0 - 0.5)),
        decided.id: ("type", 0.25 * (0.2 - 0.5)),
        cited.id: ("refcount", 0.2 * (0.5 - 1.0)),
        survivor.id: ("generation", 0.15 * (0.3 - 1.0)),
    }
    for segment_id, (factor, delta) in expected_delta.items():
        other = got[segment_id]
        changed = {k for k in base["factors"] if other["factors"][k] != base["factors"][k]}
        assert changed == {factor}, segment_id
        assert other["score"] - base["score"] == pytest.approx(delta, abs=2e-4), factor
    ranked = [segment_id for segment_id in got if segment_id != citing.id]
    assert ranked == [aged.id, logged.id, young.id, decided.id, cited.id, survivor.id]


def test_scores_spread_over_the_unit_interval_for_a_realistic_mix(workspace: Workspace) -> None:
    """Ages from a minute to a month, every type, some references, pins and survivors:
    the scores use most of [0, 1], and fresh segments are not told apart by type alone."""
    kinds = ["message", "code", "log", "decision", "note", "summary"]
    ages_hours = [1 / 60, 0.25, 1, 4, 12, 24, 72, 7 * 24, 14 * 24, 30 * 24]
    made: list[tuple[str, float, str]] = []
    for n, hours in enumerate(ages_hours):
        store = store_at(workspace, T0 - hours * HOUR)
        added = store.add(
            "p", [draft(f"{kind} {n}", kind, pinned=n == 3 and kind == "note") for kind in kinds]
        )
        made += [(s.id, hours, s.type) for s in added]
    now = store_at(workspace, T0)
    ids = [i for i, _, _ in made]
    now.change("p", ids[::7], lambda s: attrs.evolve(s, refs=(ids[0], ids[1])))
    analysis = gc.analyze(now, "p", now=T0)
    scores = sorted(float(s) for s in analysis.scores)
    assert len(scores) == len(made) - 1  # the pinned one is a root
    assert scores[0] < 0.35 and scores[-1] > 0.9
    quartiles = [scores[len(scores) * q // 4] for q in (1, 2, 3)]
    assert quartiles[2] - quartiles[0] > 0.15
    # Among segments a minute to an hour old, age reorders what type alone would.
    got = by_id(analysis)
    fresh = {(hours, kind): got[i]["score"] for i, hours, kind in made if hours <= 1 and i in got}
    assert fresh[(1, "decision")] > fresh[(1 / 60, "summary")]
    assert fresh[(1, "note")] > fresh[(1 / 60, "code")]


# -- roots, reachability, plans ---------------------------------------------------------


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
    assert pinned.id not in nothing.ids() and len(nothing.ids()) == 10

    store.change("p", [pinned.id], lambda s: attrs.evolve(s, refs=(a.id,)))
    store.set_current_task("p", "c2c2c2")
    analysis = gc.analyze(store, "p", current_file="src/app.py", now=T0 + DAY)
    assert analysis.ids() == [lone.id]
    table = store.table
    roots = {table.segment_id(r) for r in analysis.roots}
    reached = {table.segment_id(r) for r in analysis.reached}
    assert {pinned.id, of_file.id, of_card.id, of_dep.id, cites_card.id} <= roots
    # The cycle ends, and reaching topic_a reaches its whole topic.
    assert {a.id, b.id, c.id, topic_a.id, topic_b.id} <= reached


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
    assert set(analysis.ids()) == {made[0].id, made[1].id}


def test_plans_meet_a_target_or_say_how_much_of_it(workspace: Workspace) -> None:
    store = store_at(workspace, T0 - 10 * DAY)
    store.add("p", [draft("log line " * 50, "log") for _ in range(3)])
    analysis = gc.analyze(store, "p", now=T0)
    tokens = [int(t) for t in analysis.candidate_tokens]
    total = sum(tokens)
    met = gc.plan(analysis, tokens[0])
    assert met["target_met"] and met["stash_segments"] == analysis.ids(1)
    assert met["candidates_count"] == 1 and "met" in met["reason"]
    partly = gc.plan(analysis, total + 1000)
    assert not partly["target_met"] and partly["candidates_count"] == 3
    assert partly["total_tokens_freed"] == total
    assert f"{total:,} of {total + 1000:,}" in partly["reason"]


def test_references_kept_in_step_through_inserts_are_those_worked_out_afresh(
    workspace: Workspace,
) -> None:
    """After inserts only the new rows' references are read; a row inserted later that
    an earlier reference named (a forward reference) is linked all the same."""
    from cuedeck_memory.table import SegmentTable

    store = store_at(workspace, T0)
    [a] = store.add("p", [draft("first")])
    [b] = store.add("p", [draft("names a, one to come and a card", refs=(a.id, "later", "c2c2c2"))])

    def pairs(links: Any) -> list[tuple[int, int]]:
        return sorted(zip(links.sources.tolist(), links.targets.tolist(), strict=True))

    before = pairs(store.table.links())
    store.add("p", [attrs.evolve(draft("the one to come", refs=(b.id,)), id="later")])
    store.add("p", [draft("names b", refs=(b.id,)), draft("names nothing")])
    kept = store.table.links()
    afresh = SegmentTable()
    afresh.sync(store.database)
    assert pairs(kept) == pairs(afresh.links()) and len(pairs(kept)) == len(before) + 3
    assert (
        sorted(kept.cards)
        == sorted(afresh.links().cards)
        == [(store.table.rowid("p", b.id), "c2c2c2")]
    )


def test_a_table_kept_in_step_by_this_process_writes_is_the_store_read_afresh(
    workspace: Workspace,
) -> None:
    """Captures, pins, stashes, GC runs and touches reach the table without reading the
    rows back; what it holds then is what a table reading the store holds."""
    import numpy as np

    from cuedeck_memory.pruning import prune, set_pinned
    from cuedeck_memory.table import SegmentTable

    store = store_at(workspace, T0)
    made = store.add("p", [draft(f"segment {n}", tags=(f"t{n % 2}",)) for n in range(6)])
    store.add("q", [draft("another project")])
    ids = [s.id for s in made]
    table = store.table
    version = table.version
    set_pinned(store, "p", ids[:1], True)
    prune(store, "p", ids[1:3], "stash", False, None)  # a GC run: the working survive one
    store.touch("p", ids[3:4], T0 + 60)
    # Every write taken as it was made: nothing is left to read back.
    assert table.version == version + 4 and table.sync(store.database) == 0
    afresh = SegmentTable()
    afresh.sync(store.database)
    live = afresh.rows(None)
    assert np.array_equal(store.table.rows(None), live)
    for name in ("pinned", "stashed", "survived", "touched", "tokens", "created", "hash64"):
        assert np.array_equal(getattr(table, name)[live], getattr(afresh, name)[live]), name
    assert all(table.ids_of(c) == afresh.ids_of(c) for c in range(len(afresh.projects.strings)))
    assert table.survived[table.rowid("p", ids[5])] == 1  # another project's rows: none
    assert table.survived[table.rows("q")].tolist() == [0]
