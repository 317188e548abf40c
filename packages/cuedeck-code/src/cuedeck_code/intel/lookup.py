"""The graph's names as resolution reads them (:class:`.resolve.NameLookup`'s fetch):
a namespace's definitions from the names table, then the imports of the file it is,
then the typed names of its files (:class:`.rows.Bindings`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cuedeck_code.intel.rows import decoded_row
from cuedeck_code.intel.store import name_key

if TYPE_CHECKING:
    from collections.abc import Callable

    from cuedeck_code.intel.resolve import Row
    from cuedeck_code.intel.rows import Bindings, Spaces
    from cuedeck_code.intel.store import GraphStore

    Fetch = Callable[[str, str], list[Row]]
    #: The files the graph holds: path -> ``(id, sha256, interface, source, ns)``.
    Held = dict[str, tuple[int, str, str, str, str]]


def sql_fetch(store: GraphStore, spaces: Spaces, held: Held, bindings: Bindings) -> Fetch:
    """Rows looked up in the database one name at a time (a refresh)."""

    def definitions(ns: str, name: str) -> list[Row]:
        space = spaces.get(ns)
        if space is None:
            return []
        return [
            decoded_row(row)
            for row in store.query(
                "SELECT n.kind, f.path, n.line, n.end_line, n.extra FROM names n "
                "JOIN files f ON f.id = n.file WHERE n.space = ? AND n.key = ? AND n.name = ?",
                (space, name_key(name), name),
            )
        ]

    return with_bindings(definitions, held, bindings)


def memory_fetch(store: GraphStore, held: Held, bindings: Bindings) -> Fetch:
    """Rows of every definition read at once, decoded when first asked (a cold build)."""
    table: dict[tuple[str, str], list[tuple[Any, ...]]] = {}
    for row in store.query(
        "SELECT COALESCE(s.ns, f2.path), n.name, n.kind, f.path, n.line, n.end_line, "
        "n.extra FROM names n JOIN files f ON f.id = n.file "
        "LEFT JOIN spaces s ON s.id = -n.space LEFT JOIN files f2 ON f2.id = n.space"
    ):
        table.setdefault((row[0], row[1]), []).append(row[2:])

    def definitions(ns: str, name: str) -> list[Row]:
        return [decoded_row(row) for row in table.get((ns, name), ())]

    return with_bindings(definitions, held, bindings)


def with_bindings(definitions: Fetch, held: Held, bindings: Bindings) -> Fetch:
    """The resolver's rows of ``(ns, name)``: the definitions, then the imports of the
    file ``ns`` is, then the typed names of the namespace's files."""

    def fetch(ns: str, name: str) -> list[Row]:
        rows = definitions(ns, name)
        own = held.get(ns)
        if own is not None:
            rows += bindings.imports(ns, name)
            if own[4] == ns:
                rows += bindings.typed(ns, name)
            return rows
        for path in bindings.members(held, ns):
            rows += bindings.typed(path, name)
        return rows

    return fetch
