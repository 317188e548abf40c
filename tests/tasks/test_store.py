"""The card store on real files: create, read, update, conflicts, dependencies, the cache."""

from __future__ import annotations

import os
import re
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuedeck.errors import Conflict, CueError, FileNotFound, InvalidInput
from cuedeck.markdown.frontmatter import load as load_frontmatter
from cuedeck.text import split_lines
from cuedeck.workspace import Workspace, open_workspace
from cuedeck_tasks.cards import new_id
from cuedeck_tasks.errors import CircularDependency, DependencyNotFound
from cuedeck_tasks.store import CACHE_FILE, CardChanges, CardStore
from tests.tasks.conftest import CardsFactory, card_text, store_of

STAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")


def file_of(workspace: Workspace, card_id: str) -> Path:
    return workspace.root / ".cuedeck" / "cards" / f"{card_id}.md"


def test_create_writes_every_field(chain: Workspace) -> None:
    store = store_of(chain)
    card = store.create(
        "Add refresh tokens",
        priority="high",
        assignee="@dana",
        tags=["auth", "api", "auth"],
        depends_on=["c3c3c3", "a1a1a1"],
        body="Rotate on every use.",
    )
    assert re.fullmatch(r"[a-z0-9]{6}", card.id)
    assert card.path == f".cuedeck/cards/{card.id}.md"
    text = file_of(chain, card.id).read_text(encoding="utf-8")
    data, _body, problems = load_frontmatter(split_lines(text), card.path)
    assert not problems
    assert list(data) == [
        "id",
        "title",
        "status",
        "priority",
        "assignee",
        "tags",
        "depends_on",
        "created",
        "updated",
    ]
    assert data["id"] == card.id
    assert data["title"] == "Add refresh tokens"
    assert data["status"] == "todo"
    assert data["priority"] == "high"
    assert data["assignee"] == "@dana"
    assert data["tags"] == ["auth", "api"]
    assert data["depends_on"] == ["c3c3c3", "a1a1a1"]
    assert STAMP.match(str(data["created"])) and data["updated"] == data["created"]
    assert text.endswith("---\n# Add refresh tokens\n\nRotate on every use.\n")
    assert store.get(card.id) == card


def test_create_uses_the_configured_default_priority(workspace_with: CardsFactory) -> None:
    workspace = workspace_with(config='[tasks]\ndefault_priority = "low"\n')
    card = store_of(workspace).create("Something")
    assert card.priority == "low"
    assert "assignee" not in file_of(workspace, card.id).read_text()


def test_new_ids_differ_for_the_same_title_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # The same nanosecond: only the salt tells them apart. 200 ids among 36**6 collide
    # with a chance of about 1 in 100,000 (2,000 did about once in a thousand runs).
    monkeypatch.setattr("cuedeck_tasks.cards.time.time_ns", lambda: 1_700_000_000_000_000_000)
    ids = {new_id("Same title") for _ in range(200)}
    assert len(ids) == 200
    assert all(re.fullmatch(r"[a-z0-9]{6}", i) for i in ids)


def test_create_skips_ids_that_exist_or_are_named_by_a_dangling_dependency(
    workspace_with: CardsFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = workspace_with({"aaaaaa": card_text("aaaaaa", "Exists", depends_on=("bbbbbb",))})
    proposed = iter(["aaaaaa", "bbbbbb", "cccccc"])
    monkeypatch.setattr("cuedeck_tasks.store.new_id", lambda title: next(proposed))
    assert store_of(workspace).create("New").id == "cccccc"


def test_missing_dependency_on_create_writes_nothing(chain: Workspace) -> None:
    before = sorted(os.listdir(chain.root / ".cuedeck" / "cards"))
    with pytest.raises(DependencyNotFound) as caught:
        store_of(chain).create("New", depends_on=["b2b2b3"])
    error = caught.value
    assert error.code == 1001
    assert error.data["id"] == "b2b2b3"
    assert error.data["candidates"] == ["b2b2b2"]
    assert error.data["suggestion"] == "Did you mean 'b2b2b2'?"
    assert sorted(os.listdir(chain.root / ".cuedeck" / "cards")) == before


def test_get_unknown_card_suggests_similar_ids(chain: Workspace) -> None:
    with pytest.raises(FileNotFound) as caught:
        store_of(chain).get("a1a1a2")
    assert caught.value.data["candidates"] == ["a1a1a1"]
    with pytest.raises(InvalidInput) as bad:
        store_of(chain).get("NOT-AN-ID")
    assert bad.value.data["field"] == "id"


def test_resolve_accepts_unique_prefixes(chain: Workspace) -> None:
    store = store_of(chain)
    assert store.resolve("b2") == "b2b2b2"
    assert store.resolve("c3c3c3") == "c3c3c3"
    another = store.create("Another b", depends_on=[])
    # Ids are random: a prefix no card's id starts with (not always "zz").
    unused = next(p for p in ("zz", "zy", "zx") if not another.id.startswith(p))
    with pytest.raises(FileNotFound):
        store.resolve(unused)


def test_update_changes_only_the_named_fields_byte_for_byte(workspace_with: CardsFactory) -> None:
    original = (
        "---\n"
        "# a comment at the top\n"
        "id: abc123\n"
        "title: Hand written\n"
        "x-custom: {keep: [1, 2]}   # custom stuff\n"
        "status: todo\n"
        "priority: low\n"
        "estimate: 3\n"
        "tags:\n"
        "  - one\n"
        "depends_on: []\n"
        "created: 2026-01-01\n"
        "updated: 2026-01-01\n"
        "---\n"
        "Body *stays*   \n"
        "\n"
        "## Acceptance\n"
        "- exactly as written\n"
    )
    workspace = workspace_with({"abc123": original})
    result = store_of(workspace).update("abc123", CardChanges(status="active", priority="high"))
    assert result.fields == ("status", "priority")
    after = file_of(workspace, "abc123").read_text()
    old_lines, new_lines = original.splitlines(True), after.splitlines(True)
    assert len(old_lines) == len(new_lines)
    differing = [(a, b) for a, b in zip(old_lines, new_lines, strict=True) if a != b]
    assert [b for _a, b in differing][:2] == ["status: active\n", "priority: high\n"]
    assert differing[2][1].startswith("updated: ")
    assert len(differing) == 3
    assert result.card.status == "active" and result.card.priority == "high"
    assert STAMP.match(result.card.updated or "")


def test_update_every_field(chain: Workspace) -> None:
    store = store_of(chain)
    store.update("c3c3c3", CardChanges(add_tags=("auth", "backend")))
    result = store.update(
        "c3c3c3",
        CardChanges(
            title='Login: "v2" #1',
            status="done",
            priority="critical",
            assignee="Lee",
            note="Shipped behind a flag",
            add_tags=("security",),
            remove_tags=("auth",),
            add_depends_on=("a1a1a1",),
            remove_depends_on=("b2b2b2",),
        ),
    )
    assert result.fields == (
        "title",
        "status",
        "priority",
        "assignee",
        "tags",
        "depends_on",
        "notes",
    )
    card = store.get("c3c3c3")
    assert card.title == 'Login: "v2" #1'
    assert card.status == "done" and card.priority == "critical" and card.assignee == "Lee"
    assert card.tags == ("backend", "security")
    assert card.depends_on == ("a1a1a1",)
    text = store.text("c3c3c3")
    assert re.search(
        r"\n## Notes\n\n- \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ: Shipped behind a flag\n$", text
    )
    assert "\n# Implement login\n" in text  # the body heading is the body's business

    unassigned = store.update("c3c3c3", CardChanges(assignee=""))
    assert unassigned.fields == ("assignee",) and unassigned.card.assignee is None
    assert "assignee" not in store.text("c3c3c3")


def test_an_update_that_changes_nothing_writes_nothing(chain: Workspace) -> None:
    path = file_of(chain, "b2b2b2")
    before = path.read_bytes(), path.stat().st_mtime_ns
    result = store_of(chain).update("b2b2b2", CardChanges(status="todo", add_tags=()))
    assert result.fields == ()
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before


def test_update_input_errors_name_the_field(chain: Workspace) -> None:
    store = store_of(chain)
    cases = [
        (CardChanges(status="blocked"), "status"),
        (CardChanges(priority="urgent"), "priority"),
        (CardChanges(add_depends_on=("BAD",)), "depends_on"),
        (CardChanges(title="  "), "title"),
        (CardChanges(note="\ud800"), "notes"),
        (CardChanges(), "updates"),
    ]
    for changes, field in cases:
        with pytest.raises(InvalidInput) as caught:
            store.update("b2b2b2", changes)
        assert caught.value.data["field"] == field
    with pytest.raises(FileNotFound):
        store.update("zzzzzz", CardChanges(status="done"))


def test_a_cycle_is_refused_and_nothing_is_written(chain: Workspace) -> None:
    path = file_of(chain, "a1a1a1")
    before = path.read_bytes()
    with pytest.raises(CircularDependency) as caught:
        store_of(chain).update("a1a1a1", CardChanges(add_depends_on=("c3c3c3",), note="x"))
    error = caught.value
    assert error.code == 1002
    assert error.data["cycle_path"] == ["a1a1a1", "c3c3c3", "b2b2b2", "a1a1a1"]
    assert error.message == "cycle detected: a1a1a1 → c3c3c3 → b2b2b2 → a1a1a1"
    assert "c3c3c3 already depends on a1a1a1" in error.data["suggestion"]
    assert path.read_bytes() == before
    with pytest.raises(CircularDependency) as self_loop:
        store_of(chain).update("a1a1a1", CardChanges(add_depends_on=("a1a1a1",)))
    assert self_loop.value.data["cycle_path"] == ["a1a1a1", "a1a1a1"]
    assert path.read_bytes() == before


def test_missing_dependency_on_update_writes_nothing(chain: Workspace) -> None:
    path = file_of(chain, "c3c3c3")
    before = path.read_bytes()
    with pytest.raises(DependencyNotFound) as caught:
        store_of(chain).update("c3c3c3", CardChanges(add_depends_on=("a1a1a2",)))
    assert caught.value.data["candidates"] == ["a1a1a1"]
    assert caught.value.path == ".cuedeck/cards/c3c3c3.md"
    assert path.read_bytes() == before


def test_a_stale_base_conflicts_only_when_the_same_field_changed(chain: Workspace) -> None:
    store = store_of(chain)
    base = store.get("b2b2b2")
    store.update("b2b2b2", CardChanges(status="active"))  # someone else
    with pytest.raises(Conflict) as caught:
        store.update("b2b2b2", CardChanges(status="done"), base=base)
    error = caught.value
    assert error.code == 1005
    assert error.data["fields"] == ["status"]
    assert error.data["current_hash"] == store.get("b2b2b2").sha256
    assert error.data["expected_hash"] == base.sha256
    # Other fields from the same stale read merge onto the current file.
    merged = store.update("b2b2b2", CardChanges(priority="high", note="n"), base=base)
    assert merged.card.status == "active" and merged.card.priority == "high"
    # Asking for the value someone else already set is no conflict either.
    assert store.update("b2b2b2", CardChanges(status="active"), base=base).fields == ()


def test_a_card_with_broken_yaml_is_listed_with_a_problem_and_not_rewritten(
    workspace_with: CardsFactory,
) -> None:
    workspace = workspace_with(
        {"abc123": "---\ntitle: [broken\n---\nbody\n", "def456": card_text("def456", "Fine")}
    )
    store = store_of(workspace)
    broken = store.get("abc123")
    assert broken.title == "abc123" and broken.problems
    with pytest.raises(InvalidInput) as caught:
        store.update("abc123", CardChanges(status="done"))
    assert caught.value.path == ".cuedeck/cards/abc123.md"
    assert caught.value.line in (2, 3)  # where YAML noticed the unclosed list
    assert (
        workspace.root / ".cuedeck/cards/abc123.md"
    ).read_text() == "---\ntitle: [broken\n---\nbody\n"


def test_lenient_reading_of_hand_edited_cards(workspace_with: CardsFactory) -> None:
    workspace = workspace_with(
        {
            "abc123": "---\nid: zzz999\ntitle: T\nstatus: blocked\ntags: solo\n"
            "depends_on: def456\n---\n",
            "def456": "# No frontmatter at all\n",
        }
    )
    store = store_of(workspace)
    card = store.get("abc123")
    assert card.tags == ("solo",) and card.depends_on == ("def456",)
    assert card.status == "blocked"
    assert any("differs from the file name" in p for p in card.problems)
    assert any("status 'blocked'" in p for p in card.problems)
    bare = store.get("def456")
    assert (bare.title, bare.status, bare.priority) == (
        "No frontmatter at all",
        "todo",
        "medium",
    )  # its heading
    # Files that are not named <id>.md are not cards.
    (workspace.root / ".cuedeck/cards/notes.md").write_text("---\ntitle: x\n---\n")
    assert list(store.all()) == ["abc123", "def456"]


def test_the_cache_survives_processes_and_sees_outside_edits(chain: Workspace) -> None:
    first = store_of(chain).all()
    assert (chain.root / CACHE_FILE).exists()
    with sqlite3.connect(chain.root / CACHE_FILE) as db:
        assert db.execute("SELECT count(*) FROM cards").fetchone() == (3,)
    fresh = CardStore(chain.root)  # a new process would start like this
    assert fresh.all() == first
    path = file_of(chain, "b2b2b2")
    path.write_text(path.read_text().replace("Create the users table", "Edited by hand"))
    assert CardStore(chain.root).get("b2b2b2").title == "Edited by hand"
    assert fresh.all()["b2b2b2"].title == "Edited by hand"
    path.unlink()
    assert "b2b2b2" not in fresh.all()


def test_a_corrupt_cache_is_ignored(chain: Workspace) -> None:
    (chain.root / CACHE_FILE).parent.mkdir(parents=True, exist_ok=True)
    (chain.root / CACHE_FILE).write_bytes(b"this is not sqlite" * 100)
    assert sorted(CardStore(chain.root).all()) == ["a1a1a1", "b2b2b2", "c3c3c3"]


def test_the_store_is_the_workspace_cards_service(chain: Workspace) -> None:
    assert CardStore.of(chain) is CardStore.of(chain)
    assert isinstance(CardStore.of(chain), CardStore)
    again = open_workspace(chain.root)
    assert CardStore.of(again) is not CardStore.of(chain)
    assert CardStore.of(again).root == chain.root


def test_writes_are_atomic_and_keep_the_file_mode(chain: Workspace) -> None:
    path = file_of(chain, "b2b2b2")
    path.chmod(0o600)
    store_of(chain).update("b2b2b2", CardChanges(note="x"))
    assert path.stat().st_mode & 0o777 == 0o600
    leftovers = [n for n in os.listdir(path.parent) if n.endswith(".tmp")]
    assert leftovers == []


#: Labels may hold any visible text: no controls, bidi overrides or surrogates (labels.py).
HOSTILE_TEXT = st.text(
    st.characters(
        exclude_categories=["Cs", "Cc"],
        exclude_characters="\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069",
    ),
    min_size=1,
    max_size=400,
).filter(lambda s: bool(s.strip()))
#: Notes span lines: anything but NUL and surrogates.
HOSTILE_NOTES = st.text(
    st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), min_size=1, max_size=400
).filter(lambda s: bool(s.strip()))


@pytest.mark.slow
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(title=HOSTILE_TEXT, assignee=HOSTILE_TEXT, tag=HOSTILE_TEXT, note=HOSTILE_NOTES)
def test_hostile_values_round_trip_through_create_and_update(
    chain: Workspace, title: str, assignee: str, tag: str, note: str
) -> None:
    store = store_of(chain)
    card = store.create(title, assignee=assignee, tags=[tag], depends_on=["a1a1a1"])
    assert (card.title, card.assignee, card.tags) == (title, assignee, (tag,))
    fresh = CardStore(chain.root).get(card.id)
    assert (fresh.title, fresh.assignee, fresh.tags) == (title, assignee, (tag,))
    updated = store.update(card.id, CardChanges(title=title[::-1], note=note)).card
    assert updated.title == title[::-1] and updated.assignee == assignee
    (chain.root / updated.path).unlink()


def test_very_long_titles_round_trip(chain: Workspace) -> None:
    title = "Long: " + "word # @x 'q' " * 2000
    card = store_of(chain).create(title)
    assert CardStore(chain.root).get(card.id).title == title


def test_unwritable_text_is_refused_before_writing(chain: Workspace) -> None:
    with pytest.raises(InvalidInput) as caught:
        store_of(chain).create("bad \udcff surrogate")
    assert caught.value.data["field"] == "title"
    assert isinstance(caught.value, CueError)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("title", "drop\x00table"),
        ("title", "Fix login\u202e\u2066 // admin only"),
        ("title", "two\nlines"),
        ("tags", "ok\u2069"),
        ("assignee", "dana\x1b[31m"),
    ],
)
def test_labels_that_hide_or_reorder_text_are_refused(
    chain: Workspace, field: str, value: str
) -> None:
    store = store_of(chain)
    before = sorted(p.name for p in (chain.root / ".cuedeck" / "cards").iterdir())
    arguments = {"tags": [value]} if field == "tags" else {field: value}
    title = arguments.pop("title", "A plain title")
    with pytest.raises(InvalidInput) as refused:
        store.create(title, **arguments)
    assert (refused.value.code, refused.value.data["field"]) == (1004, field)
    with pytest.raises(InvalidInput):
        store.update(
            "a1a1a1", CardChanges(**({"add_tags": (value,)} if field == "tags" else {field: value}))
        )
    assert sorted(p.name for p in (chain.root / ".cuedeck" / "cards").iterdir()) == before


def test_values_of_the_wrong_type_are_reported_not_rewritten(chain: Workspace) -> None:
    from cuedeck.doctor import diagnose

    path = chain.root / ".cuedeck" / "cards" / "d4d4d4.md"
    original = "---\ntitle: Odd card\nstatus: 7\ntags: {a: 1}\nassignee: [x, [y]]\n---\n# Odd\n"
    path.write_text(original)
    card = store_of(chain).get("d4d4d4")
    assert card.tags == () and card.assignee is None and card.status == "7"
    assert set(card.malformed) == {"tags", "assignee"}
    assert 'tags must be a list of text, not a mapping: {"a": 1}' in card.problems
    assert "status '7' is not one of todo, active, done, archived" in card.problems
    with pytest.raises(InvalidInput) as refused:
        store_of(chain).update("d4d4d4", CardChanges(add_tags=("new",)))
    assert refused.value.data["field"] == "tags"
    assert path.read_text() == original  # nothing rewritten into a repr string
    store_of(chain).update("d4d4d4", CardChanges(priority="high"))  # other fields still work
    assert "tags: {a: 1}" in path.read_text()
    problems = [p for p in diagnose(chain) if p.path == ".cuedeck/cards/d4d4d4.md"]
    assert {(p.severity, p.message.split(" ")[0]) for p in problems} == {
        ("error", "tags"),
        ("error", "assignee"),
        ("warning", "status"),
    }


def test_the_card_cache_keeps_every_field(chain: Workspace) -> None:
    path = chain.root / ".cuedeck" / "cards" / "e5e5e5.md"
    path.write_text("---\ntitle: Cached\ntags: {a: 1}\n---\n# Cached\n")
    first = CardStore(chain.root).all()["e5e5e5"]  # parsed, then saved to the cache
    second = CardStore(chain.root).all()["e5e5e5"]  # a new store reads the cache
    assert second == first
    assert second.malformed == ("tags",)
