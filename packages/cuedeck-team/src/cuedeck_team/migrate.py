"""Moving an embedded team to PostgreSQL (``cue team migrate``): members with their token
hashes (every token keeps working), the audit trail, and the registry (shared
repositories, activations, composites' components: their ready rows). Rate-limit buckets
and pending confirmation tokens are not moved: a bucket starts full and a pending token is
asked for again, which loses no work. Working copies stay under the home, on the storage
every node mounts; shared repositories' clones are rebuilt by each node (docs/teams.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuedeck.errors import InvalidInput

if TYPE_CHECKING:
    from pathlib import Path


def to_postgres(home: Path, database: str) -> dict[str, int]:
    """Copy the embedded team at ``home`` into ``database``; how many of each were moved.
    Run again, it moves nothing twice (a registry row already there is kept); a name that
    holds another token there is 1004."""
    from cuedeck_team.store.embedded import EmbeddedStore
    from cuedeck_team.store.postgres import PostgresStore

    source = EmbeddedStore(home)
    target = PostgresStore(database)
    try:
        present = {m.name: m for m in target.members()}
        moved = skipped = 0
        for found in source.members():
            there = present.get(found.name)
            if there is not None:
                if there.sha256 != found.sha256:
                    raise InvalidInput(
                        f"member {found.name!r} already holds another token in the database",
                        field="name",
                        help="remove it there (cue team member remove) or rename it here",
                    )
                skipped += 1
                continue
            target.add_member(found.name, found.role, sha256=found.sha256)
            moved += 1
        entries = [] if target.audit(1) else list(reversed(source.audit(limit=10**9)))
        target.import_audit(entries)
        registry = source.registry()
        activations = registry.activations()
        added = target.registry().import_records(
            registry.shared(),
            activations,
            {(a.owner, a.alias): registry.components(a.owner, a.alias) for a in activations},
        )
        return {"members": moved, "audit": len(entries), "skipped": skipped, **added}
    finally:
        source.close()
        target.close()
