"""``cue team``: the members of a team in its store, its audit trail, and moving an
embedded team to PostgreSQL (docs/teams.md, "Several nodes").

Loaded by ``cue --help``: only click at module level.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from pathlib import Path

    from cuedeck_team.store import TeamStore

ROLE_CHOICE = click.Choice(["read", "write", "admin"])


def _home() -> Path:
    root: Path = click.get_current_context().obj.workspace.root
    return root


def _store(database: str | None = None) -> TeamStore:
    from cuedeck_team.store import open_store

    return open_store(_home(), database)


@click.group("team")
def team() -> None:
    """A team's members, audit trail and store (moving it to PostgreSQL)."""


@team.group("member")
def member() -> None:
    """Members in the team's store (PostgreSQL when configured, else access.toml)."""


@member.command("add")
@click.argument("name")
@click.option("--role", type=ROLE_CHOICE, default="read", show_default=True)
def member_add(name: str, role: str) -> None:
    """Make a token for NAME; printed once, only its hash is kept."""
    store = _store()
    try:
        click.echo(store.add_member(name, role))
    finally:
        store.close()
    click.echo(f"member {name!r} ({role}) added to the team's {store.kind} store; this is "
               "the only time the token is shown", err=True)  # fmt: skip


@member.command("remove")
@click.argument("name")
def member_remove(name: str) -> None:
    """Revoke NAME's token: every node refuses it from the next request on."""
    store = _store()
    try:
        store.remove_member(name)
    finally:
        store.close()
    click.echo(f"member {name!r} removed")


@member.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def member_list(as_json: bool) -> None:
    """Members' names, roles and dates (never their tokens)."""
    store = _store()
    try:
        rows = [{"name": m.name, "role": m.role, "created": m.created} for m in store.members()]
    finally:
        store.close()
    _print({"store": store.kind, "members": rows}, as_json, rows, "{name:24} {role:6} {created}")


@team.command("audit")
@click.option("--limit", type=click.IntRange(1, 100000), default=50, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def audit(limit: int, as_json: bool) -> None:
    """The latest writes: when, who, which tool, which repository, the outcome."""
    import attrs

    store = _store()
    try:
        rows = [attrs.asdict(entry) for entry in store.audit(limit)]
    finally:
        store.close()
    _print({"store": store.kind, "writes": rows}, as_json, rows,
           "{at} {member:16} {tool:28} {repository} {outcome}")  # fmt: skip


@team.command("migrate")
@click.option(
    "--database",
    required=True,
    help="The PostgreSQL database to move to (postgresql://...).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def migrate(database: str, as_json: bool) -> None:
    """Copy this embedded team's members (their token hashes: tokens keep working), audit
    trail and registry into DATABASE, then point the nodes at it ([team] database)."""
    from cuedeck_team.migrate import to_postgres

    moved = to_postgres(_home(), database)
    _print(moved, as_json, [moved],
           "moved {members} members, {audit} audit rows, {repositories} shared repositories, "
           "{activations} activations and {components} components; {skipped} members "
           "already there")  # fmt: skip


def _print(payload: dict[str, Any], as_json: bool, rows: list[dict[str, Any]], line: str) -> None:
    import json

    if as_json:
        click.echo(json.dumps(payload, indent=2, default=str))
        return
    for row in rows:
        click.echo(line.format(**{k: "-" if v is None else v for k, v in row.items()}))
