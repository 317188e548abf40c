"""Claims on cards: an agent takes a card for a lease, renews it, releases it or finishes it.

One row per claimed card in a SQLite file every worktree of the repository sees
(:mod:`cuedeck_tasks.claim_home`); every change also appends an event to an audit trail in
the same file (``claim``, ``renew``, ``release``, ``expire``, ``done``, ``force``), from
which who held what, and when, can be checked afterwards.

Each operation is one write transaction (``BEGIN IMMEDIATE``): the file's lock orders
racing claimants across threads, processes and worktrees, so exactly one of them wins and
the others see its claim. A claim is live until its lease ends; an expired claim stays its
holder's until someone else takes the card over, which records the expiry (at the time the
lease ended) and the takeover. A card is finished (:meth:`ClaimStore.finish`) with the
card's own write inside the transaction, so a takeover never hands out a card that was just
done, and a holder whose card was taken over cannot finish it.

The task tools use :class:`~cuedeck_tasks.claim_records.ClaimLedger`; :class:`ClaimStore`
is its embedded implementation (a server keeping its state elsewhere can provide another).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import threading
import time
from typing import TYPE_CHECKING, Any, TypeVar

import attrs

from cuedeck.plugins.claims import iso_time
from cuedeck_tasks.claim_home import claim_home
from cuedeck_tasks.claim_paths import overlapping
from cuedeck_tasks.claim_records import (
    Claim,
    ClaimEvent,
    Taken,
    claimed_error,
    not_held_error,
)
from cuedeck_tasks.errors import PathsClaimed

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from pathlib import Path

    from cuedeck.plugins.claims import Hold

log = logging.getLogger("cuedeck")
T = TypeVar("T")

SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS claims (
    scope TEXT NOT NULL,
    card TEXT NOT NULL,
    agent TEXT NOT NULL,
    since REAL NOT NULL,
    until REAL NOT NULL,
    lease REAL NOT NULL,
    paths TEXT NOT NULL,
    PRIMARY KEY (scope, card)
);
CREATE TABLE IF NOT EXISTS claim_events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    scope TEXT NOT NULL,
    card TEXT NOT NULL,
    agent TEXT NOT NULL,
    event TEXT NOT NULL,
    at REAL NOT NULL,
    until REAL,
    previous TEXT,
    detail TEXT
);
CREATE INDEX IF NOT EXISTS claim_events_card ON claim_events (scope, card, seq);
"""


class ClaimStore:
    """The claims of one workspace in its repository's claims file (see the module doc)."""

    def __init__(self, root: Path, *, clock: Callable[[], float] = time.time) -> None:
        home = claim_home(root)
        self.path = home.path
        self.scope = home.scope
        self.clock = clock
        self._connection: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"ClaimStore({str(self.path)!r}, scope={self.scope!r})"

    # -- the file --------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        if self._connection is None:
            from cuedeck.system.databases import open_db

            # Claims are short-lived coordination: a commit survives a crash of the
            # process (WAL), and losing the last ones to a power cut costs a re-claim
            # (synchronous NORMAL, the opener's default). One thread at a time: the lock.
            connection = open_db(self.path, threads=True)
            if connection.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
                with _immediate(connection):
                    for statement in _SCHEMA.split(";"):
                        if statement.strip():
                            connection.execute(statement)
                    connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            self._connection = connection
        return self._connection

    @contextlib.contextmanager
    def _write(self) -> Iterator[tuple[sqlite3.Connection, float]]:
        """One write transaction, and the time it started (after the file's lock)."""
        with self._lock, _queued(self.path.with_name(self.path.name + ".lock")):
            connection = self._connect()
            with _immediate(connection):
                yield connection, self.clock()

    def _row(self, connection: sqlite3.Connection, card: str) -> Claim | None:
        row = connection.execute(
            "SELECT card, agent, since, until, lease, paths FROM claims "
            "WHERE scope = ? AND card = ?",
            (self.scope, card),
        ).fetchone()
        return None if row is None else _claim(row)

    def _event(
        self,
        connection: sqlite3.Connection,
        card: str,
        agent: str,
        event: str,
        at: float,
        *,
        until: float | None = None,
        previous: str | None = None,
        detail: str | None = None,
    ) -> None:
        connection.execute(
            "INSERT INTO claim_events (scope, card, agent, event, at, until, previous, detail) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (self.scope, card, agent, event, at, until, previous, detail),
        )

    # -- reading ---------------------------------------------------------------------------

    def get(self, card: str) -> Claim | None:
        """The claim stored for ``card`` (live or expired), or None."""
        if not self.path.exists():
            return None
        with self._lock:
            return self._row(self._connect(), card)

    def all(self) -> dict[str, Claim]:
        """Every stored claim by card (expired ones too), sorted by card."""
        if not self.path.exists():
            return {}
        with self._lock:
            rows = self._connect().execute(
                "SELECT card, agent, since, until, lease, paths FROM claims WHERE scope = ? "
                "ORDER BY card",
                (self.scope,),
            )
            return {claim.card: claim for claim in map(_claim, rows)}

    def live(self) -> dict[str, Claim]:
        """The live claims by card."""
        now = self.clock()
        return {card: claim for card, claim in self.all().items() if claim.live(now)}

    def holder(self, card_id: str) -> Hold | None:
        """The live claim on ``card_id`` as core shows it, or None."""
        found = self.get(card_id)
        return found.hold() if found is not None and found.live(self.clock()) else None

    def events(self, card: str | None = None) -> list[ClaimEvent]:
        """The audit trail, oldest first (of one card, or all)."""
        if not self.path.exists():
            return []
        query = (
            "SELECT seq, card, agent, event, at, until, previous, detail FROM claim_events "
            "WHERE scope = ?"
        )
        values: tuple[str, ...] = (self.scope,)
        if card is not None:
            query += " AND card = ?"
            values += (card,)
        with self._lock:
            rows = self._connect().execute(query + " ORDER BY seq", values).fetchall()
        return [ClaimEvent(*row) for row in rows]

    # -- claiming --------------------------------------------------------------------------

    def claim(
        self,
        card: str,
        agent: str,
        *,
        lease: float,
        paths: Sequence[str] = (),
        check: Callable[[str], None] | None = None,
    ) -> Taken:
        """Take ``card`` for ``agent`` until ``lease`` seconds from now.

        Another agent's live claim is :class:`CardClaimed` (1500); an expired one is taken
        over (recorded). The holder claiming again renews (and names new ``paths``, if
        any). ``check(card)`` runs inside the transaction and may raise to refuse (a card
        that is done).
        """
        with self._write() as (connection, now):
            row = self._row(connection, card)
            if row is not None and row.agent != agent and row.live(now):
                raise claimed_error(row)
            if check is not None:
                check(card)
            return self._take(connection, card, agent, now, lease, tuple(paths), row)

    def _take(
        self,
        connection: sqlite3.Connection,
        card: str,
        agent: str,
        now: float,
        lease: float,
        paths: tuple[str, ...],
        row: Claim | None,
    ) -> Taken:
        if row is not None and row.agent == agent:
            renewed = attrs.evolve(row, until=now + lease, lease=lease, paths=paths or row.paths)
            self._store(connection, renewed)
            self._event(connection, card, agent, "renew", now, until=renewed.until)
            return Taken(renewed, None, renewed=True)
        took_over = None
        if row is not None:  # expired: the lease ran out at its until
            took_over = row.agent
            self._event(
                connection, card, row.agent, "expire", row.until, detail=f"taken over by {agent}"
            )
        claim = Claim(card, agent, now, now + lease, lease, paths)
        self._store(connection, claim)
        self._event(connection, card, agent, "claim", now, until=claim.until, previous=took_over)
        return Taken(claim, took_over)

    def _store(self, connection: sqlite3.Connection, claim: Claim) -> None:
        connection.execute(
            "INSERT OR REPLACE INTO claims (scope, card, agent, since, until, lease, paths) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                self.scope,
                claim.card,
                claim.agent,
                claim.since,
                claim.until,
                claim.lease,
                json.dumps(list(claim.paths)),
            ),
        )

    def next(
        self,
        agent: str,
        *,
        lease: float,
        candidates: Sequence[tuple[str, int]],
        still_open: Callable[[str], bool],
    ) -> tuple[Taken | None, int]:
        """Claim the first of ``candidates`` (card, urgency rank; most urgent first) that
        no live claim holds and ``still_open`` accepts (asked inside the transaction);
        among equally urgent cards, one whose claim expired goes first: its work was
        started. Returns the claim (None when there is none) and how many candidates
        live claims hold."""
        with self._write() as (connection, now):
            stored = {
                claim.card: claim
                for claim in map(
                    _claim,
                    connection.execute(
                        "SELECT card, agent, since, until, lease, paths FROM claims "
                        "WHERE scope = ?",
                        (self.scope,),
                    ),
                )
            }
            held = 0
            order = sorted(
                enumerate(candidates),
                key=lambda item: (item[1][1], item[1][0] not in stored, item[0]),
            )
            for _position, (card, _rank) in order:
                row = stored.get(card)
                if row is not None and row.live(now):
                    held += 1
                    continue
                if not still_open(card):
                    continue
                taken = self._take(connection, card, agent, now, lease, (), row)
                return taken, held
            return None, held

    def renew(self, card: str, agent: str, *, lease: float | None = None) -> Claim:
        """Extend ``agent``'s claim on ``card`` by ``lease`` seconds from now (its own
        lease by default); an expired claim nobody took over is renewed too."""
        with self._write() as (connection, now):
            row = self._held(connection, card, agent, now, "renew")
            renewed = attrs.evolve(row, until=now + (lease or row.lease), lease=lease or row.lease)
            self._store(connection, renewed)
            self._event(connection, card, agent, "renew", now, until=renewed.until)
            return renewed

    def release(self, card: str, agent: str, *, force: bool = False) -> Claim:
        """End the claim on ``card``: ``agent``'s own, an expired one, or with ``force``
        another agent's live claim (recorded as forced)."""
        with self._write() as (connection, now):
            row = self._row(connection, card)
            if row is None:
                raise not_held_error(card, agent, "release")
            detail = None
            if row.agent != agent:
                if row.live(now) and not force:
                    raise claimed_error(row, forced_with="force")
                detail = f"by {agent}" + (", forced" if row.live(now) else ", after it expired")
            connection.execute(
                "DELETE FROM claims WHERE scope = ? AND card = ?", (self.scope, card)
            )
            self._event(connection, card, row.agent, "release", now, detail=detail)
            return row

    def finish(
        self, card: str, agent: str, write: Callable[[], T], *, done: Callable[[T], bool]
    ) -> T:
        """Run ``write`` (the card's change to done) inside the transaction and release
        the claim; ``done(result)`` says whether the card became done (recorded then).
        Another agent's live claim is :class:`CardClaimed` and nothing is written."""
        with self._write() as (connection, now):
            row = self._row(connection, card)
            if row is not None and row.agent != agent and row.live(now):
                raise claimed_error(row)
            result = write()
            finished = done(result)
            delete = "DELETE FROM claims WHERE scope = ? AND card = ?"
            if row is not None and row.agent == agent:
                connection.execute(delete, (self.scope, card))
                if not finished:
                    self._event(connection, card, agent, "release", now)
            elif row is not None and finished:  # a lapsed claim of someone else ends here
                connection.execute(delete, (self.scope, card))
                self._event(connection, card, row.agent, "expire", row.until)
            if finished:
                previous = row.agent if row is not None and row.agent != agent else None
                self._event(connection, card, agent, "done", now, previous=previous)
            return result

    def _held(
        self, connection: sqlite3.Connection, card: str, agent: str, now: float, what: str
    ) -> Claim:
        row = self._row(connection, card)
        if row is None:
            raise not_held_error(card, agent, what)
        if row.agent != agent:
            if row.live(now):
                raise claimed_error(row)
            raise not_held_error(card, agent, what, lapsed=row)
        return row

    def version(self) -> str:
        """Changes whenever a claim does: the claims file's and its log's sizes and times
        (every commit writes the log first)."""
        stamps = []
        for suffix in ("", "-wal"):
            try:
                stat = self.path.with_name(self.path.name + suffix).stat()
            except FileNotFoundError:
                stamps.append("-")
                continue
            stamps.append(f"{stat.st_mtime_ns}:{stat.st_size}")
        return "/".join(stamps)

    # -- files -----------------------------------------------------------------------------

    def check_write(self, paths: Sequence[str], *, agent: str, force: bool, tool: str) -> None:
        """Refuse (:class:`PathsClaimed`, 1501) a write of ``paths`` by ``agent`` that
        another agent's live claim holds; with ``force``, record it and let it pass."""
        if not paths or not self.path.exists():
            return
        clashing = [
            (claim, overlapping(claim.paths, paths))
            for claim in self.live().values()
            if claim.agent != agent and claim.paths
        ]
        clashing = [(claim, held) for claim, held in clashing if held]
        if not clashing:
            return
        if force:
            with self._write() as (connection, now):
                for claim, held in clashing:
                    detail = f"{tool} wrote {', '.join(paths)} over {', '.join(held)}"
                    self._event(
                        connection, claim.card, agent, "force", now, previous=claim.agent,
                        detail=detail,
                    )  # fmt: skip
            log.warning("%s forced %s over claims of %s", agent, tool, _names(clashing))
            return
        first, held = clashing[0]
        raise PathsClaimed(
            f"{', '.join(held)} {'is' if len(held) == 1 else 'are'} held by {first.agent} "
            f"(card {first.card}) until {iso_time(first.until)}",
            paths=list(paths),
            holders=[
                {
                    "card": claim.card,
                    "agent": claim.agent,
                    "until": iso_time(claim.until),
                    "paths": list(held),
                }
                for claim, held in clashing
            ],
            agent=agent,
            tool=tool,
            help=f"wait for the claim to end, ask {_names(clashing)}, or pass force "
            "(forced writes are recorded)",
        )


def _names(clashing: Sequence[tuple[Claim, list[str]]]) -> str:
    return ", ".join(dict.fromkeys(claim.agent for claim, _ in clashing))


@contextlib.contextmanager
def _queued(lock_file: Path) -> Iterator[None]:
    """Writers wait in the kernel for an exclusive ``flock`` before SQLite's lock: a
    waiter wakes the moment the lock is released, where SQLite's busy handler sleeps in
    growing steps (16 racing processes saw a p95 wait of 1.9 s with it alone). Where
    ``fcntl`` is missing, SQLite's lock alone orders them."""
    try:
        import fcntl
    except ImportError:  # Windows
        yield
        return
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


@contextlib.contextmanager
def _immediate(connection: sqlite3.Connection) -> Iterator[None]:
    """A ``BEGIN IMMEDIATE`` transaction: the write lock first, so racers queue."""
    from cuedeck.errors import LockError
    from cuedeck.system.databases import WAIT_SECONDS

    try:
        connection.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        raise LockError(
            f"the claims file stayed locked for {WAIT_SECONDS:g}s: {exc}",
            suggestion="another CueDeck process holds it; retry",
        ) from None
    try:
        yield
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")


def _claim(row: Sequence[Any]) -> Claim:
    card, agent, since, until, lease, paths = row
    return Claim(card, agent, since, until, lease, tuple(json.loads(paths)))
