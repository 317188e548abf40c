"""``[team]``: where a team server keeps what its nodes share, and how members sign in."""

from __future__ import annotations

import os
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
    node_cache: str = setting(
        "",
        "Where this node keeps its own clones and indexes of the shared repositories, "
        "rebuilt from their sources at the registered head on first use (a folder on the "
        "node's own disk; `CUEDECK_TEAM_NODE_CACHE` overrides it). Empty (the default): "
        "in the home, shared by the nodes that mount it.",
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


#: The environment variable that names this node's cache (over ``[team] node_cache``).
NODE_CACHE_ENV = "CUEDECK_TEAM_NODE_CACHE"


def node_cache_of(root: Path, environ: dict[str, str] | None = None) -> Path | None:
    """This node's cache folder (``CUEDECK_TEAM_NODE_CACHE``, else ``[team] node_cache``,
    relative to the home), or None: clones in the home."""
    from pathlib import Path

    env = os.environ if environ is None else environ
    chosen = env.get(NODE_CACHE_ENV, "").strip()
    if not chosen:
        chosen = team_settings(root).node_cache.strip()
    if not chosen:
        return None
    return (root / Path(chosen).expanduser()).resolve()


def team_settings(root: Path) -> TeamSettings:
    """The ``[team]`` settings of the home at ``root``."""
    from cuedeck.workspace import open_workspace

    return open_workspace(root).config.section("team", TeamSettings)
