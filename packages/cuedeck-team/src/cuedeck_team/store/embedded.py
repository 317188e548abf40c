"""The embedded store: today's files under the team's home, shared by the server workers
of one machine (the default; nothing to install or run).

Members are ``access.toml``'s tokens, confirmation tokens the home cache's JSON file,
rate-limit buckets the cache's SQLite file that every worker spends from, the audit
trail and the registry SQLite files in the team's folder, and a repository's lock a file
lock there.
"""

from __future__ import annotations

import contextlib
import threading
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from cuedeck_team.paths import TEAM_DIR
from cuedeck_team.store.base import AuditEntry, Member

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterator
    from pathlib import Path

    from cuedeck.settings import RateLimit
    from cuedeck_team.registry import Registry

AUDIT_DB = f"{TEAM_DIR}/audit.sqlite3"
REGISTRY_DB = f"{TEAM_DIR}/registry.sqlite3"
LOCKS_DIR = f"{TEAM_DIR}/locks"


class EmbeddedStore:
    """The :class:`~cuedeck_team.store.TeamStore` of one machine, in the home at ``root``."""

    kind = "embedded"

    def __init__(self, root: Path) -> None:
        from cuedeck.serving.confirmation import FileConfirmations
        from cuedeck_mcp.paths import RATE_LIMITS_DB
        from cuedeck_mcp.ratelimit import RateLimiter

        self.root = root
        self._confirmations = FileConfirmations(root)
        self._buckets = RateLimiter({}, store=root / RATE_LIMITS_DB, every_client=True)
        self._audit: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._seen: tuple[int, int] | None = None  # access.toml's (mtime, size) when read
        self._grants: list[Any] = []

    def members(self) -> list[Member]:
        """``access.toml``'s tokens."""
        from cuedeck_mcp.roles import load_grants

        return [Member(g.name, g.role, g.sha256, g.created) for g in load_grants(self.root)]

    def add_member(self, name: str, role: str) -> str:
        """A new token in ``access.toml``."""
        from cuedeck_mcp.roles import add_grant

        return add_grant(self.root, name, role)

    def remove_member(self, name: str) -> int:
        """The token left out of ``access.toml``."""
        from cuedeck_mcp.roles import remove_grant

        return remove_grant(self.root, name)

    def member_of(self, token: str) -> Member | None:
        """The member whose hash matches (every hash compared, in constant time);
        ``access.toml`` is read again only when it changed."""
        from cuedeck_mcp.paths import ACCESS_PATH
        from cuedeck_mcp.roles import find_grant, load_grants

        try:
            stat = (self.root / ACCESS_PATH).stat()
            seen = (stat.st_mtime_ns, stat.st_size)
        except FileNotFoundError:
            seen = (0, 0)
        with self._lock:
            if seen != self._seen:
                self._grants = load_grants(self.root) if seen != (0, 0) else []
                self._seen = seen
            grants = self._grants
        grant = find_grant(grants, token)
        return (
            None if grant is None else Member(grant.name, grant.role, grant.sha256, grant.created)
        )

    def put_confirmation(self, key: str, entry: dict[str, Any]) -> None:
        """Into the home cache's confirmations file."""
        self._confirmations.put_confirmation(key, entry)

    def take_confirmation(self, key: str) -> dict[str, Any] | None:
        """Out of the home cache's confirmations file."""
        return self._confirmations.take_confirmation(key)

    def spend(self, client: str, tool: str, limit: RateLimit) -> None:
        """From the bucket in the home cache's SQLite file."""
        self._buckets.spend(client, tool, limit)

    def record(self, member: str, tool: str, repository: str | None, outcome: str) -> None:
        """One row in the team folder's audit file."""
        at = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        with self._lock:
            self._db().execute(
                "INSERT INTO audit (at, member, tool, repository, outcome) VALUES (?, ?, ?, ?, ?)",
                (at, member, tool, repository, outcome),
            )

    def audit(self, limit: int = 100) -> list[AuditEntry]:
        """The latest rows, newest first."""
        with self._lock:
            rows = self._db().execute(
                "SELECT at, member, tool, repository, outcome FROM audit ORDER BY id DESC LIMIT ?",
                (limit,),
            )
            return [AuditEntry(*row) for row in rows]

    def _db(self) -> sqlite3.Connection:
        if self._audit is None:
            from cuedeck.system.databases import open_db

            db = open_db(self.root / AUDIT_DB, threads=True)  # one thread at a time: the lock
            db.execute(
                "CREATE TABLE IF NOT EXISTS audit (id INTEGER PRIMARY KEY, at TEXT NOT NULL, "
                "member TEXT NOT NULL, tool TEXT NOT NULL, repository TEXT, outcome TEXT NOT NULL)"
            )
            self._audit = db
        return self._audit

    def registry(self) -> Registry:
        """The registry file in the team's folder."""
        from cuedeck_team.registry import Registry

        return Registry(self.root / REGISTRY_DB)

    def lock(self, key: str, wait: float) -> contextlib.AbstractContextManager[None]:
        """A file lock in the team's folder (see :func:`lock`)."""
        return lock(self.root, key, wait)

    def close(self) -> None:
        """Close the audit file and the buckets' file."""
        self._buckets.close()
        with self._lock:
            if self._audit is not None:
                self._audit.close()
                self._audit = None


@contextlib.contextmanager
def lock(root: Path, key: str, wait: float) -> Iterator[None]:
    """Hold the file lock of the repository ``key`` in the team's folder at ``root`` (it
    holds across the processes of one machine; the kernel frees it when its holder dies);
    TimeoutError after ``wait`` seconds."""
    from cuedeck.errors import LockError
    from cuedeck.writes import locked

    safe = key.replace("/", "_")
    try:
        with locked(root / LOCKS_DIR / f"{safe}.lock", timeout=wait, display=key):
            yield
    except LockError:
        raise TimeoutError(key) from None
