"""What a claim is, as stored and as reported: the records of the claims store, the
interface the task tools use (:class:`ClaimLedger`), and the errors a claim answers with."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import attrs

from cuedeck.plugins.claims import Hold, iso_time
from cuedeck_tasks.errors import CardClaimed, ClaimNotHeld

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

T = TypeVar("T")


@attrs.frozen
class Claim:
    """A card's claim as stored: live while ``until`` (epoch seconds) is ahead."""

    card: str
    agent: str
    since: float
    until: float
    lease: float
    paths: tuple[str, ...] = ()

    def live(self, now: float) -> bool:
        """Whether the lease still runs at ``now``."""
        return self.until > now

    def hold(self) -> Hold:
        """The claim as core shows it."""
        return Hold(self.card, self.agent, self.since, self.until, self.paths)

    def to_record(self, now: float) -> dict[str, Any]:
        """JSON-ready: card, agent, ISO times, lease, paths and whether it is live."""
        return {
            "id": self.card,
            "agent": self.agent,
            "since": iso_time(self.since),
            "until": iso_time(self.until),
            "lease_seconds": self.lease,
            "paths": list(self.paths),
            "live": self.live(now),
        }


@attrs.frozen
class Taken:
    """A claim just made: the claim, the agent whose expired claim it took over (or None),
    and whether the claimant already held it (then it was renewed)."""

    claim: Claim
    took_over: str | None = None
    renewed: bool = False


@attrs.frozen
class ClaimEvent:
    """One entry of the audit trail: ``agent`` did ``event`` to ``card`` at ``at``."""

    seq: int
    card: str
    agent: str
    event: str
    at: float
    until: float | None
    previous: str | None
    detail: str | None

    def to_record(self) -> dict[str, Any]:
        """JSON-ready, with ISO times and the epoch seconds beside them."""
        return {
            "seq": self.seq,
            "id": self.card,
            "agent": self.agent,
            "event": self.event,
            "at": iso_time(self.at),
            "at_epoch": self.at,
            "until": None if self.until is None else iso_time(self.until),
            "until_epoch": self.until,
            "previous": self.previous,
            "detail": self.detail,
        }


class ClaimLedger(Protocol):
    """What the task tools need of a claims store (see :class:`ClaimStore`)."""

    def get(self, card: str) -> Claim | None: ...
    def live(self) -> dict[str, Claim]: ...
    def holder(self, card_id: str) -> Hold | None: ...
    def claim(
        self,
        card: str,
        agent: str,
        *,
        lease: float,
        paths: Sequence[str] = (),
        check: Callable[[str], None] | None = None,
    ) -> Taken: ...
    def next(
        self,
        agent: str,
        *,
        lease: float,
        candidates: Sequence[tuple[str, int]],
        still_open: Callable[[str], bool],
    ) -> tuple[Taken | None, int]: ...
    def renew(self, card: str, agent: str, *, lease: float | None = None) -> Claim: ...
    def release(self, card: str, agent: str, *, force: bool = False) -> Claim: ...
    def finish(
        self, card: str, agent: str, write: Callable[[], T], *, done: Callable[[T], bool]
    ) -> T: ...
    def events(self, card: str | None = None) -> list[ClaimEvent]: ...
    def check_write(self, paths: Sequence[str], *, agent: str, force: bool, tool: str) -> None: ...
    def version(self) -> str: ...


def claimed_error(row: Claim, *, forced_with: str | None = None) -> CardClaimed:
    how = f", or pass {forced_with} to take it from them (recorded)" if forced_with else ""
    return CardClaimed(
        f"card {row.card} is held by {row.agent} until {iso_time(row.until)}",
        id=row.card,
        holder=row.agent,
        since=iso_time(row.since),
        until=iso_time(row.until),
        paths=list(row.paths),
        help=f"claim another card (next_task finds one), or wait until the lease ends{how}",
    )


def not_held_error(
    card: str, agent: str, what: str, *, lapsed: Claim | None = None
) -> ClaimNotHeld:
    if lapsed is not None:
        message = (
            f"{agent} holds no claim on card {card} to {what}: {lapsed.agent}'s claim "
            f"expired at {iso_time(lapsed.until)}"
        )
    else:
        message = f"{agent} holds no claim on card {card} to {what}"
    return ClaimNotHeld(
        message,
        id=card,
        agent=agent,
        help="claim it first (claim_task), or next_task for a free card",
    )
