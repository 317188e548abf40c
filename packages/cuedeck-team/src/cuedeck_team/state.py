"""The team's :class:`~cuedeck_mcp.shared_state.SharedState`: its store (members, buckets,
confirmations, audit) and sign-in with an identity provider's tokens."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from cuedeck_team.signin import JwtSignIn, looks_like_jwt

if TYPE_CHECKING:
    from pathlib import Path

    from cuedeck.serving.confirmation import ConfirmationStore
    from cuedeck.settings import RateLimit
    from cuedeck_mcp.shared_state import SignedIn
    from cuedeck_team.store import TeamStore

log = logging.getLogger("cuedeck")


class TeamState:
    """What every node of the team at ``root`` shares, as a server uses it."""

    def __init__(self, root: Path, store: TeamStore) -> None:
        from cuedeck_team.settings import team_settings

        self.store = store
        settings = team_settings(root)
        self.signin = JwtSignIn(settings, root) if settings.jwt_issuer else None
        # The embedded store keeps confirmations where a server of one machine always has:
        # each repository's cache. A shared store keeps them for every node.
        self.confirmations: ConfirmationStore | None = None if store.kind == "embedded" else store

    def requires_tokens(self) -> bool:
        """Members in a database, or sign-in configured: every request needs a token."""
        return self.store.kind != "embedded" or self.signin is not None

    def member_of(self, token: str) -> SignedIn | None:
        """A member's token, else a JWT access token when sign-in is configured."""
        from cuedeck.errors import InvalidInput

        if self.signin is not None and looks_like_jwt(token):
            return self.signin.verify(token)
        try:
            return self.store.member_of(token)
        except InvalidInput as exc:  # access.toml broken: fail closed, say why in the log
            log.error("error[1015] refused a bearer request: %s", exc.message)
            return None

    def spend(self, client: str, tool: str, limit: RateLimit) -> None:
        """From the store's bucket."""
        self.store.spend(client, tool, limit)

    def record(self, member: str, tool: str, repository: str | None, outcome: str) -> None:
        """Into the store's audit trail."""
        self.store.record(member, tool, repository, outcome)

    def resource_metadata(self) -> dict[str, Any] | None:
        """RFC 9728 metadata when sign-in is configured."""
        return None if self.signin is None else self.signin.metadata()
