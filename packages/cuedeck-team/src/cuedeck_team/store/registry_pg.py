"""The registry in the team's PostgreSQL database: shared repositories (with the head
every node serves), activations and composites' components, for nodes on many machines.

The same records and rules as the embedded :class:`~cuedeck_team.registry.Registry`: a
row is claimed (``creating``) before the folder it describes is made and marked
``ready`` after; a claim is one ``INSERT ... ON CONFLICT DO NOTHING``, so two nodes
claiming one alias at once get one row and one 1402/1406.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import attrs

from cuedeck_team.registry import (
    Activation,
    Component,
    Kind,
    Shared,
    check_changes,
    fields_of,
    new_generation,
    now,
    refusal,
)

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    import psycopg


class Connections(Protocol):
    """Where the registry gets a database connection (the PostgreSQL store's pool)."""

    def connection(self) -> AbstractContextManager[psycopg.Connection[Any]]:
        """A pooled connection for one operation; 1408 when the database is unreachable."""
        ...


#: The registry's tables (schema version 2 of :data:`~cuedeck_team.store.postgres.MIGRATIONS`).
SCHEMA = """
CREATE TABLE shared_repositories (
    alias text PRIMARY KEY,
    source text NOT NULL,
    branch text NOT NULL,
    folder text NOT NULL,
    state text NOT NULL CHECK (state IN ('creating', 'ready', 'removing')),
    created text NOT NULL,
    created_by text NOT NULL,
    indexed text NOT NULL DEFAULT '',
    generation text NOT NULL,
    head text NOT NULL DEFAULT '',
    description text NOT NULL DEFAULT ''
);
CREATE TABLE activations (
    owner text NOT NULL,
    alias text NOT NULL,
    kind text NOT NULL CHECK (kind IN ('activation', 'composite')),
    golden text NOT NULL DEFAULT '',
    branch text NOT NULL DEFAULT '',
    folder text NOT NULL,
    state text NOT NULL CHECK (state IN ('creating', 'ready', 'removing')),
    created text NOT NULL,
    generation text NOT NULL,
    PRIMARY KEY (owner, alias)
);
CREATE TABLE components (
    owner text NOT NULL,
    alias text NOT NULL,
    golden text NOT NULL,
    folder text NOT NULL,
    added text NOT NULL,
    PRIMARY KEY (owner, alias, golden)
);
"""


def _marks(cls: type) -> str:
    return ", ".join("%s" for _ in attrs.fields(cls))


class PostgresRegistry:
    """The :class:`~cuedeck_team.registry.RegistryStore` in ``store``'s database."""

    def __init__(self, store: Connections) -> None:
        self.store = store

    # -- shared repositories ---------------------------------------------------------------

    def shared(self, *, ready_only: bool = True) -> list[Shared]:
        """Every shared repository, by alias."""
        where = " WHERE state = 'ready'" if ready_only else ""
        with self.store.connection() as conn:
            rows = conn.execute(
                f"SELECT {fields_of(Shared)} FROM shared_repositories{where} ORDER BY alias"
            ).fetchall()
        return [Shared(*row) for row in rows]

    def find_shared(self, alias: str) -> Shared | None:
        """The shared repository ``alias`` in any state, or None."""
        with self.store.connection() as conn:
            row = conn.execute(
                f"SELECT {fields_of(Shared)} FROM shared_repositories WHERE alias = %s", (alias,)
            ).fetchone()
        return Shared(*row) if row else None

    def begin_shared(self, alias: str, source: str, branch: str, by: str) -> Shared:
        """Claim ``alias`` (state ``creating``); 1402/1406 when it is taken."""
        record = Shared(alias, source, branch, alias, "creating", now(), by, "", new_generation())
        with self.store.connection() as conn, conn.transaction():
            claimed = conn.execute(
                f"INSERT INTO shared_repositories ({fields_of(Shared)}) "
                f"VALUES ({_marks(Shared)}) ON CONFLICT DO NOTHING RETURNING alias",
                attrs.astuple(record),
            ).fetchone()
            if claimed is None:
                row = conn.execute(
                    "SELECT state FROM shared_repositories WHERE alias = %s", (alias,)
                ).fetchone()
                raise refusal(alias, row[0] if row else "creating", "a shared repository")
        return record

    def update_shared(self, alias: str, **changes: str) -> None:
        """Set fields of the shared repository ``alias``."""
        check_changes(Shared, changes)
        assignments = ", ".join(f"{name} = %s" for name in changes)
        with self.store.connection() as conn:
            conn.execute(
                f"UPDATE shared_repositories SET {assignments} WHERE alias = %s",
                (*changes.values(), alias),
            )

    def drop_shared(self, alias: str) -> None:
        """Forget the shared repository ``alias``."""
        with self.store.connection() as conn:
            conn.execute("DELETE FROM shared_repositories WHERE alias = %s", (alias,))

    # -- activations and composites ---------------------------------------------------------

    def activations(self, owner: str | None = None, *, ready_only: bool = True) -> list[Activation]:
        """The activations of ``owner`` (everyone's when None), by owner and alias."""
        conditions, args = [], []
        if owner is not None:
            conditions.append("owner = %s")
            args.append(owner)
        if ready_only:
            conditions.append("state = 'ready'")
        where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
        with self.store.connection() as conn:
            rows = conn.execute(
                f"SELECT {fields_of(Activation)} FROM activations{where} ORDER BY owner, alias",
                args,
            ).fetchall()
        return [Activation(*row) for row in rows]

    def find_activation(self, owner: str, alias: str) -> Activation | None:
        """``owner``'s activation ``alias`` in any state, or None."""
        with self.store.connection() as conn:
            row = conn.execute(
                f"SELECT {fields_of(Activation)} FROM activations WHERE owner = %s AND alias = %s",
                (owner, alias),
            ).fetchone()
        return Activation(*row) if row else None

    def begin_activation(
        self, owner: str, alias: str, kind: Kind, golden: str, branch: str, folder: str
    ) -> Activation:
        """Claim ``owner``'s ``alias`` (state ``creating``); 1402/1406 when it is taken."""
        record = Activation(
            owner, alias, kind, golden, branch, folder, "creating", now(), new_generation()
        )
        with self.store.connection() as conn, conn.transaction():
            claimed = conn.execute(
                f"INSERT INTO activations ({fields_of(Activation)}) "
                f"VALUES ({_marks(Activation)}) ON CONFLICT DO NOTHING RETURNING alias",
                attrs.astuple(record),
            ).fetchone()
            if claimed is None:
                row = conn.execute(
                    "SELECT state FROM activations WHERE owner = %s AND alias = %s", (owner, alias)
                ).fetchone()
                raise refusal(alias, row[0] if row else "creating", "one of your repositories")
        return record

    def update_activation(self, owner: str, alias: str, **changes: str) -> None:
        """Set fields of ``owner``'s activation ``alias``."""
        check_changes(Activation, changes)
        assignments = ", ".join(f"{name} = %s" for name in changes)
        with self.store.connection() as conn:
            conn.execute(
                f"UPDATE activations SET {assignments} WHERE owner = %s AND alias = %s",
                (*changes.values(), owner, alias),
            )

    def drop_activation(self, owner: str, alias: str) -> None:
        """Forget ``owner``'s activation ``alias`` and its components."""
        with self.store.connection() as conn, conn.transaction():
            key = (owner, alias)
            conn.execute("DELETE FROM activations WHERE owner = %s AND alias = %s", key)
            conn.execute("DELETE FROM components WHERE owner = %s AND alias = %s", key)

    def components(self, owner: str, alias: str) -> list[Component]:
        """The components of ``owner``'s composite ``alias``, by folder."""
        with self.store.connection() as conn:
            rows = conn.execute(
                "SELECT golden, folder, added FROM components WHERE owner = %s AND alias = %s "
                "ORDER BY folder",
                (owner, alias),
            ).fetchall()
        return [Component(*row) for row in rows]

    def add_component(self, owner: str, alias: str, golden: str, folder: str) -> None:
        """Record ``golden`` as a component of ``owner``'s composite ``alias``."""
        with self.store.connection() as conn:
            conn.execute(
                "INSERT INTO components (owner, alias, golden, folder, added) "
                "VALUES (%s, %s, %s, %s, %s)",
                (owner, alias, golden, folder, now()),
            )

    def remove_component(self, owner: str, alias: str, golden: str) -> None:
        """Forget ``golden`` as a component of ``owner``'s composite ``alias``."""
        with self.store.connection() as conn:
            conn.execute(
                "DELETE FROM components WHERE owner = %s AND alias = %s AND golden = %s",
                (owner, alias, golden),
            )

    def generations(self) -> set[str]:
        """The generation of every ready repository."""
        with self.store.connection() as conn:
            rows = conn.execute(
                "SELECT generation FROM shared_repositories WHERE state = 'ready' UNION "
                "SELECT generation FROM activations WHERE state = 'ready'"
            ).fetchall()
        return {row[0] for row in rows}

    # -- moving an embedded team here -------------------------------------------------------

    def import_records(
        self,
        shared: list[Shared],
        activations: list[Activation],
        components: dict[tuple[str, str], list[Component]],
    ) -> dict[str, int]:
        """Add the ready records of an embedded registry that are not here yet (by key);
        how many of each were added."""
        added = {"repositories": 0, "activations": 0, "components": 0}
        with self.store.connection() as conn, conn.transaction():
            for record in shared:
                added["repositories"] += conn.execute(
                    f"INSERT INTO shared_repositories ({fields_of(Shared)}) "
                    f"VALUES ({_marks(Shared)}) ON CONFLICT DO NOTHING",
                    attrs.astuple(record),
                ).rowcount
            for activation in activations:
                added["activations"] += conn.execute(
                    f"INSERT INTO activations ({fields_of(Activation)}) "
                    f"VALUES ({_marks(Activation)}) ON CONFLICT DO NOTHING",
                    attrs.astuple(activation),
                ).rowcount
            for (owner, alias), parts in components.items():
                for part in parts:
                    added["components"] += conn.execute(
                        "INSERT INTO components (owner, alias, golden, folder, added) "
                        "VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                        (owner, alias, part.golden, part.folder, part.added),
                    ).rowcount
        return added
