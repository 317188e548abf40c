"""The PostgreSQL store: what every node of a team shares, in one database (the
``postgres`` extra: psycopg 3 and its connection pool).

Each operation is one short transaction on a pooled connection: a bucket is spent under
its row's lock, a confirmation token taken with ``DELETE ... RETURNING`` (so exactly one
node redeems it), a member looked up by the hash of their token on every request (so a
removed member is refused by every node at once). The schema is versioned
(:data:`MIGRATIONS`); :meth:`PostgresStore.migrate` applies what is missing at start,
under an advisory lock, so nodes starting together apply each step once. A database that
cannot be reached is :class:`~cuedeck_team.errors.StoreUnavailable` (1408); the pool
replaces broken connections, so a restarted PostgreSQL is used again without restarting
a node.
"""

from __future__ import annotations

import json
from collections import deque
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from cuedeck_team.errors import StoreTooNew, StoreUnavailable
from cuedeck_team.store.base import AuditEntry, Member
from cuedeck_team.store.registry_pg import SCHEMA as REGISTRY_SCHEMA
from cuedeck_team.store.registry_pg import PostgresRegistry

if TYPE_CHECKING:
    from collections.abc import Iterator

    import psycopg

    from cuedeck.settings import RateLimit

#: Each version's statements, applied in order; a version once released never changes.
MIGRATIONS: tuple[tuple[int, str], ...] = (
    (
        1,
        """
        CREATE TABLE members (
            name text PRIMARY KEY,
            role text NOT NULL CHECK (role IN ('read', 'write', 'admin')),
            sha256 text NOT NULL UNIQUE,
            created text NOT NULL
        );
        CREATE TABLE confirmations (
            key text PRIMARY KEY,
            entry jsonb NOT NULL,
            expires double precision NOT NULL
        );
        CREATE TABLE buckets (
            client text NOT NULL,
            tool text NOT NULL,
            tokens double precision NOT NULL,
            updated double precision NOT NULL,
            calls jsonb NOT NULL,
            PRIMARY KEY (client, tool)
        );
        CREATE TABLE audit (
            id bigserial PRIMARY KEY,
            at timestamptz NOT NULL DEFAULT now(),
            member text NOT NULL,
            tool text NOT NULL,
            repository text,
            outcome text NOT NULL
        );
        CREATE INDEX audit_member ON audit (member, id);
        """,
    ),
    (2, REGISTRY_SCHEMA),  # shared repositories, activations, components
)
SCHEMA_VERSION = MIGRATIONS[-1][0]
#: The advisory lock nodes take while migrating (any constant the team's database uses
#: for nothing else).
_MIGRATION_LOCK = 0x43554544  # "CUED"
#: The first key of every repository's advisory lock (the second: a hash of its key).
_REPOSITORY_LOCKS = 0x4344  # "CD"
#: Expired confirmation tokens stay this long so that their refusal can say "expired".
_EXPIRED_KEPT = 3600.0


class PostgresStore:
    """The :class:`~cuedeck_team.store.TeamStore` of every node, in the database ``url``."""

    kind = "postgresql"

    def __init__(self, url: str, *, timeout: float = 5.0, max_size: int = 8) -> None:
        try:
            import psycopg_pool
        except ImportError:
            from cuedeck.errors import MissingExtra, install_hint

            raise MissingExtra(
                "a team on PostgreSQL needs psycopg and psycopg_pool",
                help=install_hint("postgres", distribution="cuedeck-team"),
                extra="postgres",
            ) from None
        self.url = url
        self.pool = psycopg_pool.ConnectionPool(
            url,
            min_size=1,
            max_size=max_size,
            timeout=timeout,
            kwargs={"autocommit": True},
            check=psycopg_pool.ConnectionPool.check_connection,  # drop what a restart broke
            open=True,
            name="cuedeck-team",
        )
        try:
            self.migrate()
        except BaseException:
            self.pool.close()  # its worker threads would outlive a store never returned
            raise

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection; unreachable or failing: 1408."""
        import psycopg
        import psycopg_pool

        try:
            with self.pool.connection() as conn:
                yield conn
        except (psycopg.OperationalError, psycopg_pool.PoolTimeout) as exc:
            raise StoreUnavailable(
                "the team's PostgreSQL database cannot be reached; nothing was changed",
                reason=type(exc).__name__,
                retryable=True,
                help="check that PostgreSQL runs and accepts this node; calls work again "
                "as soon as it does, without restarting the node",
            ) from None

    def migrate(self) -> int:
        """Apply the versions the database lacks; the version it is at now."""
        with self.connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            conn.execute(
                "CREATE TABLE IF NOT EXISTS cuedeck_schema "
                "(version integer PRIMARY KEY, applied timestamptz NOT NULL DEFAULT now())"
            )
            row = conn.execute("SELECT coalesce(max(version), 0) FROM cuedeck_schema").fetchone()
            current = int(row[0]) if row else 0
            if current > SCHEMA_VERSION:
                raise StoreTooNew(
                    f"the team's database is at schema version {current}; this CueDeck knows "
                    f"up to {SCHEMA_VERSION}",
                    version=current,
                    known=SCHEMA_VERSION,
                    help="upgrade CueDeck on this node to the version the other nodes run",
                )
            for version, statements in MIGRATIONS:
                if version > current:
                    conn.execute(statements.encode())
                    conn.execute("INSERT INTO cuedeck_schema (version) VALUES (%s)", (version,))
            return max(current, SCHEMA_VERSION)

    def members(self) -> list[Member]:
        """Every member, by name."""
        with self.connection() as conn:
            rows = conn.execute("SELECT name, role, sha256, created FROM members ORDER BY name")
            return [Member(*row) for row in rows]

    def add_member(self, name: str, role: str, *, sha256: str | None = None) -> str:
        """A new member and their token (``sha256``: keep that hash instead, for moving an
        embedded team over; the token returned is then empty)."""
        import psycopg

        from cuedeck.errors import InvalidInput
        from cuedeck_mcp.roles import check_name, check_role, new_token, token_hash

        check_name(name)
        checked = check_role(role)
        token = "" if sha256 is not None else new_token()
        created = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        try:
            with self.connection() as conn:
                conn.execute(
                    "INSERT INTO members (name, role, sha256, created) VALUES (%s, %s, %s, %s)",
                    (name, checked, sha256 or token_hash(token), created),
                )
        except psycopg.errors.UniqueViolation:
            raise InvalidInput(
                f"a token named {name!r} exists", field="name",
                help=f"remove it first (cue mcp token remove {name}) or pick another name",
            ) from None  # fmt: skip
        return token

    def remove_member(self, name: str) -> int:
        """Forget ``name``; how many members are left (1004 when there is none such)."""
        from cuedeck.errors import InvalidInput

        with self.connection() as conn, conn.transaction():
            gone = conn.execute("DELETE FROM members WHERE name = %s", (name,)).rowcount
            if not gone:
                raise InvalidInput(f"there is no token named {name!r}", field="name")
            row = conn.execute("SELECT count(*) FROM members").fetchone()
            return int(row[0]) if row else 0

    def member_of(self, token: str) -> Member | None:
        """The member whose token hashes to the same sha256."""
        from cuedeck_mcp.roles import token_hash

        with self.connection() as conn:
            row = conn.execute(
                "SELECT name, role, sha256, created FROM members WHERE sha256 = %s",
                (token_hash(token),),
            ).fetchone()
        return None if row is None else Member(*row)

    def put_confirmation(self, key: str, entry: dict[str, Any]) -> None:
        """Keep a pending token; drop those expired an hour ago."""
        from psycopg.types.json import Jsonb

        with self.connection() as conn, conn.transaction():
            conn.execute(
                "DELETE FROM confirmations WHERE expires < %s",
                (float(entry["expires"]) - 300.0 - _EXPIRED_KEPT,),
            )
            conn.execute(
                "INSERT INTO confirmations (key, entry, expires) VALUES (%s, %s, %s)",
                (key, Jsonb(entry), float(entry["expires"])),
            )

    def take_confirmation(self, key: str) -> dict[str, Any] | None:
        """The pending token ``key``, removed: one node takes it, the others find none."""
        with self.connection() as conn:
            row = conn.execute(
                "DELETE FROM confirmations WHERE key = %s RETURNING entry", (key,)
            ).fetchone()
        return None if row is None else dict(row[0])

    def spend(self, client: str, tool: str, limit: RateLimit) -> None:
        """One call from the bucket's row, under its lock, on the wall clock."""
        import time

        from cuedeck_mcp.errors import RateLimited
        from cuedeck_mcp.ratelimit import TokenBucket

        bucket = TokenBucket(limit, time.time)
        refused: RateLimited | None = None
        with self.connection() as conn, conn.transaction():
            conn.execute(
                "INSERT INTO buckets (client, tool, tokens, updated, calls) "
                "VALUES (%s, %s, %s, %s, '[]') ON CONFLICT DO NOTHING",
                (client, tool, bucket.capacity, bucket.updated),
            )
            row = conn.execute(
                "SELECT tokens, updated, calls FROM buckets WHERE client = %s AND tool = %s "
                "FOR UPDATE",
                (client, tool),
            ).fetchone()
            assert row is not None
            # A clock set back must not mint tokens: elapsed time counts from now then.
            bucket.tokens = min(bucket.capacity, float(row[0]))
            bucket.updated = min(float(row[1]), bucket.updated)
            bucket.calls = deque(float(t) for t in row[2])
            try:
                bucket.take(tool)
            except RateLimited as exc:  # a refusal still moves the refill forward
                refused = exc
            conn.execute(
                "UPDATE buckets SET tokens = %s, updated = %s, calls = %s "
                "WHERE client = %s AND tool = %s",
                (bucket.tokens, bucket.updated, json.dumps(list(bucket.calls)), client, tool),
            )
        if refused is not None:
            raise refused

    def record(self, member: str, tool: str, repository: str | None, outcome: str) -> None:
        """One row of the audit trail."""
        with self.connection() as conn:
            conn.execute(
                "INSERT INTO audit (member, tool, repository, outcome) VALUES (%s, %s, %s, %s)",
                (member, tool, repository, outcome),
            )

    def import_audit(self, entries: list[AuditEntry]) -> None:
        """Add ``entries`` (oldest first) with their own times: a team moved here."""
        with self.connection() as conn, conn.transaction(), conn.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO audit (at, member, tool, repository, outcome) "
                "VALUES (%s, %s, %s, %s, %s)",
                [(e.at, e.member, e.tool, e.repository, e.outcome) for e in entries],
            )

    def audit(self, limit: int = 100) -> list[AuditEntry]:
        """The latest writes, newest first."""
        with self.connection() as conn:
            rows = conn.execute(
                "SELECT at, member, tool, repository, outcome FROM audit ORDER BY id DESC LIMIT %s",
                (limit,),
            ).fetchall()
        return [
            AuditEntry(
                at.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                member,
                tool,
                repository,
                outcome,
            )
            for at, member, tool, repository, outcome in rows
        ]

    def registry(self) -> PostgresRegistry:
        """The team's registry, in this database."""
        return PostgresRegistry(self)

    @contextmanager
    def lock(self, key: str, wait: float) -> Iterator[None]:
        """Hold the advisory lock of the repository ``key`` for the block, on a pooled
        connection kept for it (session-level: a node killed mid-change loses its
        connection, and PostgreSQL frees the lock at once); TimeoutError after ``wait``
        seconds held by another node."""
        import psycopg

        with self.connection() as conn:
            try:
                conn.execute(
                    "SELECT set_config('lock_timeout', %s, false)", (f"{int(wait * 1000)}ms",)
                )
                conn.execute("SELECT pg_advisory_lock(%s, hashtext(%s))", (_REPOSITORY_LOCKS, key))
            except psycopg.errors.LockNotAvailable:
                raise TimeoutError(key) from None
            finally:
                conn.execute("RESET lock_timeout")
            try:
                yield
            finally:
                conn.execute(
                    "SELECT pg_advisory_unlock(%s, hashtext(%s))", (_REPOSITORY_LOCKS, key)
                )

    def close(self) -> None:
        """Close the pool."""
        self.pool.close()
