"""``[team]``: where a team server keeps what its nodes share, and how members sign in."""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from cuedeck.settings import setting

if TYPE_CHECKING:
    from pathlib import Path


@attrs.frozen
class TeamSettings:
    """``[team]``: a team server (docs/teams.md)."""

    database: str = setting(
        "",
        "The PostgreSQL database every node of the team shares (`postgresql://user@host/db`; "
        "needs the `postgres` extra); `CUEDECK_TEAM_DATABASE` overrides it. Empty (the "
        "default): the embedded store, files under the home, for one machine.",
    )
    jwt_issuer: str = setting(
        "",
        "Sign-in with an identity provider: the `iss` its access tokens carry. Empty: only "
        "members' static tokens sign in.",
    )
    jwt_audience: str = setting(
        "", "The `aud` a token must carry: this server's resource URL (`https://host/mcp`)."
    )
    jwks_file: str = setting(
        "",
        "The identity provider's JSON Web Key Set, a file the operator keeps current "
        "(re-read when it changes). Set this or `jwks_url`.",
    )
    jwks_url: str = setting(
        "",
        "The identity provider's `jwks_uri` (https; http only on a loopback address): "
        "fetched when first needed, again after its max-age (an hour at most) or when a "
        "token names a key it lacks, at most every 30 s.",
    )
    role_claim: str = setting(
        "cuedeck_role",
        "The claim naming the member's role (`read`, `write` or `admin`); `scope` reads "
        "`cuedeck:read`, `cuedeck:write` or `cuedeck:admin` among the token's scopes.",
    )


def team_settings(root: Path) -> TeamSettings:
    """The ``[team]`` settings of the home at ``root``."""
    from cuedeck.workspace import open_workspace

    return open_workspace(root).config.section("team", TeamSettings)
