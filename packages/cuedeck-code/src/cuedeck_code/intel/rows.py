"""How the code graph's rows are written and read back (:mod:`.store` has the schema):
a file's names and edges, namespaces as ``space`` numbers, chains packed as dotted
names; :class:`.service.CodeIntel` drives them."""

from __future__ import annotations

import json
import zlib
from typing import TYPE_CHECKING, Any

from cuedeck_code.intel.facts import LINKED
from cuedeck_code.intel.store import (
    COLUMN,
    RELATIONS,
    GraphStore,
    name_key,
    pack_chain,
    unpack_chain,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from cuedeck_code.intel.facts import Edge, Facts, Row


class Spaces:
    """Namespace -> its ``space`` number (see :mod:`.store`), read when first asked."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store
        self.known: dict[str, int | None] = {}

    def forget(self, namespaces: set[str]) -> None:
        """Look ``namespaces`` up again (their files were just written)."""
        for ns in namespaces:
            self.known.pop(ns, None)

    def get(self, ns: str) -> int | None:
        if ns not in self.known:
            found = self.store.query("SELECT id FROM files WHERE path = ?", (ns,))
            if found:
                self.known[ns] = found[0][0]
            else:
                shared = self.store.query("SELECT id FROM spaces WHERE ns = ?", (ns,))
                self.known[ns] = -shared[0][0] if shared else None
        return self.known[ns]


class Importers:
    """The files that import each namespace (their module-level imports), kept in
    memory between refreshes: read from every file's bindings once, then followed."""

    def __init__(self, bindings: Bindings) -> None:
        self.bindings = bindings
        self.by_target: dict[str, set[str]] | None = None
        self.of: dict[str, set[str]] = {}

    def users(self, namespaces: set[str]) -> set[str]:
        if self.by_target is None:
            self.by_target, self.of = {}, {}
            for path, (imports, _typed) in self.bindings.every():
                targets = {entry[2] for entry in imports if entry[2] is not None}
                self.of[path] = targets
                for target in targets:
                    self.by_target.setdefault(target, set()).add(path)
        return {path for ns in namespaces for path in self.by_target.get(ns, ())}

    def wrote(self, path: str, facts: Facts | None) -> None:
        """``path``'s bindings were written as :func:`write_file` does (None: dropped)."""
        if self.by_target is None:
            return
        for target in self.of.pop(path, ()):
            self.by_target[target].discard(path)
        if facts is not None:
            targets = {b[2] for b in facts["binds"] if b[0] == "" and b[2] is not None}
            self.of[path] = targets
            for target in targets:
                self.by_target.setdefault(target, set()).add(path)

    def forget(self) -> None:
        self.by_target = None


#: A file's bindings unpacked: its imports ``[local, line, target_ns, target_name]`` and
#: its typed names ``[qualified name, "how:chain"]``.
Unpacked = tuple[list[list[Any]], list[list[Any]]]


def bindings_of(facts: Facts) -> Unpacked:
    """A file's module-level imports and the typed names of its module and classes (the
    ``new``, ``alias``, ``annot`` and ``returns`` ones), as the bindings table keeps them."""
    imports = [[b[1], b[4], b[2], b[3]] for b in facts["binds"] if b[0] == ""]
    classes = {d[0] for d in facts["defs"]}
    typed = [
        [f"{scope}.{name}" if scope else name, f"{how}:{pack_chain(chain)}"]
        for scope, name, how, chain in facts["vars"]
        if how in ("new", "alias", "annot", "returns") and (scope == "" or scope in classes)
    ]
    return imports, typed


def pack_bindings(facts: Facts) -> bytes:
    """:func:`bindings_of` ``facts``, compressed for the bindings table."""
    return zlib.compress(json.dumps(bindings_of(facts), separators=(",", ":")).encode(), 9)


def unpack_bindings(data: bytes | None) -> Unpacked:
    if not data:
        return [], []
    imports, typed = json.loads(zlib.decompress(data))
    return imports, typed


class Bindings:
    """Each file's bindings (:func:`bindings_of`), unpacked when first asked and kept
    until the file is written again; as the resolver's rows by name."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store
        self.unpacked: dict[str, Unpacked] = {}
        self.rows: dict[str, tuple[dict[str, list[Row]], dict[str, list[Row]]]] = {}
        self.complete = False  # every file's unpacked
        self.shared: dict[str, list[str]] | None = None  # a shared namespace's files

    def forget(self, paths: Iterable[str] | None = None) -> None:
        """Read the bindings of ``paths`` (None: all) again when next asked."""
        self.shared = None
        if paths is None:
            self.unpacked.clear()
            self.rows.clear()
        else:
            for path in paths:
                self.unpacked.pop(path, None)
                self.rows.pop(path, None)
        self.complete = False

    def members(self, held: dict[str, tuple[int, str, str, str, str]], ns: str) -> list[str]:
        """The files of the shared namespace ``ns`` (``held``: the graph's files)."""
        if self.shared is None:
            self.shared = {}
            for path, row in sorted(held.items()):
                if row[4] != path:
                    self.shared.setdefault(row[4], []).append(path)
        return self.shared.get(ns, [])

    def every(self) -> Iterator[tuple[str, Unpacked]]:
        """Every file's bindings (read in one pass when some are not held)."""
        if not self.complete:
            for path, data in self.store.query(
                "SELECT f.path, b.data FROM bindings b JOIN files f ON f.id = b.file"
            ):
                if path not in self.unpacked:
                    self.unpacked[path] = unpack_bindings(data)
            self.complete = True
        yield from self.unpacked.items()

    def of(self, path: str) -> Unpacked:
        found = self.unpacked.get(path)
        if found is None:
            data = self.store.query(
                "SELECT b.data FROM bindings b JOIN files f ON f.id = b.file WHERE f.path = ?",
                (path,),
            )
            found = self.unpacked[path] = unpack_bindings(data[0][0] if data else None)
        return found

    def imports(self, path: str, name: str) -> list[Row]:
        """The resolver's rows of the import ``name`` at the top of the file ``path``."""
        return self._by_name(path)[0].get(name, [])

    def typed(self, path: str, name: str) -> list[Row]:
        """The resolver's rows of the typed name ``name`` of the file ``path``."""
        return self._by_name(path)[1].get(name, [])

    def _by_name(self, path: str) -> tuple[dict[str, list[Row]], dict[str, list[Row]]]:
        found = self.rows.get(path)
        if found is None:
            imports, typed = self.of(path)
            by_import: dict[str, list[Row]] = {}
            for local, line, target_ns, target_name in imports:
                row: Row = ("import", path, line, line, target_ns, target_name, {})
                by_import.setdefault(local, []).append(row)
            by_typed: dict[str, list[Row]] = {}
            for name, value in typed:
                how, _, chain = value.partition(":")
                row = ("var", path, 0, 0, None, None, {"how": how, "chain": unpack_chain(chain)})
                by_typed.setdefault(name, []).append(row)
            found = self.rows[path] = (by_import, by_typed)
        return found


def decoded_row(row: Any) -> Row:
    """A definition's row of the names table, its extra decoded (chains unpacked)."""
    kind, path, line, end_line, extra = row
    data: dict[str, Any] = {}
    if extra:
        data = json.loads(extra)
        if "bases" in data:
            data["bases"] = [unpack_chain(b) for b in data["bases"]]
        for key in ("returns", "gives"):
            if key in data:
                data[key] = unpack_chain(data[key])
    return (kind, path, line, end_line, None, None, data)


def space_of(db: Any, ns: str, path: str, file_id: int) -> int:
    """The ``space`` of namespace ``ns`` for a file (its own id when it is its namespace)."""
    if ns == path:
        return file_id
    found = db.execute("SELECT id FROM spaces WHERE ns = ?", (ns,)).fetchone()
    if found is None:
        return -int(db.execute("INSERT INTO spaces (ns) VALUES (?)", (ns,)).lastrowid)
    return -int(found[0])


def packed_extra(extra: dict[str, Any]) -> str | None:
    if not extra:
        return None
    packed = dict(extra)
    if "bases" in packed:
        packed["bases"] = [pack_chain(b) for b in packed["bases"]]
    for key in ("returns", "gives"):
        if key in packed:
            packed[key] = pack_chain(packed[key])
    return json.dumps(packed, separators=(",", ":"))


#: Names of the file that stands for its folder's package or module.
PACKAGE_ENTRIES = frozenset({"__init__", "index", "mod", "lib"})


def module_words(path: str, held: dict[str, Any]) -> set[bytes]:
    """The words an import of the new module at ``path`` is written with: its name, and
    its folder's when it stands for the folder (``__init__.py``, ``index.js``,
    ``mod.rs``) or the folder is new (a Go package)."""
    folder, _, name = path.rpartition("/")
    stem = name.partition(".")[0]
    words = {stem.encode()}
    if folder and (stem in PACKAGE_ENTRIES or not any(
        p.startswith(folder + "/") and "/" not in p[len(folder) + 1 :] for p in held
    )):  # fmt: skip
        words.add(folder.rpartition("/")[2].encode())
    return words


def mentions(path: Any, words: set[bytes] | None) -> bool:
    """Whether the file at ``path`` may use one of ``words`` (None: anything)."""
    if words is None:
        return True
    try:
        data = path.read_bytes()
    except OSError:
        return False
    return any(word in data for word in words if word)


def file_size(path: Any) -> int:
    try:
        return int(path.stat().st_size)
    except OSError:
        return 0


def drop_file(db: Any, file_id: int) -> None:
    db.execute(
        "DELETE FROM edges WHERE src IN (SELECT id FROM names WHERE file = ?) "
        "OR dst IN (SELECT id FROM names WHERE file = ?)",
        (file_id, file_id),
    )
    db.execute("DELETE FROM names WHERE file = ?", (file_id,))
    db.execute("DELETE FROM bindings WHERE file = ?", (file_id,))
    db.execute("DELETE FROM files WHERE id = ?", (file_id,))


def write_file(
    db: Any, path: str, sha: str, language: str, facts: Facts, face: str, digests: dict[str, int]
) -> int:
    """Write a file's names (``digests``: :func:`.owners.owner_digests`), keeping the ids
    of the definitions it still has; its id."""
    row = db.execute("SELECT id FROM files WHERE path = ?", (path,)).fetchone()
    if row is None:
        file_id = db.execute(
            "INSERT INTO files (path, sha256, language, ns, interface) VALUES (?, ?, ?, ?, ?)",
            (path, sha, language, facts["ns"], face),
        ).lastrowid
    else:
        file_id = row[0]
        db.execute(
            "UPDATE files SET sha256 = ?, language = ?, ns = ?, interface = ?, "
            "source = 'syntactic' WHERE id = ?",
            (sha, language, facts["ns"], face, file_id),
        )
        db.execute(
            "DELETE FROM edges WHERE source = 1 AND src IN (SELECT id FROM names WHERE file = ?)",
            (file_id,),
        )
    kept: dict[tuple[str, str], int] = {}
    held: dict[int, tuple[Any, ...]] = {}  # what a kept row holds that may change
    for number, name, kind, *rest in db.execute(
        "SELECT id, name, kind, space, line, end_line, extra, digest FROM names WHERE file = ?",
        (file_id,),
    ):
        kept[(name, kind)] = number
        held[number] = tuple(rest)
    ns = space_of(db, facts["ns"], path, file_id)
    # The module row is in the file's own space, whatever its namespace.
    wanted: list[tuple[Any, ...]] = [(file_id, "", "module", 1, 1, None, digests.get(""))]
    for name, kind, line, end_line, extra in facts["defs"]:
        wanted.append((ns, name, kind, line, end_line, packed_extra(extra), digests.get(name)))
    reused: set[int] = set()
    rows = []
    for space, name, kind, *rest in wanted:
        number = kept.get((name, kind))
        if number is not None and number not in reused:
            reused.add(number)
        else:
            number = None
        short = name_key(name.rpartition(".")[2]) if kind != "module" else None
        rows.append((number, space, name_key(name), name, short, kind, file_id, *rest))
    gone = [number for number in kept.values() if number not in reused]
    if gone:
        marks = ",".join("?" * len(gone))
        db.execute(f"DELETE FROM edges WHERE dst IN ({marks}) OR src IN ({marks})", gone * 2)
        db.execute(f"DELETE FROM names WHERE id IN ({marks})", gone)
    changed = [  # a kept row has the same name, kind and file: the rest may differ
        (r[1], *r[7:], r[0]) for r in rows if r[0] is not None and held[r[0]] != (r[1], *r[7:])
    ]
    db.executemany(
        "UPDATE names SET space = ?, line = ?, end_line = ?, extra = ?, digest = ? WHERE id = ?",
        changed,
    )
    db.executemany(
        "INSERT INTO names (space, key, name, short_key, kind, file, line, end_line, extra, "
        "digest) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [r[1:] for r in rows if r[0] is None],
    )
    db.execute("INSERT OR REPLACE INTO bindings VALUES (?, ?)", (file_id, pack_bindings(facts)))
    return int(file_id)


def symbol_ids(store: GraphStore) -> dict[str, dict[str, int]]:
    """Path -> qualified name -> id of every definition (``""``: the module row)."""
    found: dict[str, dict[str, int]] = {}
    for path, name, number, kind in store.query(
        "SELECT f.path, n.name, n.id, n.kind FROM names n JOIN files f ON f.id = n.file"
    ):
        by_name = found.setdefault(path, {})
        if name not in by_name or kind in LINKED:
            by_name[name] = number
    return found


class LazyIds(dict):  # type: ignore[type-arg]
    """:func:`symbol_ids` of the files asked for only (a refresh of a few files)."""

    def __init__(self, store: GraphStore) -> None:
        super().__init__()
        self.store = store

    def get(self, path: str, default: Any = None) -> Any:
        if path not in self:
            found: dict[str, int] = {}
            for name, number, kind in self.store.query(
                "SELECT n.name, n.id, n.kind FROM names n JOIN files f ON f.id = n.file "
                "WHERE f.path = ?",
                (path,),
            ):
                if name not in found or kind in LINKED:
                    found[name] = number
            self[path] = found
        return dict.get(self, path, default)


def edge_rows(edges: list[Edge], ids: dict[str, dict[str, int]]) -> list[tuple[int, int, int, int]]:
    rows = []
    relation = {name: number for number, name in enumerate(RELATIONS)}
    for src_path, src_name, dst_path, dst_name, line, column, kind in edges:
        source = ids.get(src_path, {})
        src = source.get(src_name) or source.get("")
        dst = ids.get(dst_path, {}).get(dst_name)
        if src is None or dst is None:
            continue
        rows.append((dst, src, line * COLUMN + min(column, COLUMN - 1), relation.get(kind, 0)))
    return rows
