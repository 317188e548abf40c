"""The team's registry: shared repositories, activations and composite components.

:class:`RegistryStore` is what a team's code asks of it; two implementations: :class:`Registry`,
one SQLite file (WAL) under the team's folder for the nodes of one machine (the embedded
store), and :class:`~cuedeck_team.store.registry_pg.PostgresRegistry`, tables in the team's
PostgreSQL database for nodes on many machines. In both, every node sees the same
repositories at once: a row is written before the folder it describes is made (state
``creating``) and marked ``ready`` after, so two workers never build one alias twice and
a reader never serves a half-made working copy. Every operation opens its own short
connection: callers come from many threads and processes.
"""

from __future__ import annotations

import contextlib
import re
import secrets
import sqlite3
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal, Protocol

import attrs

from cuedeck.errors import InvalidInput
from cuedeck.system.databases import open_db
from cuedeck_team.errors import AliasTaken, RepositoryBusy

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

#: What every shared repository's alias ends with (the specification's naming).
GLOBAL_SUFFIX = "-global"
_ALIAS = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")

Kind = Literal["activation", "composite"]
State = Literal["creating", "ready", "removing"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS shared (
    alias TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    branch TEXT NOT NULL,
    folder TEXT NOT NULL,
    state TEXT NOT NULL,
    created TEXT NOT NULL,
    created_by TEXT NOT NULL,
    indexed TEXT NOT NULL DEFAULT '',
    generation TEXT NOT NULL,
    head TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS activations (
    owner TEXT NOT NULL,
    alias TEXT NOT NULL,
    kind TEXT NOT NULL,
    golden TEXT NOT NULL DEFAULT '',
    branch TEXT NOT NULL DEFAULT '',
    folder TEXT NOT NULL,
    state TEXT NOT NULL,
    created TEXT NOT NULL,
    generation TEXT NOT NULL,
    PRIMARY KEY (owner, alias)
);
CREATE TABLE IF NOT EXISTS components (
    owner TEXT NOT NULL,
    alias TEXT NOT NULL,
    golden TEXT NOT NULL,
    folder TEXT NOT NULL,
    added TEXT NOT NULL,
    PRIMARY KEY (owner, alias, golden)
);
"""
#: Columns added since the first release: a home made before them gets them on first use.
_ADDED = {"head": "TEXT NOT NULL DEFAULT ''", "description": "TEXT NOT NULL DEFAULT ''"}


def now() -> str:
    """The time as the registry writes it (UTC, seconds)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def check_alias(value: str, *, field: str = "repository_alias") -> str:
    """``value`` if it can name a repository (and a folder): letters, digits, ``. _ -``,
    up to 64, not starting with a dot or a dash; else 1004."""
    if not _ALIAS.match(value) or ".." in value:
        raise InvalidInput(
            f"{value!r} is not a repository alias (letters, digits, . _ -; up to 64; "
            "starting with a letter or digit)",
            field=field,
        )
    return value


def global_alias(name: str, *, field: str = "alias") -> str:
    """The shared alias of ``name``: ``backend`` and ``backend-global`` both give
    ``backend-global``."""
    base = name.removesuffix(GLOBAL_SUFFIX)
    check_alias(base, field=field)
    return base + GLOBAL_SUFFIX


def is_global(alias: str) -> bool:
    """Whether ``alias`` names a shared repository (ends in ``-global``)."""
    return alias.endswith(GLOBAL_SUFFIX)


@attrs.frozen
class Shared:
    """A shared repository: its alias, where it came from (credentials removed), its
    folder, who registered it and when, when it was last indexed, and the commit every
    node serves (``head``: the registered head)."""

    alias: str
    source: str
    branch: str
    folder: str
    state: State
    created: str
    created_by: str
    indexed: str
    generation: str
    head: str = ""
    description: str = ""


@attrs.frozen
class Activation:
    """A user's working copy of a shared repository, or a composite of several."""

    owner: str
    alias: str
    kind: Kind
    golden: str
    branch: str
    folder: str
    state: State
    created: str
    generation: str


@attrs.frozen
class Component:
    """One shared repository inside a composite, in its own folder."""

    golden: str
    folder: str
    added: str


class RegistryStore(Protocol):
    """The registry of a team, wherever it is kept (see the module's docstring)."""

    def shared(self, *, ready_only: bool = True) -> list[Shared]:
        """Every shared repository, by alias."""
        ...

    def find_shared(self, alias: str) -> Shared | None:
        """The shared repository ``alias`` in any state, or None."""
        ...

    def begin_shared(self, alias: str, source: str, branch: str, by: str) -> Shared:
        """Claim ``alias`` for a repository being registered (state ``creating``)."""
        ...

    def update_shared(self, alias: str, **changes: str) -> None:
        """Set fields of the shared repository ``alias``."""
        ...

    def drop_shared(self, alias: str) -> None:
        """Forget the shared repository ``alias``."""
        ...

    def activations(self, owner: str | None = None, *, ready_only: bool = True) -> list[Activation]:
        """The activations of ``owner`` (everyone's when None), by owner and alias."""
        ...

    def find_activation(self, owner: str, alias: str) -> Activation | None:
        """``owner``'s activation ``alias`` in any state, or None."""
        ...

    def begin_activation(
        self, owner: str, alias: str, kind: Kind, golden: str, branch: str, folder: str
    ) -> Activation:
        """Claim ``owner``'s ``alias`` for a working copy being made (state ``creating``)."""
        ...

    def update_activation(self, owner: str, alias: str, **changes: str) -> None:
        """Set fields of ``owner``'s activation ``alias``."""
        ...

    def drop_activation(self, owner: str, alias: str) -> None:
        """Forget ``owner``'s activation ``alias`` and its components."""
        ...

    def components(self, owner: str, alias: str) -> list[Component]:
        """The components of ``owner``'s composite ``alias``, by folder."""
        ...

    def add_component(self, owner: str, alias: str, golden: str, folder: str) -> None:
        """Record ``golden`` as a component of ``owner``'s composite ``alias``."""
        ...

    def remove_component(self, owner: str, alias: str, golden: str) -> None:
        """Forget ``golden`` as a component of ``owner``'s composite ``alias``."""
        ...

    def generations(self) -> set[str]:
        """The generation of every ready repository."""
        ...


class Registry:
    """The registry file at ``path`` (the embedded store's)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._upgraded = False

    @contextlib.contextmanager
    def connect(self, *, write: bool = False) -> Iterator[sqlite3.Connection]:
        """A connection for one operation; ``write`` holds the write lock throughout, so
        a check and the change it allows are one transaction."""
        connection = open_db(self.path)
        try:
            connection.executescript(_SCHEMA)
            if not self._upgraded:
                have = {row[1] for row in connection.execute("PRAGMA table_info(shared)")}
                for column, kind in _ADDED.items():
                    if column not in have:
                        with contextlib.suppress(sqlite3.OperationalError):  # another did it
                            connection.execute(f"ALTER TABLE shared ADD COLUMN {column} {kind}")
                self._upgraded = True
            connection.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield connection
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            connection.execute("COMMIT")
        finally:
            connection.close()

    # -- shared repositories ---------------------------------------------------------------

    def shared(self, *, ready_only: bool = True) -> list[Shared]:
        """Every shared repository, by alias."""
        with self.connect() as db:
            rows = db.execute(f"SELECT {fields_of(Shared)} FROM shared ORDER BY alias").fetchall()
        found = [Shared(*row) for row in rows]
        return [s for s in found if s.state == "ready"] if ready_only else found

    def find_shared(self, alias: str) -> Shared | None:
        """The shared repository ``alias`` in any state, or None."""
        with self.connect() as db:
            row = db.execute(
                f"SELECT {fields_of(Shared)} FROM shared WHERE alias = ?", (alias,)
            ).fetchone()
        return Shared(*row) if row else None

    def begin_shared(self, alias: str, source: str, branch: str, by: str) -> Shared:
        """Claim ``alias`` for a repository being registered (state ``creating``)."""
        with self.connect(write=True) as db:
            taken = db.execute("SELECT state FROM shared WHERE alias = ?", (alias,)).fetchone()
            if taken is not None:
                raise refusal(alias, taken[0], "a shared repository")
            record = Shared(
                alias, source, branch, alias, "creating", now(), by, "", new_generation()
            )
            db.execute(
                f"INSERT INTO shared ({fields_of(Shared)}) VALUES ({_marks(Shared)})",
                attrs.astuple(record),
            )
        return record

    def update_shared(self, alias: str, **changes: str) -> None:
        """Set fields of the shared repository ``alias``."""
        _update(self, "shared", "alias = ?", (alias,), changes)

    def drop_shared(self, alias: str) -> None:
        """Forget the shared repository ``alias``."""
        with self.connect(write=True) as db:
            db.execute("DELETE FROM shared WHERE alias = ?", (alias,))

    # -- activations and composites ---------------------------------------------------------

    def activations(self, owner: str | None = None, *, ready_only: bool = True) -> list[Activation]:
        """The activations of ``owner`` (everyone's when None), by owner and alias."""
        query = f"SELECT {fields_of(Activation)} FROM activations"
        args: tuple[str, ...] = ()
        if owner is not None:
            query, args = query + " WHERE owner = ?", (owner,)
        with self.connect() as db:
            rows = db.execute(query + " ORDER BY owner, alias", args).fetchall()
        found = [Activation(*row) for row in rows]
        return [a for a in found if a.state == "ready"] if ready_only else found

    def find_activation(self, owner: str, alias: str) -> Activation | None:
        """``owner``'s activation ``alias`` in any state, or None."""
        with self.connect() as db:
            row = db.execute(
                f"SELECT {fields_of(Activation)} FROM activations WHERE owner = ? AND alias = ?",
                (owner, alias),
            ).fetchone()
        return Activation(*row) if row else None

    def begin_activation(
        self, owner: str, alias: str, kind: Kind, golden: str, branch: str, folder: str
    ) -> Activation:
        """Claim ``owner``'s ``alias`` for a working copy being made (state ``creating``)."""
        with self.connect(write=True) as db:
            taken = db.execute(
                "SELECT state FROM activations WHERE owner = ? AND alias = ?", (owner, alias)
            ).fetchone()
            if taken is not None:
                raise refusal(alias, taken[0], "one of your repositories")
            record = Activation(
                owner, alias, kind, golden, branch, folder, "creating", now(), new_generation()
            )
            db.execute(
                f"INSERT INTO activations ({fields_of(Activation)}) VALUES ({_marks(Activation)})",
                attrs.astuple(record),
            )
        return record

    def update_activation(self, owner: str, alias: str, **changes: str) -> None:
        """Set fields of ``owner``'s activation ``alias``."""
        _update(self, "activations", "owner = ? AND alias = ?", (owner, alias), changes)

    def drop_activation(self, owner: str, alias: str) -> None:
        """Forget ``owner``'s activation ``alias`` and its components."""
        with self.connect(write=True) as db:
            db.execute("DELETE FROM activations WHERE owner = ? AND alias = ?", (owner, alias))
            db.execute("DELETE FROM components WHERE owner = ? AND alias = ?", (owner, alias))

    def components(self, owner: str, alias: str) -> list[Component]:
        """The components of ``owner``'s composite ``alias``, by folder."""
        with self.connect() as db:
            rows = db.execute(
                "SELECT golden, folder, added FROM components WHERE owner = ? AND alias = ? "
                "ORDER BY folder",
                (owner, alias),
            ).fetchall()
        return [Component(*row) for row in rows]

    def add_component(self, owner: str, alias: str, golden: str, folder: str) -> None:
        """Record ``golden`` as a component of ``owner``'s composite ``alias``."""
        with self.connect(write=True) as db:
            db.execute(
                "INSERT INTO components (owner, alias, golden, folder, added) "
                "VALUES (?, ?, ?, ?, ?)",
                (owner, alias, golden, folder, now()),
            )

    def remove_component(self, owner: str, alias: str, golden: str) -> None:
        """Forget ``golden`` as a component of ``owner``'s composite ``alias``."""
        with self.connect(write=True) as db:
            db.execute(
                "DELETE FROM components WHERE owner = ? AND alias = ? AND golden = ?",
                (owner, alias, golden),
            )

    def generations(self) -> set[str]:
        """The generation of every ready repository: a worker closes what it has open
        for any other (removed, or removed and made again)."""
        with self.connect() as db:
            rows = db.execute(
                "SELECT generation FROM shared WHERE state = 'ready' UNION "
                "SELECT generation FROM activations WHERE state = 'ready'"
            ).fetchall()
        return {row[0] for row in rows}


def new_generation() -> str:
    """A new repository's generation (every repository made gets its own)."""
    return secrets.token_hex(8)


def fields_of(cls: type) -> str:
    """The columns of a record class, in order, comma-separated."""
    return ", ".join(field.name for field in attrs.fields(cls))


def _marks(cls: type) -> str:
    return ", ".join("?" for _ in attrs.fields(cls))


def _update(
    registry: Registry, table: str, where: str, key: tuple[str, ...], changes: dict[str, str]
) -> None:
    check_changes(Shared if table == "shared" else Activation, changes)
    assignments = ", ".join(f"{name} = ?" for name in changes)
    with registry.connect(write=True) as db:
        db.execute(f"UPDATE {table} SET {assignments} WHERE {where}", (*changes.values(), *key))


def check_changes(cls: type, changes: dict[str, str]) -> None:
    """Refuse a change to a field ``cls`` does not have (a programming error)."""
    unknown = set(changes) - {field.name for field in attrs.fields(cls)}
    if unknown:
        raise ValueError(f"no such field: {sorted(unknown)}")


def refusal(alias: str, state: str, what: str) -> Exception:
    """The error of claiming ``alias`` in ``state``: 1406 while being made or removed, else
    1402."""
    if state != "ready":
        return RepositoryBusy(
            f"{alias} is being {'made' if state == 'creating' else 'removed'} by another request",
            repository_alias=alias,
            state=state,
            help="wait for it to finish, then look again (list_global_repos, list_activated_repos)",
        )
    return AliasTaken(
        f"{alias} is already {what}",
        repository_alias=alias,
        help="pick another alias, or remove the existing one first",
    )
