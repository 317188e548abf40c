"""``cue card claim/renew/release/next/claims``: claims from the command line.

Each command runs its tool (``claim_task``, ``renew_task``, ``release_task``,
``next_task``) as MCP clients do. ``--agent`` names the claimant; without it, a person at
the command line claims as ``$CUEDECK_AGENT`` or their login name. Loaded by ``cue
--help``: click alone at module level.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from cuedeck_tasks.card_cli import call, card_store, emit_json, json_option, workspace

if TYPE_CHECKING:
    from collections.abc import Callable

agent_option = click.option("-a", "--agent", help="Who claims (default: $CUEDECK_AGENT or you).")
lease_option = click.option(
    "-l", "--lease", type=float, help="Seconds the claim lasts (default [tasks] lease_seconds)."
)


def _claimed_line(reply: dict[str, Any]) -> str:
    line = f"{reply['id']}: held by {reply['agent']} until {reply['until']}"
    if reply.get("took_over"):
        line += f" (took over from {reply['took_over']}, whose claim expired)"
    return line


@click.command("claim")
@click.argument("card_id", metavar="ID")
@agent_option
@lease_option
@click.option(
    "-p", "--path", "paths", multiple=True, help="A file, folder or symbol you will change."
)
@json_option
def claim(
    card_id: str, agent: str | None, lease: float | None, paths: tuple[str, ...], as_json: bool
) -> None:
    """Claim a card for a lease; other agents' claims and writes to its paths are refused."""
    reply = call(
        "claim_task",
        id=card_store().resolve(card_id),
        agent=agent,
        lease_seconds=lease,
        paths=list(paths) or None,
    )
    emit_json(reply) if as_json else click.echo(_claimed_line(reply))


@click.command("renew")
@click.argument("card_id", metavar="ID")
@agent_option
@lease_option
@json_option
def renew(card_id: str, agent: str | None, lease: float | None, as_json: bool) -> None:
    """Renew your claim on a card: its lease runs again from now."""
    reply = call("renew_task", id=card_store().resolve(card_id), agent=agent, lease_seconds=lease)
    emit_json(reply) if as_json else click.echo(_claimed_line(reply))


@click.command("release")
@click.argument("card_id", metavar="ID")
@agent_option
@click.option("--done", is_flag=True, help="Mark the card done in the same step.")
@click.option("--force", is_flag=True, help="Release another agent's claim (recorded).")
@json_option
def release(card_id: str, agent: str | None, done: bool, force: bool, as_json: bool) -> None:
    """Release your claim on a card (with --done, finish the card too)."""
    reply = call(
        "release_task",
        id=card_store().resolve(card_id),
        agent=agent,
        done=done or None,
        force=force or None,
    )
    if as_json:
        emit_json(reply)
        return
    what = "done and released" if reply["done"] and done else "released"
    click.echo(f"{reply['id']}: {what}{' (forced)' if reply['forced'] else ''}")


@click.command("next")
@agent_option
@lease_option
@json_option
def next_card(agent: str | None, lease: float | None, as_json: bool) -> None:
    """Claim the most urgent ready card nobody holds (prints its id)."""
    reply = call("next_task", agent=agent, lease_seconds=lease)
    if as_json:
        emit_json(reply)
    elif reply["id"] is None:
        held = reply["held"]
        click.echo(f"no free card is ready ({held} held by other agents)", err=True)
    else:
        click.echo(reply["id"])


@click.command("claims")
@click.option("--events", is_flag=True, help="The audit trail instead of the live claims.")
@click.option("--card", "card_id", metavar="ID", help="Only this card.")
@json_option
def claims(events: bool, card_id: str | None, as_json: bool) -> None:
    """Who holds which card, since and until when (--events: every claim event)."""
    from cuedeck_tasks.claim_tools import ledger
    from cuedeck_tasks.columns import render_columns

    store = ledger(workspace())
    wanted = card_store().resolve(card_id) if card_id else None
    if events:
        trail = [event.to_record() for event in store.events(wanted)]
        if as_json:
            emit_json(trail)
            return
        rows = [
            [e["at"], e["id"], e["event"], e["agent"], e["until"] or "", _about(e)] for e in trail
        ]
        _table(render_columns, ["AT", "ID", "EVENT", "AGENT", "UNTIL", "DETAIL"], rows)
        return
    live = [claim for card, claim in store.live().items() if wanted in (None, card)]
    now = _now()
    records = [claim.to_record(now) for claim in live]
    if as_json:
        emit_json(records)
        return
    rows = [[r["id"], r["agent"], r["since"], r["until"], ", ".join(r["paths"])] for r in records]
    _table(render_columns, ["ID", "AGENT", "SINCE", "UNTIL", "PATHS"], rows)


def _about(event: dict[str, Any]) -> str:
    parts = [f"from {event['previous']}"] if event["previous"] else []
    if event["detail"]:
        parts.append(event["detail"])
    return "; ".join(parts)


def _now() -> float:
    import time

    return time.time()


def _table(render: Callable[..., str], headers: list[str], rows: list[list[str]]) -> None:
    import sys

    if not rows:
        click.echo("no claims", err=True)
        return
    sys.stdout.write(render(headers, rows, width=160, wrap=headers[-1]))


COMMANDS = (claim, renew, release, next_card, claims)
