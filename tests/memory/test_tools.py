"""The memory tools on real files and a real SQLite cache."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from cuedeck.errors import ConfirmationRequired, FileNotFound, InvalidInput
from cuedeck.layout import CONFIRMATIONS_PATH
from cuedeck.state import active_card
from cuedeck.workspace import Workspace, open_workspace
from tests.conftest import needs
from tests.memory.conftest import KEY, call, store_of

Capture = Callable[..., list[str]]


def stored(workspace: Workspace, segment_id: str, project: str = "p") -> Any:
    """The segment as a new process reads it from the store, or None."""
    return store_of(open_workspace(workspace.root)).get(project, [segment_id]).get(segment_id)


def test_capture_masks_secrets_before_writing(workspace: Workspace, capture: Capture) -> None:
    [segment_id] = capture(f"the key is {KEY}", type="message")
    assert stored(workspace, segment_id).text == "the key is [REDACTED:stripe-secret-key#1]"
    shown = call(workspace, "context_get_working_set", project_id="p")
    assert KEY not in json.dumps(shown)


@pytest.mark.parametrize(
    "project", ["AKIAQYLPMN5HHHFPZAM2", "ghp_R4nd0mT0k3nV4lu3F0rTh3Fuzz3rT3st1ngX"]
)
def test_a_project_id_holding_a_secret_is_refused_not_stored(
    workspace: Workspace, project: str
) -> None:
    call(workspace, "context_capture", project_id="billing-2026", segments=[{"text": "x"}])
    for tool, arguments in (
        ("context_capture", {"segments": [{"text": "x"}]}),
        ("context_restore", {}),
        ("context_get_working_set", {}),
    ):
        with pytest.raises(InvalidInput) as refused:
            call(workspace, tool, project_id=project, **arguments)
        assert refused.value.data["field"] == "project_id"
        assert project not in str(refused.value)
    memory = workspace.root / ".cuedeck" / "memory"
    written = b"".join(p.read_bytes() for p in memory.rglob("*") if p.is_file())
    assert b"billing-2026" in written and project.encode() not in written


def test_pins_protect_from_pruning_and_unknown_ids_are_listed(
    workspace: Workspace, capture: Capture
) -> None:
    a, b = capture("first", "second")
    pinned = call(workspace, "context_gc_pin", project_id="p", segment_ids=[a, "nope"])
    assert pinned["pinned_segments"] == [a]
    assert [e["segment_id"] for e in pinned["errors"]] == ["nope"]
    assert not stored(workspace, b).pinned and stored(workspace, a).pinned
    pruned = call(
        workspace, "context_gc_prune", project_id="p", segment_ids=[a, b, "x"], action="stash"
    )
    assert pruned["pruned_segments"] == [b]
    assert {(e["segment_id"], e["error"]) for e in pruned["errors"]} == {
        (a, "pinned"),
        ("x", "not_found"),
    }
    candidates = call(workspace, "context_gc_analyze", project_id="p")["pruning_candidates"]
    assert a not in {c["segment_id"] for c in candidates}
    call(workspace, "context_gc_unpin", project_id="p", segment_ids=[a])
    candidates = call(workspace, "context_gc_analyze", project_id="p")["pruning_candidates"]
    assert a in {c["segment_id"] for c in candidates}


def test_every_prune_is_a_gc_run(workspace: Workspace, capture: Capture) -> None:
    a, _, c = capture("one", "two", "three")
    for _ in range(2):
        call(workspace, "context_gc_prune", project_id="p", segment_ids=[c], action="stash")
    [seg] = [
        s
        for s in call(workspace, "context_get_working_set", project_id="p")["segments"]
        if s["segment_id"] == a
    ]
    assert seg["gc_survival_count"] == 2 and seg["generation"] == "mature"


def test_delete_takes_a_confirmation_token(workspace: Workspace, capture: Capture) -> None:
    a, b, c = capture("one", "two", "three")
    with pytest.raises(InvalidInput):
        call(workspace, "context_gc_prune", project_id="p", segment_ids=[a], action="delete")
    first = call(
        workspace,
        "context_gc_prune",
        project_id="p",
        segment_ids=[a, b],
        action="delete",
        confirm=True,
    )
    assert first["requires_confirmation"] and first["segment_ids"] == sorted([a, b])
    assert first["expires_in_seconds"] == 300
    token = first["confirmation_token"]
    assert stored(workspace, a) is not None

    def delete(ids: list[str], token: str) -> Any:
        return call(
            workspace,
            "context_gc_prune",
            project_id="p",
            segment_ids=ids,
            action="delete",
            confirm=True,
            confirmation_token=token,
        )

    with pytest.raises(ConfirmationRequired) as wrong:
        delete([a, b], "AAAA-AAAA-AAAA")
    assert wrong.value.data["reason"] == "unknown or already used"
    other = call(
        workspace,
        "context_gc_prune",
        project_id="p",
        segment_ids=[a, b],
        action="delete",
        confirm=True,
    )
    with pytest.raises(ConfirmationRequired) as other_ids:
        delete([a, c], other["confirmation_token"])
    assert "other arguments" in other_ids.value.data["reason"]
    assert stored(workspace, c) is not None

    done = delete([b, a], token)  # the same ids in another order
    assert sorted(done["pruned_segments"]) == sorted([a, b]) and done["action"] == "deleted"
    assert stored(workspace, a) is None and stored(workspace, b) is None
    with pytest.raises(ConfirmationRequired) as reused:
        delete([a, b], token)
    assert reused.value.data["reason"] == "unknown or already used"

    late = call(
        workspace,
        "context_gc_prune",
        project_id="p",
        segment_ids=[c],
        action="delete",
        confirm=True,
    )
    pending_path = workspace.root / CONFIRMATIONS_PATH
    pending = json.loads(pending_path.read_text())
    for entry in pending.values():
        entry["expires"] -= 301  # five minutes and a second have passed
    pending_path.write_text(json.dumps(pending))
    with pytest.raises(ConfirmationRequired) as expired:
        delete([c], late["confirmation_token"])
    assert expired.value.data["reason"] == "expired"
    assert stored(workspace, c) is not None


def test_filters_as_a_json_string_and_ranked_queries(
    workspace: Workspace, capture: Capture
) -> None:
    capture(
        "the login form posts the password", type="code", file_path="src/login.py", tags=["auth"]
    )
    capture("password reset emails go out hourly", type="note", tags=["mail"])
    capture("a password password password policy", type="note", tags=["auth"])
    capture("unrelated build output", type="log")
    stashed = call(workspace, "context_stash", project_id="p", query="password")
    assert stashed["segments_matched"] == 3 and len(stashed["stashed_segments"]) == 3
    found = call(
        workspace,
        "context_search_stashed",
        project_id="p",
        query="password",
        filters=json.dumps({"tags": ["auth"]}),
    )
    assert found["ranking"] == "keyword" and found["total_matches"] == 2
    assert found["segments"][0]["text"] == "a password password password policy"
    assert found["segments"][0]["score"] >= found["segments"][1]["score"]
    by_path = call(
        workspace, "context_search_stashed", filters='{"file_path": "src/login.py", "type": "code"}'
    )
    assert [s["file_path"] for s in by_path["segments"]] == ["src/login.py"]
    later = call(
        workspace,
        "context_search_stashed",
        project_id="p",
        filters={"created_after": "2999-01-01T00:00:00Z"},
    )
    assert later["total_matches"] == 0
    with pytest.raises(InvalidInput) as bad:
        call(workspace, "context_search_stashed", filters='{"colour": "red"}')
    assert bad.value.data["field"] == "filters.colour"
    with pytest.raises(InvalidInput):
        call(workspace, "context_search_stashed", filters="{not json")
    back = call(
        workspace, "context_retrieve_stashed", project_id="p", query="reset", move_to_active=True
    )
    assert len(back["moved_to_active"]) == 1
    working = call(workspace, "context_get_working_set", project_id="p")
    assert {s["tier"] for s in working["segments"]} == {"working"} and working["segment_count"] == 2


@needs("cuedeck_tasks")
def test_set_current_task_activates_a_card(workspace: Workspace, capture: Capture) -> None:
    reply = call(workspace, "context_set_current_task", project_id="p", task_id="c2c2c2")
    assert reply["active_card"] == "c2c2c2" and reply["previous_task_id"] is None
    assert active_card(workspace.root) == "c2c2c2"
    assert "status: active" in (workspace.root / ".cuedeck/cards/c2c2c2.md").read_text()
    [segment_id] = capture("for the login card")
    context = call(workspace, "context_get_task_context", project_id="p")
    assert context["task_id"] == "c2c2c2" and context["segments"][0]["segment_id"] == segment_id
    plain = call(workspace, "context_set_current_task", project_id="p", task_id="refactor-api")
    assert plain["previous_task_id"] == "c2c2c2" and plain["active_card"] is None
    assert active_card(workspace.root) == "c2c2c2"
    cleared = call(workspace, "context_set_current_task", project_id="p")
    assert cleared["previous_task_id"] == "refactor-api"
    assert cleared["task_id"] == "c2c2c2"  # none set: the active card again


#: Every memory tool that takes a project, with the least its first call needs besides.
FIRST_CALLS: dict[str, dict[str, Any]] = {
    "context_analyze_usage": {},
    "context_get_working_set": {},
    "context_get_task_context": {"task_id": "t1"},
    "context_gc_analyze": {"target_tokens": 10},
    "context_gc_prune": {"segment_ids": ["nope"], "action": "stash"},
    "context_gc_pin": {"segment_ids": ["nope"]},
    "context_gc_unpin": {"segment_ids": ["nope"]},
    "context_stash": {"query": "nothing"},
    "context_retrieve_stashed": {"query": "nothing"},
    "context_set_current_task": {"task_id": "t1"},
    "context_create_task_snapshot": {"name": "first"},
    "context_capture": {"segments": [{"text": "the first thing said"}]},
    "context_restore": {},
}


def test_every_tool_answers_a_first_call_without_a_project(
    make_workspace: Callable[..., Any],
) -> None:
    """No project_id: the workspace's project, ``[memory] project`` (``default``)."""
    tools = open_workspace(make_workspace()).plugins.tools()
    with_project = {
        name
        for name, tool in tools.items()
        if name.startswith("context_") and "project_id" in tool.input_schema()["properties"]
    }
    assert with_project == set(FIRST_CALLS) | {"context_search_stashed"}  # it searches all
    for name, arguments in FIRST_CALLS.items():
        fresh = open_workspace(make_workspace())  # a first call: no store on disk yet
        reply = call(fresh, name, **arguments)
        assert isinstance(reply, dict), name
    chosen = open_workspace(make_workspace(config='[memory]\nproject = "payments"\n'))
    call(chosen, "context_capture", segments=[{"text": "kept in payments"}])
    assert call(chosen, "context_list_projects")["projects"] == ["payments"]
    assert call(chosen, "context_restore")["project_id"] == "payments"
    broken = open_workspace(make_workspace(config='[memory]\nproject = "two words"\n'))
    with pytest.raises(InvalidInput, match=r"^\[memory\] project: 'two words' is not a project id"):
        call(broken, "context_restore")


def test_the_current_task_follows_the_active_card_unless_set(workspace: Workspace) -> None:
    assert call(workspace, "context_analyze_usage")["task_id"] is None  # no active card yet
    card_file = workspace.root / ".cuedeck/cards/d3d3d3.md"
    card_file.write_text(card_file.read_text().replace("status: todo", "status: active"))
    workspace.invalidate()
    assert call(workspace, "context_analyze_usage")["task_id"] == "d3d3d3"
    [segment_id] = call(workspace, "context_capture", segments=[{"text": "on the card"}])[
        "segment_ids"
    ]
    assert stored(workspace, segment_id, "default").task_id == "d3d3d3"
    call(workspace, "context_set_current_task", task_id="refactor-api")  # set: it wins
    assert call(workspace, "context_analyze_usage")["task_id"] == "refactor-api"
    call(workspace, "context_set_current_task")  # cleared: the card again
    assert call(workspace, "context_restore")["task_id"] == "d3d3d3"


def test_snapshots_restore_and_paging(workspace: Workspace, capture: Capture) -> None:
    call(workspace, "context_set_current_task", project_id="p", task_id="t1")
    ids = capture(*[f"message number {n} " + "words " * 100 for n in range(30)], type="message")
    [decision] = capture("we chose sqlite", type="decision")
    call(workspace, "context_gc_pin", project_id="p", segment_ids=[ids[0]])
    snap = call(workspace, "context_create_task_snapshot", project_id="p", name="before-gc")
    assert snap["name"] == "before-gc" and snap["segments_snapshot"] == 31
    call(workspace, "context_gc_prune", project_id="p", segment_ids=ids[10:], action="stash")
    restored = call(workspace, "context_restore", project_id="p", max_tokens=1000)
    assert restored["snapshot"]["name"] == "before-gc"
    got = [s["segment_id"] for s in restored["segments"]]
    assert got[0] == ids[0] and got[1] == decision  # pins, then decisions
    assert len(json.dumps(restored)) < 1000 * 6 and restored["page"]["next_cursor"]
    assert restored["candidates"] == 31  # the working set plus what the snapshot adds
    pages, cursor = [], None
    while True:
        page = call(
            workspace, "context_get_task_context", project_id="p", max_tokens=800, cursor=cursor
        )
        pages.append([s["segment_id"] for s in page["segments"]])
        cursor = page["page"]["next_cursor"]
        if cursor is None:
            break
    assert len(pages) > 3 and sorted(i for page in pages for i in page) == sorted([*ids, decision])
    from cuedeck_memory.task_state import list_snapshots

    assert [s["name"] for s in list_snapshots(store_of(open_workspace(workspace.root)), "p")] == [
        "before-gc"
    ]


def test_usage_warnings_name_the_call_and_its_measured_effect(
    workspace: Workspace, capture: Capture
) -> None:
    capture(*["old log output " * 40 for _ in range(10)], type="log")
    report = call(workspace, "context_analyze_usage", project_id="p", token_limit=1300)
    usage = report["usage_metrics"]["usage_percent"]
    assert usage > 90
    [warning] = report["warnings"]
    assert warning["level"] == "urgent"
    action = report["suggested_actions"][0]
    assert action["tool"] == "context_gc_prune"
    freed = action["tokens_freed"]
    stashed = f"{action['segments']} segment{'s' * (action['segments'] != 1)}"
    assert f"stash {stashed} with context_gc_prune to free {freed:,} tokens" in warning["message"]
    assert all(0 <= v <= 1 for v in report["health_score"]["factors"].values())
    call(workspace, "context_gc_prune", **action["arguments"])
    after = call(workspace, "context_analyze_usage", project_id="p", token_limit=1300)
    assert after["usage_metrics"]["usage_percent"] == pytest.approx(
        action["usage_percent_after"], abs=0.01
    )


def test_descriptors_are_ingested(workspace: Workspace) -> None:
    descriptors = {
        "recent_messages": [{"role": "user", "content": "fix the login"}, "fix the login"],
        "current_file": {"path": "src/app.py", "line": 3},
        "token_usage": {"current": 150000, "limit": 200000},
    }
    first = call(
        workspace,
        "context_analyze_usage",
        project_id="p",
        context_descriptors=json.dumps(descriptors),
    )
    again = call(
        workspace, "context_analyze_usage", project_id="p", context_descriptors=descriptors
    )
    assert len(set(first["captured_segments"])) == 1  # deduplicated by hash
    assert again["captured_segments"] == first["captured_segments"]
    assert first["usage_metrics"]["total_tokens"] == 150000
    assert first["warnings"][0]["level"] == "warning"
    with pytest.raises(InvalidInput):
        call(workspace, "context_analyze_usage", project_id="p", context_descriptors="{")


def test_projects_and_unknown_segments(workspace: Workspace, capture: Capture) -> None:
    capture("a", project="alpha")
    capture("b", project="beta")
    assert call(workspace, "context_list_projects")["projects"] == ["alpha", "beta"]
    with pytest.raises(FileNotFound):
        store_of(workspace).segment("alpha", "missing")
    with pytest.raises(InvalidInput):
        call(workspace, "context_get_working_set", project_id="../escape")


def test_total_matches_is_the_true_count_past_the_limit(
    workspace: Workspace, capture: Capture
) -> None:
    capture(*[f"deploy step {n} of the release" for n in range(60)], type="log")
    capture(*[f"unrelated note {n}" for n in range(15)])
    capture("deploy notes of another project", project="q")
    call(workspace, "context_stash", project_id="p", filters={"type": "log"})
    call(workspace, "context_stash", project_id="p", query="unrelated")
    call(workspace, "context_stash", project_id="q", query="deploy")
    found = call(workspace, "context_search_stashed", project_id="p", query="deploy", limit=5)
    assert found["total_matches"] == 60 and len(found["segments"]) == 5
    everywhere = call(workspace, "context_search_stashed", query="deploy", limit=5)
    assert everywhere["total_matches"] == 61
    listed = call(workspace, "context_search_stashed", project_id="p", limit=3)
    assert listed["total_matches"] == 75 and listed["ranking"] == "newest first"
    assert len(listed["segments"]) == 3
    logs = call(
        workspace, "context_search_stashed", project_id="p", filters={"type": "log"}, limit=1
    )
    assert logs["total_matches"] == 60
    retrieved = call(workspace, "context_retrieve_stashed", project_id="p", query="unrelated")
    assert retrieved["segments_found"] == 15


def test_an_unpaged_reply_is_refused(workspace: Workspace, capture: Capture) -> None:
    capture("one")
    with pytest.raises(InvalidInput) as refused:
        call(workspace, "context_gc_analyze", project_id="p", max_tokens=10_000_000)
    assert refused.value.data["field"] == "max_tokens"


def test_advice_and_plans_fit_the_reply_budget(workspace: Workspace, capture: Capture) -> None:
    # 400 small logs and a window they fill to 90%: the full plan names hundreds of ids.
    ids = capture(*[f"log line {n} of a noisy build" for n in range(400)], type="log")
    store = store_of(workspace)
    tokens = int(store.table.tokens[store.table.rows("p")].sum())
    limit = int(tokens / 0.9)
    count = workspace.token_counter.count
    report = call(
        workspace, "context_analyze_usage", project_id="p", token_limit=limit, max_tokens=1000
    )
    assert count(json.dumps(report)) <= 1000
    [action] = report["suggested_actions"]
    assert action["complete"] is False and 0 < action["segments"] < action["segments_in_plan"]
    kept = action["arguments"]["segment_ids"]
    assert len(kept) == action["segments"] and set(kept) <= set(ids)
    assert action["tokens_freed"] == sum(s.tokens for s in store.get("p", kept).values())
    assert f"stash {action['segments_in_plan']} segments" in report["warnings"][0]["message"]
    # The whole plan stays reachable: its ids are the first candidates, page by page.
    plan_reply = call(
        workspace, "context_gc_analyze", project_id="p", target_tokens=tokens, max_tokens=1000
    )
    assert count(json.dumps(plan_reply)) <= 1000
    plan = plan_reply["pruning_plan"]
    assert plan["stash_segments_complete"] is False
    assert len(plan["stash_segments"]) < plan["candidates_count"] == 400
    seen, cursor = [], None
    while True:
        page = call(
            workspace,
            "context_gc_analyze",
            project_id="p",
            target_tokens=tokens,
            max_tokens=1000,
            cursor=cursor,
        )
        seen += [c["segment_id"] for c in page["pruning_candidates"]]
        cursor = page["page"]["next_cursor"]
        if cursor is None:
            break
    assert seen[: len(plan["stash_segments"])] == plan["stash_segments"]
    assert sorted(seen) == sorted(ids)
    small = call(workspace, "context_analyze_usage", project_id="p", token_limit=limit * 10)
    assert small["suggested_actions"] == [] and "complete" not in json.dumps(small)


@pytest.mark.parametrize("max_tokens", [100, 400, 2_000, 100_000])
def test_a_page_taken_uncounted_while_its_bytes_fit_is_the_counted_page(
    workspace: Workspace, max_tokens: int
) -> None:
    """Items whose UTF-8 bytes fit are taken without counting their tokens; the page is
    the one counting every item gives (a cut first item included)."""
    from cuedeck_memory.fitting import page

    count = workspace.token_counter.count
    texts = [("déjà vu, naïve café " * (1 + n % 7)) + "x" * (n * 13) for n in range(40)]

    def item(n: int) -> dict[str, Any]:
        return {"segment_id": f"s{n}", "text": texts[n]}

    def taken(**bound: bool) -> tuple[list[dict[str, Any]], Any]:
        return page(len(texts), item, count, max_tokens, used=10, **bound)

    assert taken(bytes_bound=True) == taken()


def test_a_snapshot_of_a_task_records_who_held_its_card(workspace: Workspace) -> None:
    pytest.importorskip("cuedeck_tasks")
    card = workspace.root / ".cuedeck" / "cards" / "c1a1m1.md"
    card.parent.mkdir(parents=True, exist_ok=True)
    card.write_text("---\nid: c1a1m1\ntitle: Held\nstatus: todo\n---\n# Held\n")
    claim = call(workspace, "claim_task", id="c1a1m1", agent="ann")
    held = call(workspace, "context_create_task_snapshot", project_id="p", task_id="c1a1m1")
    assert held["held_by"] == {"agent": "ann", "since": claim["since"], "until": claim["until"]}
    call(workspace, "release_task", id="c1a1m1", agent="ann")
    free = call(workspace, "context_create_task_snapshot", project_id="p", task_id="c1a1m1")
    assert free["held_by"] is None
    from cuedeck_memory.task_state import list_snapshots

    listed = list_snapshots(store_of(workspace), "p")
    assert [s["held_by"] and s["held_by"]["agent"] for s in listed] == [None, "ann"]
