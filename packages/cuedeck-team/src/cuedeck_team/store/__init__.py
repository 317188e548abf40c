"""What every node of a team shares, behind one interface (docs/teams.md, "Several nodes").

:class:`TeamStore` holds the team's members (token hashes and roles), pending confirmation
tokens, rate-limit buckets, the audit trail of writes, the registry (shared repositories,
activations, composites' components) and the repositories' locks. Two implementations, chosen by
``[team] database`` in the home's config.toml or ``CUEDECK_TEAM_DATABASE``:

* :class:`~cuedeck_team.store.embedded.EmbeddedStore` (the default): today's files under
  the home (``access.toml``, the cache's SQLite buckets and confirmations, the registry's
  SQLite file, file locks), shared by the workers of one machine;
* :class:`~cuedeck_team.store.postgres.PostgresStore` (``postgresql://...``, the
  ``postgres`` extra): one PostgreSQL database every node on every machine reaches.

Other plugins may keep their shared state in the same store later (tasks' claims): they
take :func:`open_store`'s result from the ``team`` service.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from cuedeck_team.store.base import AuditEntry, Member, TeamStore

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["DATABASE_ENV", "AuditEntry", "Member", "TeamStore", "database_of", "open_store"]

#: The environment variable that names the team's database (over ``[team] database``).
DATABASE_ENV = "CUEDECK_TEAM_DATABASE"


def database_of(root: Path, environ: dict[str, str] | None = None) -> str:
    """The team's database URL (``CUEDECK_TEAM_DATABASE``, else ``[team] database`` in the
    home's config.toml); empty for the embedded store."""
    env = os.environ if environ is None else environ
    chosen = env.get(DATABASE_ENV, "").strip()
    if chosen:
        return chosen
    from cuedeck_team.settings import team_settings

    return team_settings(root).database.strip()


def open_store(root: Path, database: str | None = None) -> TeamStore:
    """The store of the team whose home is ``root``: PostgreSQL when a database is
    configured (its schema migrated), else the embedded one."""
    url = database_of(root) if database is None else database
    if not url:
        from cuedeck_team.store.embedded import EmbeddedStore

        return EmbeddedStore(root)
    from cuedeck_team.store.postgres import PostgresStore

    return PostgresStore(url)
