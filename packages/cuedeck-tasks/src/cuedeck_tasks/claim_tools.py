"""The claim tools: take a card for an agent, renew, release, and hand out the next one.

``claim_task``, ``renew_task``, ``release_task`` and ``next_task`` are served to MCP, the
CLI (``cue card claim/renew/release/next``) and Python alike. The agent is the caller's
token member on a server with tokens, else the ``agent`` given, else ``$CUEDECK_AGENT``,
else the caller's name (:func:`cuedeck.plugins.claims.acting_agent`). Errors: 1500 a card
another agent holds, 1502 a claim the agent does not hold, 1001 an unknown card, 1004 a
card that is done or cannot be read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from pydantic import Field
from typing_extensions import TypedDict  # pydantic needs it on Python 3.11

from cuedeck.errors import InvalidInput
from cuedeck.plugins.claims import acting_agent, iso_time
from cuedeck_tasks.card_updates import CardChanges
from cuedeck_tasks.cards import ID_PATTERN, PRIORITIES, check_card_label
from cuedeck_tasks.claim_paths import claim_paths
from cuedeck_tasks.graph import READY_STATUSES
from cuedeck_tasks.settings import MAX_LEASE, MIN_LEASE, TaskSettings
from cuedeck_tasks.store import CardStore, Updated

if TYPE_CHECKING:
    from cuedeck.workspace import Workspace
    from cuedeck_tasks.claim_records import Claim, ClaimLedger, Taken

CardId = Annotated[str, Field(pattern=ID_PATTERN)]
AgentName = Annotated[
    str | None,
    Field(
        min_length=1,
        max_length=64,
        description="Default: your token's name, else $CUEDECK_AGENT",
    ),
]
LeaseSeconds = Annotated[
    float | None,
    Field(
        ge=MIN_LEASE,
        le=MAX_LEASE,
        description="Default [tasks] lease_seconds",
    ),
]


class ClaimReply(TypedDict):
    """A claim: the card, who holds it, since and until when (ISO 8601 UTC)."""

    id: Annotated[str | None, Field(description="The card; null when none was claimed")]
    title: str | None
    agent: str | None
    since: str | None
    until: str | None
    lease_seconds: float | None
    paths: list[str]
    took_over: Annotated[
        str | None, Field(description="The agent whose expired claim this took over")
    ]
    renewed: Annotated[bool, Field(description="The agent held it already: extended")]


class NextReply(ClaimReply):
    """The reply of ``next_task``: a claim, or ``id`` null when no ready card is free."""

    held: Annotated[int, Field(description="Ready cards other agents hold now")]


class Released(TypedDict):
    """The reply of ``release_task``."""

    id: str
    agent: str
    status: str
    done: bool
    forced: bool


def ledger(workspace: Workspace) -> ClaimLedger:
    """The workspace's claims (its ``claims`` service)."""
    from cuedeck_tasks.claims import ClaimStore

    return workspace.service("claims", ClaimStore)


def _agent(agent: str | None) -> str:
    name = acting_agent(agent)
    return check_card_label(name, field="agent")


def _lease(workspace: Workspace, lease: float | None) -> float:
    if lease is not None:
        return lease
    return float(workspace.config.section("tasks", TaskSettings).lease_seconds)


def _reply(store: CardStore, taken: Taken) -> ClaimReply:
    claim = taken.claim
    return {
        **_claim_fields(claim),
        "title": store.get(claim.card).title,
        "took_over": taken.took_over,
        "renewed": taken.renewed,
    }


def _claim_fields(claim: Claim) -> ClaimReply:
    return {
        "id": claim.card,
        "title": None,
        "agent": claim.agent,
        "since": iso_time(claim.since),
        "until": iso_time(claim.until),
        "lease_seconds": claim.lease,
        "paths": list(claim.paths),
        "took_over": None,
        "renewed": False,
    }


def open_card(store: CardStore, card_id: str) -> None:
    """Refuse (1004) to claim a card that is finished or whose file cannot be read."""
    card = store.get(card_id)
    if card.status not in READY_STATUSES:
        raise InvalidInput(
            f"card {card_id} is {card.status}: there is nothing to claim",
            field="id",
            path=card.path,
            status=card.status,
        )
    if card.conflicted:
        raise InvalidInput(
            f"{card.path} holds merge conflict markers: resolve them before claiming it",
            field="id",
            path=card.path,
            line=card.conflicted[0],
        )


def claim_task(
    workspace: Workspace,
    id: CardId,
    agent: AgentName = None,
    lease_seconds: LeaseSeconds = None,
    paths: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=1000)]] | None,
        Field(description="Files, folders, symbols (a.py#f) you will change: others may not"),
    ] = None,
) -> ClaimReply:
    """Claim a card for an agent for a lease, atomically: exactly one of racing agents wins.

    A card another agent holds is 1500 (holder, until); an expired claim is taken over
    (took_over names its agent). Claiming a card you hold renews it. Renew with
    renew_task before the lease ends; finish with release_task(done=true).
    """
    store = CardStore.of(workspace)
    card_id = store.resolve(id)
    named = claim_paths(workspace, paths or ())
    taken = ledger(workspace).claim(
        card_id,
        _agent(agent),
        lease=_lease(workspace, lease_seconds),
        paths=named,
        check=lambda card: open_card(store, card),
    )
    return _reply(store, taken)


def renew_task(
    workspace: Workspace,
    id: CardId,
    agent: AgentName = None,
    lease_seconds: LeaseSeconds = None,
) -> ClaimReply:
    """Extend your claim on a card: its lease runs again from now (1502 if not yours)."""
    store = CardStore.of(workspace)
    card_id = store.resolve(id)
    renewed = ledger(workspace).renew(card_id, _agent(agent), lease=lease_seconds)
    return {**_claim_fields(renewed), "title": store.get(card_id).title, "renewed": True}


def release_task(
    workspace: Workspace,
    id: CardId,
    agent: AgentName = None,
    done: Annotated[bool, Field(description="Mark the card done in the same step")] = False,
    force: Annotated[
        bool, Field(description="Release another agent's live claim (recorded)")
    ] = False,
) -> Released:
    """Give a claimed card back, or with done=true finish it (status done) and release it.

    Another agent's live claim is 1500 unless force; no claim at all is 1502 (done=true
    still finishes a card nobody holds).
    """
    import time

    store = CardStore.of(workspace)
    card_id = store.resolve(id)
    claims = ledger(workspace)
    who = _agent(agent)
    found = claims.get(card_id)
    forced = force and found is not None and found.agent != who and found.live(time.time())
    if done:
        if forced:
            claims.release(card_id, who, force=True)
        card = finish(workspace, store, card_id, who, CardChanges(status="done")).card
    else:
        claims.release(card_id, who, force=force)
        card = store.get(card_id)
    return {
        "id": card_id,
        "agent": who,
        "status": card.status,
        "done": card.status == "done",
        "forced": forced,
    }


def finish(
    workspace: Workspace,
    store: CardStore,
    card_id: str,
    agent: str,
    changes: CardChanges,
    *,
    content_hash: str | None = None,
) -> Updated:
    """Apply ``changes`` (which set the status to done) to ``card_id`` as ``agent``,
    through the claims: another agent's live claim refuses it (1500), the agent's own
    is released and the card's becoming done is recorded (ClaimStore.finish)."""
    return ledger(workspace).finish(
        card_id,
        agent,
        lambda: store.update(card_id, changes, content_hash=content_hash),
        done=lambda updated: "status" in updated.fields and updated.card.status == "done",
    )


def next_task(
    workspace: Workspace,
    agent: AgentName = None,
    lease_seconds: LeaseSeconds = None,
) -> NextReply:
    """Claim the most urgent ready card nobody holds, in one step (id null when none).

    Ready: todo or active, every dependency done. Among equally urgent cards, one whose
    claim expired goes first. held counts the ready cards other agents hold now.
    """
    store = CardStore.of(workspace)
    ready = [card for card in store.graph().ready() if not card.conflicted]
    ranks = {p: -n for n, p in enumerate(PRIORITIES)}

    def still_open(card_id: str) -> bool:
        card = store.get(card_id)
        return card.status in READY_STATUSES and not card.conflicted

    taken, held = ledger(workspace).next(
        _agent(agent),
        lease=_lease(workspace, lease_seconds),
        candidates=[(card.id, ranks.get(card.priority, -1)) for card in ready],
        still_open=still_open,
    )
    if taken is None:
        return {
            "id": None,
            "title": None,
            "agent": None,
            "since": None,
            "until": None,
            "lease_seconds": None,
            "paths": [],
            "took_over": None,
            "renewed": False,
            "held": held,
        }
    return {**_reply(store, taken), "held": held}
