"""The shared store's contract, on both implementations: members, confirmation tokens,
rate-limit buckets, the audit trail; PostgreSQL's migrations and its clear failure."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from cuedeck.errors import InvalidInput
from cuedeck.settings import RateLimit
from cuedeck_mcp.errors import RateLimited
from cuedeck_team.errors import StoreUnavailable
from cuedeck_team.store import open_store

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from cuedeck_team.store import TeamStore


@pytest.fixture
def store(home: Path, team_database: str) -> Iterator[TeamStore]:
    opened = open_store(home, team_database)
    try:
        yield opened
    finally:
        opened.close()


def test_the_configuration_chooses_the_store(
    home: Path, store_kind: str, team_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUEDECK_TEAM_DATABASE", team_database)
    opened = open_store(home)
    try:
        assert opened.kind == store_kind
    finally:
        opened.close()


def test_the_home_config_names_the_database(
    home: Path, postgres: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CUEDECK_TEAM_DATABASE", raising=False)
    url = postgres.url()
    config = home / ".cuedeck" / "config.toml"
    config.write_text(config.read_text() + f'\n[team]\ndatabase = "{url}"\n')
    opened = open_store(home)
    try:
        assert opened.kind == "postgresql"
    finally:
        opened.close()


def test_members_sign_in_by_token_until_removed(store: TeamStore) -> None:
    alice = store.add_member("alice", "write")
    bob = store.add_member("bob", "read")
    assert [(m.name, m.role) for m in store.members()] == [("alice", "write"), ("bob", "read")]
    found = store.member_of(alice)
    assert found is not None and (found.name, found.role) == ("alice", "write")
    assert store.member_of(alice + "x") is None
    with pytest.raises(InvalidInput, match="exists"):
        store.add_member("alice", "admin")
    with pytest.raises(InvalidInput, match="role"):
        store.add_member("carol", "owner")
    assert store.remove_member("alice") == 1
    assert store.member_of(alice) is None
    assert store.member_of(bob) is not None
    with pytest.raises(InvalidInput, match="no token named"):
        store.remove_member("alice")


def test_a_confirmation_token_is_taken_once(store: TeamStore) -> None:
    entry = {"binding": "b" * 64, "operation": "remove_golden_repo", "expires": 2e9}
    store.put_confirmation("k1", entry)
    assert store.take_confirmation("k1") == entry
    assert store.take_confirmation("k1") is None
    assert store.take_confirmation("never") is None


def test_a_bucket_holds_its_limit(store: TeamStore) -> None:
    limit = RateLimit(per_minute=3, burst=3)
    for _ in range(3):
        store.spend("alice", "read_doc", limit)
    with pytest.raises(RateLimited) as refused:
        store.spend("alice", "read_doc", limit)
    assert refused.value.data["retry_after_seconds"] >= 1
    store.spend("bob", "read_doc", limit)  # each client has a bucket of their own
    store.spend("alice", "list_tasks", limit)  # and each tool


def test_the_audit_trail_names_who_wrote_what(store: TeamStore) -> None:
    store.record("alice", "edit_file", "backend", "ok")
    store.record("root", "add_golden_repo", None, "1404")
    newest, oldest = store.audit()
    assert (newest.member, newest.tool, newest.repository, newest.outcome) == (
        "root", "add_golden_repo", None, "1404",
    )  # fmt: skip
    assert (oldest.member, oldest.tool, oldest.repository) == ("alice", "edit_file", "backend")
    assert oldest.at.endswith("Z") and oldest.at <= newest.at


def test_migrations_apply_once_and_are_recorded(postgres: Any) -> None:
    import psycopg

    from cuedeck_team.store.postgres import SCHEMA_VERSION, PostgresStore

    url = postgres.url()
    first, second = PostgresStore(url), PostgresStore(url)  # two nodes starting
    try:
        assert second.migrate() == SCHEMA_VERSION
        with psycopg.connect(url) as conn:
            rows = conn.execute("SELECT version FROM cuedeck_schema ORDER BY version").fetchall()
        assert [row[0] for row in rows] == list(range(1, SCHEMA_VERSION + 1))
    finally:
        first.close()
        second.close()


def test_a_newer_schema_is_refused(postgres: Any) -> None:
    import psycopg

    from cuedeck_team.errors import StoreTooNew
    from cuedeck_team.store.postgres import SCHEMA_VERSION, PostgresStore

    url = postgres.url()
    PostgresStore(url).close()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("INSERT INTO cuedeck_schema (version) VALUES (%s)", (SCHEMA_VERSION + 1,))
    with pytest.raises(StoreTooNew) as refused:
        PostgresStore(url)
    assert refused.value.code == 1409


def test_an_unreachable_database_is_a_clear_error(postgres: Any) -> None:
    from cuedeck_team.store.postgres import PostgresStore
    from tests.mcp.conftest import free_port

    with pytest.raises(StoreUnavailable) as refused:
        PostgresStore(f"postgresql://cuedeck@127.0.0.1:{free_port()}/none", timeout=1.0)
    assert refused.value.code == 1408
    assert refused.value.data["retryable"] is True


@pytest.mark.slow  # four `cue` processes
def test_cue_team_migrate_moves_an_embedded_team_without_losing_anything(
    home: Path, postgres: Any, upstream: Callable[..., Path]
) -> None:
    import json
    import subprocess

    from cuedeck_team import activations, composites, shared
    from cuedeck_team.home import Team
    from tests.mcp.conftest import CUE, add_token, environment
    from tests.team.conftest import BACKEND, FRONTEND

    team = Team(home, database="")
    shared.register(team, str(upstream("backend", BACKEND)), "backend", by="root", embed=False)
    shared.register(team, str(upstream("frontend", FRONTEND)), "frontend", by="root", embed=False)
    activations.activate(team, "alice", "backend-global", None, None)
    composites.create(team, "alice", "both", ["backend-global", "frontend-global"])
    registry = team.registry

    tokens = {name: add_token(home, name, role) for name, role in (("root", "admin"),
                                                                  ("alice", "write"))}  # fmt: skip
    embedded = open_store(home, "")
    try:
        embedded.record("root", "add_golden_repo", "team", "ok")
        embedded.record("alice", "edit_file", "backend", "ok")
        before = embedded.audit()
    finally:
        embedded.close()
    url = postgres.url()

    def migrate() -> dict[str, Any]:
        done = subprocess.run(
            [CUE, "-C", str(home), "team", "migrate", "--database", url, "--json"],
            capture_output=True, text=True, env=environment(), check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return dict(json.loads(done.stdout))

    assert migrate() == {"members": 2, "audit": 2, "skipped": 0,
                         "repositories": 2, "activations": 2, "components": 2}  # fmt: skip
    assert migrate() == {"members": 0, "audit": 0, "skipped": 2,
                         "repositories": 0, "activations": 0, "components": 0}  # fmt: skip
    moved = open_store(home, url)
    try:
        there = moved.registry()
        assert there.shared() == registry.shared()  # heads, generations, dates: the same
        assert there.activations() == registry.activations()
        assert there.components("alice", "both") == registry.components("alice", "both")
        assert there.generations() == registry.generations()
        for name, token in tokens.items():
            found = moved.member_of(token)  # every token keeps working
            assert found is not None and found.name == name
        assert [(e.member, e.tool, e.repository, e.at) for e in moved.audit()] == [
            (e.member, e.tool, e.repository, e.at) for e in before
        ]
    finally:
        moved.close()


@pytest.mark.slow  # four `cue` processes
def test_cue_team_members_live_in_the_configured_store(home: Path, postgres: Any) -> None:
    import subprocess

    from tests.mcp.conftest import CUE, environment

    env = environment(CUEDECK_TEAM_DATABASE=postgres.url())

    def cue(*args: str) -> str:
        done = subprocess.run([CUE, "-C", str(home), "team", *args],
                              capture_output=True, text=True, env=env, check=False)  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done.stdout

    token = cue("member", "add", "dana", "--role", "write").strip()
    assert '"name": "dana"' in cue("member", "list", "--json")
    assert not (home / ".cuedeck" / "access.toml").exists()
    store = open_store(home, env["CUEDECK_TEAM_DATABASE"])
    try:
        assert store.member_of(token) is not None
        cue("member", "remove", "dana")
        assert store.member_of(token) is None
    finally:
        store.close()
