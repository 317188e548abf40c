"""The graph's names as resolution reads them: :class:`NameLookup`, memoised, over a
fetch of a namespace's definitions from the names table, then the imports of the file
it is, then the typed names of its files (:class:`.rows.Bindings`)."""

from __future__ import annotations

import functools
import posixpath
from typing import TYPE_CHECKING, Any

from cuedeck_code.intel.rows import decoded_row
from cuedeck_code.intel.store import name_key

if TYPE_CHECKING:
    from collections.abc import Callable

    from cuedeck_code.intel.facts import Row
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


class NameLookup:
    """The names table as the resolver reads it: ``rows(ns, name)``, memoised."""

    def __init__(self, fetch: Callable[[str, str], list[Row]], paths: frozenset[str]) -> None:
        self.fetch = fetch
        self.paths = paths
        self._memo: dict[tuple[str, str], list[Row]] = {}
        #: What a member or bases lookup gave and how many steps it took, shared by
        #: every file (see :meth:`.resolve.FileResolver.shared`); forgotten whenever any name is.
        self.members: dict[tuple[Any, ...], tuple[Any, int]] = {}

    @property
    def folders(self) -> frozenset[str]:
        """Every folder holding a file (made when first needed)."""
        return _folders(self.paths)

    def rows(self, ns: str, name: str) -> list[Row]:
        key = (ns, name)
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = self.fetch(ns, name)
        return found

    def submodule(self, ns: str, name: str) -> tuple[str, str] | None:
        """``("mod", namespace)`` of the submodule ``name`` of a Python package's
        ``__init__`` or of a folder (``dir:...``), if there is one."""
        if ns.startswith("dir:"):
            folder = ns[4:]
        elif ns.endswith("/__init__.py") or ns == "__init__.py":
            folder = posixpath.dirname(ns)
        else:
            return None
        stem = f"{folder}/{name}" if folder else name
        for candidate in (f"{stem}.py", f"{stem}/__init__.py", f"{stem}.pyi"):
            if candidate in self.paths:
                return ("mod", candidate)
        if stem in self.folders:
            return ("mod", f"dir:{stem}")
        return None

    def star_exports(self, ns: str) -> list[str]:
        """The namespaces ``ns`` re-exports whole (``export * from``, ``from x import *``)."""
        return [r[4] for r in self.rows(ns, "*") if r[4]]

    def forget(self, namespaces: set[str] | None = None) -> None:
        """Look the names of ``namespaces`` (None: all) up again."""
        self.members.clear()
        if namespaces is None:
            self._memo.clear()
            return
        for key in [key for key in self._memo if key[0] in namespaces]:
            del self._memo[key]


@functools.lru_cache(maxsize=4)
def _folders(paths: frozenset[str]) -> frozenset[str]:
    return frozenset(posixpath.dirname(p) for p in paths)
