"""What a server's nodes share when a team keeps it outside this machine's files: the
``team`` service's :class:`SharedState` (cuedeck-team's store, docs/teams.md).

A server given one checks bearer tokens with it (members and JWT sign-in), spends rate
limits from its buckets, keeps confirmation tokens in it and records every write in its
audit trail, so any node answers like any other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from cuedeck.plugins.tools import Role
    from cuedeck.serving.confirmation import ConfirmationStore
    from cuedeck.settings import RateLimit


class SignedIn(Protocol):
    """Who a bearer token names."""

    @property
    def name(self) -> str: ...

    @property
    def role(self) -> Role: ...


class SharedState(Protocol):
    """The state a team's nodes share."""

    #: Where pending confirmation tokens are kept (None: each workspace's own file).
    confirmations: ConfirmationStore | None

    def requires_tokens(self) -> bool:
        """Whether every HTTP request needs a token, whatever the home's files say."""
        ...

    def member_of(self, token: str) -> SignedIn | None:
        """Who ``token`` names (a member's token or a JWT access token), or None; a
        :class:`~cuedeck.errors.CueError` says why a token is refused or cannot be
        checked now."""
        ...

    def spend(self, client: str, tool: str, limit: RateLimit) -> None:
        """One call from the shared bucket, or RateLimited."""
        ...

    def record(self, member: str, tool: str, repository: str | None, outcome: str) -> None:
        """A write in the audit trail."""
        ...

    def resource_metadata(self) -> dict[str, Any] | None:
        """The OAuth protected resource metadata (RFC 9728) when sign-in with an identity
        provider is configured, else None."""
        ...
