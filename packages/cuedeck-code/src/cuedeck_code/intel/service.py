"""The code graph of a workspace, kept in step with its index (the ``code_intel`` service).

:meth:`CodeIntel.ready` brings it in step before every question: the files whose
sha256 the index holds differently are read again by the syntactic extractors, their
names written, their chains resolved into edges. A file whose interface (the names
other files see: :func:`.extract.interface`) changed, or that went away, has the files
that used it resolved again too. A cold build reads every file in forked workers.
Files a loaded SCIP index covers, while unchanged, keep its edges instead.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING, Any

import attrs

from cuedeck_code.intel.rows import (
    LazyIds,
    Spaces,
    decoded_row,
    drop_file,
    edge_rows,
    file_size,
    mentions,
    packed_extra,
    symbol_ids,
    write_file,
)
from cuedeck_code.intel.store import (
    GraphStore,
    name_key,
    pack_chain,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from cuedeck.hookspecs import GraphExtractor
    from cuedeck.workspace import Workspace
    from cuedeck_code.intel.facts import Facts
    from cuedeck_code.intel.resolve import Row

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
                drop_file(db, held[path][0])
            for path in changed:
                found = facts.get(path)
                if found is None:
                    if path in held:
                        drop_file(db, held[path][0])
                    continue
                write_file(db, path, keys[path], languages[path], found, faces[path])
        dependents = self._dependents(moved, held) - set(changed)
        dependents &= set(keys)
        dependents = {p for p in dependents if mentions(self.workspace.root / p, words)}
        more = self._read(sorted(dependents), languages, paths, extractors, None)
        facts.update(more)
        # Files a SCIP index answers keep its edges; one just read again no longer does.
        precise = {p for p, row in held.items() if row[3] == "scip"} - set(changed)
        edges = self._resolve(facts, languages, paths, precise, cold=not held)
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

        size = sum(file_size(root / p) for p in paths[:200]) * max(1, len(paths) // 200)
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
            after = {(d[0], d[1], None, None, packed_extra(d[4])) for d in found["defs"]}
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
        precise: set[str],
        *,
        cold: bool,
    ) -> int:
        """Resolve the chains of ``facts`` and write their edges; how many were written."""
        from cuedeck_code.intel.resolve import FileResolver, NameLookup

        fetch = self._memory_fetch() if cold else self._sql_fetch()
        names = NameLookup(fetch, paths)
        ids = symbol_ids(self.store) if cold else LazyIds(self.store)
        rows: list[tuple[int, int, int, int]] = []
        for path, found in facts.items():
            if found is None or path in precise or ids.get(path) is None:
                continue
            edges = FileResolver(path, languages.get(path, ""), found, names).edges()
            rows.extend(edge_rows(edges, ids))
        if cold:
            rows.sort()  # in the table's order: appended, not scattered, pages full
        with self.store.transaction() as db:
            if not cold:
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
        spaces = Spaces(store)

        def fetch(ns: str, name: str) -> list[Row]:
            space = spaces.get(ns)
            if space is None:
                return []
            return [
                decoded_row(row)
                for row in store.query(
                    "SELECT n.kind, f.path, n.line, n.end_line, n.target_ns, n.target_name, "
                    "n.extra FROM names n JOIN files f ON f.id = n.file "
                    "WHERE n.space = ? AND n.key = ? AND n.name = ?",
                    (space, name_key(name), name),
                )
            ]

        return fetch

    def _memory_fetch(self) -> Callable[[str, str], list[Row]]:
        table: dict[tuple[str, str], list[tuple[Any, ...]]] = {}
        for row in self.store.query(
            "SELECT COALESCE(s.ns, f2.path), n.name, n.kind, f.path, n.line, n.end_line, "
            "n.target_ns, n.target_name, n.extra FROM names n JOIN files f ON f.id = n.file "
            "LEFT JOIN spaces s ON s.id = -n.space LEFT JOIN files f2 ON f2.id = n.space"
        ):
            table.setdefault((row[0], row[1]), []).append(row[2:])

        def fetch(ns: str, name: str) -> list[Row]:  # decoded when first asked (memoised)
            return [decoded_row(row) for row in table.get((ns, name), ())]

        return fetch
