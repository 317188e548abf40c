"""The code graph of a workspace, kept in step with its index (the ``code_intel`` service).

:meth:`CodeIntel.ready` brings it in step before every question: the files whose
sha256 the index holds differently are read again by the syntactic extractors, their
names written, their chains resolved into edges. A file whose interface (the names
other files see: :func:`.extract.interface`) changed, or that went away, has the files
that used it resolved again too. A cold build reads every file in forked workers.
Files a loaded SCIP index covers, while unchanged, keep its edges instead.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import TYPE_CHECKING, Any

import attrs

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
    from collections.abc import Callable, Sequence

    from cuedeck.hookspecs import GraphExtractor
    from cuedeck.workspace import Workspace
    from cuedeck_code.intel.facts import Facts
    from cuedeck_code.intel.resolve import Edge, Row

log = logging.getLogger("cuedeck")
#: Languages that are not code.
NOT_CODE = frozenset({"markdown", "text"})


@attrs.frozen
class SyncStats:
    """What one sync did."""

    files: int
    read: int
    resolved: int
    removed: int
    edges: int
    seconds: float


class CodeIntel:
    """The code graph of ``workspace``."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self.store = GraphStore(workspace.root)
        self._lock = threading.Lock()
        self._synced: tuple[int, int] | None = None
        self._files: dict[str, tuple[int, str, str, str, str]] | None = None
        self.last: SyncStats | None = None

    def extractors(self) -> dict[str, GraphExtractor]:
        """The registered syntactic extractors, by language (the last registered wins)."""
        from cuedeck.hookspecs import GraphExtractor
        from cuedeck.plugins.host import get_code_indexers

        found: dict[str, GraphExtractor] = {}
        for indexer in get_code_indexers(self.workspace.plugins).values():
            if isinstance(indexer, GraphExtractor) and indexer.label == "syntactic":
                for language in indexer.languages:
                    found[language] = indexer
        return found

    def run_scip(
        self, *, wait: bool = False, progress: Callable[[dict[str, Any]], None] | None = None
    ) -> dict[str, Any]:
        """Run the installed SCIP indexers (in the background unless ``wait``) and load
        what they write; the run's status (:mod:`.scip_run`)."""
        from cuedeck_code.intel.scip_run import start

        self.ready()
        return start(self.workspace, wait=wait, progress=progress)

    def ready(self) -> GraphStore:
        """The graph, in step with the index as it is now."""
        index = self.workspace.fresh_index()
        key = (id(index), index.generation)
        if self._synced == key and self.store.path.exists():
            return self.store
        with self._lock:
            if self._synced != key or not self.store.path.exists():
                self.sync()
                self._synced = key
        return self.store

    def sync(self, progress: Callable[[int, int], None] | None = None) -> SyncStats:
        """Bring the graph in step with the index (see the module docstring)."""
        started = time.perf_counter()
        index = self.workspace.fresh_index()
        extractors = self.extractors()
        pairs = index.keys()
        keys = {
            path: sha
            for path, sha in pairs
            if (language := index.language(path)) not in (None, *NOT_CODE)
            and language in extractors
        }
        languages = {path: index.language(path) or "" for path in keys}
        held = self._held()
        changed = sorted(p for p, sha in keys.items() if held.get(p, (0, ""))[1] != sha)
        removed = sorted(p for p in held if p not in keys)
        if not changed and not removed:
            return self._stats(len(keys), 0, 0, 0, 0, started)
        paths = frozenset(keys)
        facts = self._read(changed, languages, paths, extractors, progress)
        from cuedeck_code.intel.extract import interface

        faces = {path: interface(found) for path, found in facts.items() if found is not None}
        moved = [p for p in changed if p in held and held[p][2] != faces.get(p)] + removed
        words = self._changed_names(moved, facts, held) if moved else set()
        with self.store.transaction() as db:
            for path in removed:
                _drop_file(db, held[path][0])
            for path in changed:
                found = facts.get(path)
                if found is None:
                    if path in held:
                        _drop_file(db, held[path][0])
                    continue
                _write_file(db, path, keys[path], languages[path], found, faces[path])
        dependents = self._dependents(moved, held) - set(changed)
        dependents &= set(keys)
        dependents = {p for p in dependents if _mentions(self.workspace.root / p, words)}
        more = self._read(sorted(dependents), languages, paths, extractors, None)
        facts.update(more)
        edges = self._resolve(facts, languages, paths, cold=not held)
        self._files = None  # read again when next needed: ids and interfaces changed
        return self._stats(len(keys), len(changed), len(facts), len(removed), edges, started)

    def _held(self) -> dict[str, tuple[int, str, str, str, str]]:
        """The files the graph holds (:meth:`GraphStore.files`), kept between syncs that
        change nothing."""
        if self._files is None or not self.store.path.exists():
            self._files = self.store.files()
        return self._files

    def forget(self) -> None:
        """Read the files the graph holds again (another process may have written)."""
        self._files = None

    def _stats(
        self, files: int, read: int, resolved: int, removed: int, edges: int, started: float
    ) -> SyncStats:
        self.last = SyncStats(files, read, resolved, removed, edges, time.perf_counter() - started)
        return self.last

    def _read(
        self,
        paths: Sequence[str],
        languages: dict[str, str],
        every: frozenset[str],
        extractors: dict[str, GraphExtractor],
        progress: Callable[[int, int], None] | None,
    ) -> dict[str, Facts | None]:
        """The facts of ``paths``, read in forked workers when there are many."""
        if not paths:
            return {}
        from cuedeck.system.parallel import map_chunks

        root = self.workspace.root

        def job(chunk: Sequence[str], tick: Callable[[int], None]) -> list[tuple[str, Any]]:
            out = []
            for done, path in enumerate(chunk, start=1):
                extractor = extractors.get(languages.get(path, ""))
                found = None
                if extractor is not None:
                    try:
                        found = extractor.facts(path, (root / path).read_bytes(), every)
                    except (OSError, ValueError, RecursionError) as exc:
                        log.debug("code graph: %s not read: %s", path, exc)
                out.append((path, found))
                tick(done)
            return out

        size = sum(_size(root / p) for p in paths[:200]) * max(1, len(paths) // 200)
        found: dict[str, Facts | None] = {}
        for chunk in map_chunks(
            job, list(paths), message="Reading the code graph", progress=progress, size=size
        ):
            found.update(chunk)
        return found

    def _changed_names(
        self,
        moved: list[str],
        facts: dict[str, Facts | None],
        held: dict[str, tuple[int, str, str, str, str]],
    ) -> set[bytes] | None:
        """The short names ``moved`` files define or export differently now (None:
        anything, when a file went away or its namespace changed)."""
        words: set[bytes] = set()
        for path in moved:
            found = facts.get(path)
            if found is None or path not in held or found["ns"] != held[path][4]:
                return None
            before = {
                (name, kind, target_ns, target_name, extra)
                for name, kind, target_ns, target_name, extra in self.store.query(
                    "SELECT name, kind, target_ns, target_name, extra FROM names WHERE file = ? "
                    "AND kind != 'module'",
                    (held[path][0],),
                )
            }
            after = {(d[0], d[1], None, None, _packed_extra(d[4])) for d in found["defs"]}
            after |= {(b[1], "import", b[2], b[3], None) for b in found["binds"] if b[0] == ""}
            classes = {d[0] for d in found["defs"]}
            after |= {
                (f"{v[0]}.{v[1]}" if v[0] else v[1], "var", None, None,
                 f"{v[2]}:{pack_chain(v[3])}")
                for v in found["vars"]
                if v[2] in ("new", "alias", "annot", "returns") and (not v[0] or v[0] in classes)
            }  # fmt: skip
            for row in before ^ after:
                words.add(row[0].rpartition(".")[2].encode())
        return words

    def _dependents(
        self, moved: list[str], held: dict[str, tuple[int, str, str, str, str]]
    ) -> set[str]:
        """The files that use what ``moved`` files define or export."""
        if not moved:
            return set()
        ids = [held[p][0] for p in moved if p in held]
        namespaces = {held[p][4] for p in moved if p in held} | set(moved)
        found: set[str] = set()
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            found.update(
                p
                for (p,) in self.store.query(
                    "SELECT DISTINCT f.path FROM edges e JOIN names s ON s.id = e.src "
                    "JOIN files f ON f.id = s.file WHERE e.dst IN "
                    f"(SELECT id FROM names WHERE file IN ({marks}))",
                    chunk,
                )
            )
        spaces = sorted(namespaces)
        for start in range(0, len(spaces), 500):
            names = spaces[start : start + 500]
            marks = ",".join("?" * len(names))
            found.update(
                p
                for (p,) in self.store.query(
                    "SELECT DISTINCT f.path FROM names n JOIN files f ON f.id = n.file "
                    f"WHERE n.kind = 'import' AND n.target_ns IN ({marks})",
                    names,
                )
            )
            found.update(
                p
                for (p,) in self.store.query(
                    f"SELECT path FROM files WHERE ns IN ({marks}) AND ns != path", names
                )
            )
        return found

    def _resolve(
        self,
        facts: dict[str, Facts | None],
        languages: dict[str, str],
        paths: frozenset[str],
        *,
        cold: bool,
    ) -> int:
        """Resolve the chains of ``facts`` and write their edges; how many were written."""
        from cuedeck_code.intel.resolve import FileResolver, NameLookup

        fetch = self._memory_fetch() if cold else self._sql_fetch()
        names = NameLookup(fetch, paths)
        ids = _symbol_ids(self.store) if cold else _LazyIds(self.store)
        precise = {p for p, row in self._held().items() if row[3] == "scip"}
        rows: list[tuple[int, int, int, int]] = []
        resolved: list[int] = []
        for path, found in facts.items():
            if found is None or path in precise:
                continue
            file_ids = ids.get(path)
            if file_ids is None:
                continue
            resolved.append(file_ids[""])
            edges = FileResolver(path, languages.get(path, ""), found, names).edges()
            rows.extend(_edge_rows(edges, ids))
        with self.store.transaction() as db:
            files = [(path,) for path in facts if path not in precise]
            db.executemany(
                "DELETE FROM edges WHERE source = 0 AND src IN "
                "(SELECT n.id FROM names n JOIN files f ON f.id = n.file WHERE f.path = ?)",
                files,
            )
            db.executemany("INSERT OR IGNORE INTO edges VALUES (?, ?, ?, ?, 0)", rows)
        return len(rows)

    def _sql_fetch(self) -> Callable[[str, str], list[Row]]:
        store = self.store
        spaces = _Spaces(store)

        def fetch(ns: str, name: str) -> list[Row]:
            space = spaces.get(ns)
            if space is None:
                return []
            return [
                _row(row)
                for row in store.query(
                    "SELECT n.kind, f.path, n.line, n.end_line, n.target_ns, n.target_name, "
                    "n.extra FROM names n JOIN files f ON f.id = n.file "
                    "WHERE n.space = ? AND n.key = ? AND n.name = ?",
                    (space, name_key(name), name),
                )
            ]

        return fetch

    def _memory_fetch(self) -> Callable[[str, str], list[Row]]:
        table: dict[tuple[str, str], list[Row]] = {}
        for row in self.store.query(
            "SELECT COALESCE(s.ns, f2.path), n.name, n.kind, f.path, n.line, n.end_line, "
            "n.target_ns, n.target_name, n.extra FROM names n JOIN files f ON f.id = n.file "
            "LEFT JOIN spaces s ON s.id = -n.space LEFT JOIN files f2 ON f2.id = n.space"
        ):
            table.setdefault((row[0], row[1]), []).append(_row(row[2:]))

        def fetch(ns: str, name: str) -> list[Row]:
            return table.get((ns, name), [])

        return fetch


class _Spaces:
    """Namespace -> its ``space`` number (see :mod:`.store`), read when first asked."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store
        self.known: dict[str, int | None] = {}

    def get(self, ns: str) -> int | None:
        if ns not in self.known:
            found = self.store.query("SELECT id FROM files WHERE path = ?", (ns,))
            if found:
                self.known[ns] = found[0][0]
            else:
                shared = self.store.query("SELECT id FROM spaces WHERE ns = ?", (ns,))
                self.known[ns] = -shared[0][0] if shared else None
        return self.known[ns]


def _row(row: Any) -> Row:
    """A names row with its extra decoded (chains unpacked)."""
    kind, path, line, end_line, target_ns, target_name, extra = row
    data: dict[str, Any] = {}
    if extra:
        if kind == "var":
            how, _, chain = extra.partition(":")
            data = {"how": how, "chain": unpack_chain(chain)}
        else:
            data = json.loads(extra)
            if "bases" in data:
                data["bases"] = [unpack_chain(b) for b in data["bases"]]
            if "returns" in data:
                data["returns"] = unpack_chain(data["returns"])
    return (kind, path, line, end_line, target_ns, target_name, data)


def _space(db: Any, ns: str, path: str, file_id: int) -> int:
    """The ``space`` of namespace ``ns`` for a file (its own id when it is its namespace)."""
    if ns == path:
        return file_id
    found = db.execute("SELECT id FROM spaces WHERE ns = ?", (ns,)).fetchone()
    if found is None:
        return -int(db.execute("INSERT INTO spaces (ns) VALUES (?)", (ns,)).lastrowid)
    return -int(found[0])


def _packed_extra(extra: dict[str, Any]) -> str | None:
    if not extra:
        return None
    packed = dict(extra)
    if "bases" in packed:
        packed["bases"] = [pack_chain(b) for b in packed["bases"]]
    if "returns" in packed:
        packed["returns"] = pack_chain(packed["returns"])
    return json.dumps(packed, separators=(",", ":"))


def _mentions(path: Any, words: set[bytes] | None) -> bool:
    """Whether the file at ``path`` may use one of ``words`` (None: anything)."""
    if words is None:
        return True
    try:
        data = path.read_bytes()
    except OSError:
        return False
    return any(word in data for word in words if word)


def _size(path: Any) -> int:
    try:
        return int(path.stat().st_size)
    except OSError:
        return 0


def _drop_file(db: Any, file_id: int) -> None:
    db.execute(
        "DELETE FROM edges WHERE src IN (SELECT id FROM names WHERE file = ?) "
        "OR dst IN (SELECT id FROM names WHERE file = ?)",
        (file_id, file_id),
    )
    db.execute("DELETE FROM names WHERE file = ?", (file_id,))
    db.execute("DELETE FROM files WHERE id = ?", (file_id,))


def _write_file(db: Any, path: str, sha: str, language: str, facts: Facts, face: str) -> None:
    """Write a file's names, keeping the ids of the definitions it still has."""
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
    kept = {
        (name, kind): number
        for number, name, kind in db.execute(
            "SELECT id, name, kind FROM names WHERE file = ? AND target_ns IS NULL "
            "AND kind != 'var'",
            (file_id,),
        )
    }
    ns = _space(db, facts["ns"], path, file_id)
    own = file_id  # imports belong to the file, whatever its namespace
    wanted: list[tuple[Any, ...]] = [(None, own, "", "module", 1, 1, None, None, None)]
    for name, kind, line, end_line, extra in facts["defs"]:
        wanted.append((None, ns, name, kind, line, end_line, None, None, _packed_extra(extra)))
    for scope, local, target_ns, target_name, line, _column in facts["binds"]:
        if scope == "":
            wanted.append((None, own, local, "import", line, line, target_ns, target_name, None))
    classes = {d[0] for d in facts["defs"]}
    for scope, name, how, chain in facts["vars"]:
        if how in ("new", "alias", "annot", "returns") and (scope == "" or scope in classes):
            qualified = f"{scope}.{name}" if scope else name
            value = f"{how}:{pack_chain(chain)}"
            wanted.append((None, ns, qualified, "var", 0, 0, None, None, value))
    reused: set[int] = set()
    rows = []
    for entry in wanted:
        key = (entry[2], entry[3])
        number = kept.get(key)
        if number is not None and number not in reused and entry[3] not in ("import", "var"):
            reused.add(number)
        else:
            number = None
        name = entry[2]
        rows.append(
            (number, entry[1], name_key(name), name, name.rpartition(".")[2], entry[3], file_id,
             *entry[4:])
        )  # fmt: skip
    gone = [number for number in kept.values() if number not in reused]
    if gone:
        marks = ",".join("?" * len(gone))
        db.execute(f"DELETE FROM edges WHERE dst IN ({marks})", gone)
        db.execute(f"DELETE FROM names WHERE id IN ({marks})", gone)
    db.execute("DELETE FROM names WHERE file = ? AND (kind IN ('import', 'var'))", (file_id,))
    update = [r for r in rows if r[0] is not None]
    insert = [r[1:] for r in rows if r[0] is None]
    db.executemany(
        "UPDATE names SET space = ?, key = ?, name = ?, short = ?, kind = ?, file = ?, line = ?, "
        "end_line = ?, target_ns = ?, target_name = ?, extra = ? WHERE id = ?",
        [(*r[1:], r[0]) for r in update],
    )
    db.executemany(
        "INSERT INTO names (space, key, name, short, kind, file, line, end_line, target_ns, "
        "target_name, extra) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        insert,
    )


def _symbol_ids(store: GraphStore) -> dict[str, dict[str, int]]:
    """Path -> qualified name -> id of every definition (``""``: the module row)."""
    found: dict[str, dict[str, int]] = {}
    for path, name, number, kind in store.query(
        "SELECT f.path, n.name, n.id, n.kind FROM names n JOIN files f ON f.id = n.file "
        "WHERE n.target_ns IS NULL AND n.kind NOT IN ('import', 'var')"
    ):
        by_name = found.setdefault(path, {})
        if name not in by_name or kind in LINKED:
            by_name[name] = number
    return found


class _LazyIds(dict):  # type: ignore[type-arg]
    """:func:`_symbol_ids` of the files asked for only (a refresh of a few files)."""

    def __init__(self, store: GraphStore) -> None:
        super().__init__()
        self.store = store

    def get(self, path: str, default: Any = None) -> Any:
        if path not in self:
            found: dict[str, int] = {}
            for name, number, kind in self.store.query(
                "SELECT n.name, n.id, n.kind FROM names n JOIN files f ON f.id = n.file "
                "WHERE f.path = ? AND n.target_ns IS NULL AND n.kind NOT IN ('import', 'var')",
                (path,),
            ):
                if name not in found or kind in LINKED:
                    found[name] = number
            self[path] = found
        return dict.get(self, path, default)


def _edge_rows(
    edges: list[Edge], ids: dict[str, dict[str, int]]
) -> list[tuple[int, int, int, int]]:
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
