"""The shared store's interface and records (see :mod:`cuedeck_team.store`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import attrs

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from cuedeck.plugins.tools import Role
    from cuedeck.settings import RateLimit
    from cuedeck_team.registry import RegistryStore


@attrs.frozen
class Member:
    """One member: a name, a role, the sha256 of their token and when it was made."""

    name: str
    role: Role
    sha256: str
    created: str


@attrs.frozen
class AuditEntry:
    """One write: who, which tool, which repository (None: the team's home), the outcome
    (``ok`` or an error code) and when (UTC, ISO 8601)."""

    at: str
    member: str
    tool: str
    repository: str | None
    outcome: str


class TeamStore(Protocol):
    """Everything the nodes of one team share: members, confirmations, buckets, the audit
    trail, the registry and repositories' locks."""

    #: ``embedded`` or ``postgresql``.
    kind: str

    def members(self) -> list[Member]:
        """Every member, by name."""
        ...

    def add_member(self, name: str, role: str) -> str:
        """Record a new member; their token, shown once (1004 for a taken name)."""
        ...

    def remove_member(self, name: str) -> int:
        """Forget ``name`` (their token is refused from now on); how many are left."""
        ...

    def member_of(self, token: str) -> Member | None:
        """The member whose token is ``token`` (compared by hash), or None."""
        ...

    def put_confirmation(self, key: str, entry: dict[str, Any]) -> None:
        """Keep a pending confirmation token (its hash ``key``) and what it binds."""
        ...

    def take_confirmation(self, key: str) -> dict[str, Any] | None:
        """Remove and return the pending token ``key`` (None: unknown or used): a token is
        redeemed at most once across every node."""
        ...

    def spend(self, client: str, tool: str, limit: RateLimit) -> None:
        """Spend one call from ``client``'s bucket for ``tool``, or raise
        :class:`~cuedeck_mcp.errors.RateLimited`: one bucket across every node."""
        ...

    def record(self, member: str, tool: str, repository: str | None, outcome: str) -> None:
        """Add a write to the audit trail."""
        ...

    def audit(self, limit: int = 100) -> list[AuditEntry]:
        """The latest writes, newest first."""
        ...

    def registry(self) -> RegistryStore:
        """The team's registry: shared repositories, activations, components."""
        ...

    def lock(self, key: str, wait: float) -> AbstractContextManager[None]:
        """Hold the lock of the repository ``key`` (every node's) for a block; TimeoutError
        when another holds it for longer than ``wait`` seconds. A holder that dies frees it."""
        ...

    def close(self) -> None:
        """Release connections and files."""
        ...
