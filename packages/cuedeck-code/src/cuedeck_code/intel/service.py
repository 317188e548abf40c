"""The code graph of a workspace, kept in step with its index (the ``code_intel`` service).

:meth:`CodeIntel.ready` brings it in step before every question: the files whose
sha256 the index holds differently are read again by the syntactic extractors, their
names written, their chains resolved into edges. A file whose interface (the names
other files see: :func:`.extract.interface`) changed, or that went away, has the files
that used it resolved again too. A cold build reads every file in forked workers, and
resolves them in forked workers too (as does any sync of many files); the parent writes.
Files a loaded SCIP index covers, while unchanged, keep its edges instead.
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import TYPE_CHECKING, Any

import attrs

from cuedeck_code.intel.owners import PLAIN, file_rows, reusable
from cuedeck_code.intel.reading import read_facts
from cuedeck_code.intel.rows import (
    Bindings,
    Importers,
    LazyIds,
    Spaces,
    bindings_of,
    drop_file,
    mentions,
    module_words,
    packed_extra,
    symbol_ids,
    write_file,
)
from cuedeck_code.intel.store import GraphStore
from cuedeck_code.intel.walk_base import collector_paused

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from cuedeck.hookspecs import GraphExtractor
    from cuedeck.index.parsed import Index
    from cuedeck.workspace import Workspace
    from cuedeck_code.intel.facts import Facts
    from cuedeck_code.intel.lookup import NameLookup

#: Languages that are not code.
NOT_CODE = frozenset({"markdown", "text"})
#: From this many files, their chains are resolved in forked workers: a file takes a
#: millisecond or two, forking two workers a few hundredths.
FORKED = 200
#: What resolving a share of the files gives: edge rows, and by path the definitions
#: whose edges stay as they are.
Resolved = tuple[list[tuple[int, int, int, int]], dict[str, list[int]]]


@attrs.frozen
class SyncStats:
    """What one sync did."""

    files: int
    read: int
    resolved: int
    removed: int
    edges: int
    seconds: float
    #: Definitions of a file read again that kept their edges (:mod:`.owners`).
    kept: int = 0


class CodeIntel:
    """The code graph of ``workspace``."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self.store = GraphStore(workspace.root)
        self._lock = threading.Lock()
        self._synced: tuple[int, int] | None = None
        self._files: dict[str, tuple[int, str, str, str, str]] | None = None
        self._version = (-1, -1)  # the store's data_version when _files was read
        # The index's code files as the last sync saw them: (index, generation, sha256 by
        # path, language by path, the paths), brought up to date by what changed since.
        self._code: tuple[Index, int, dict[str, str], dict[str, str], frozenset[str]] | None = None
        self._extractors: dict[str, GraphExtractor] | None = None
        self._names: NameLookup | None = None  # kept between refreshes (see _resolve)
        self._spaces = Spaces(self.store)
        self._bindings = Bindings(self.store)
        self._steady: object = None  # the held files the last complete sync left in step
        self._importers = Importers(self._bindings)
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

    def sync(
        self, progress: Callable[[int, int], None] | None = None, *, locked: bool = False
    ) -> SyncStats:
        """Bring the graph in step with the index (see the module docstring), holding the
        build lock (:func:`.detached.build_lock`: after another process's build, when one
        runs) unless the caller holds it (``locked``: the detached builder)."""
        from cuedeck_code.intel.detached import build_lock

        # The collector paused throughout (and so in the workers forked meanwhile): a
        # cold build holds millions of lists (the facts, read in workers and unpickled
        # here), none in a cycle, and each collection of the oldest objects walked them
        # all (~0.6 s of Django's build).
        with (
            contextlib.nullcontext() if locked else build_lock(self.workspace.root),
            collector_paused(),
        ):
            return self._sync(progress)

    def detach(self) -> dict[str, int] | None:
        """Leave a big build to the detached builder (:func:`.detached.detach`)."""
        from cuedeck_code.intel.detached import detach

        return detach(self)

    def pending(self) -> int:
        """How many code files a sync would read or drop now (the comparison it makes),
        without reading them: what ``cue index`` weighs (:func:`.detached.detach`)."""
        with self._lock:
            index = self.workspace.fresh_index()
            if self._extractors is None:
                self._extractors = self.extractors()
            keys = self._code_files(index, self._extractors)[0]
            held = self._held()
            self._steady = None  # the files' changes are taken: the next sync compares all
            if self.store.unfinished():
                return len(keys)
            changed = sum(1 for p, sha in keys.items() if held.get(p, (0, ""))[1] != sha)
            return changed + sum(1 for p in held if p not in keys)

    def code_files(self) -> int:
        """How many code files the index held at the last sync or :meth:`pending`."""
        return len(self._code[2]) if self._code is not None else 0

    def _sync(self, progress: Callable[[int, int], None] | None) -> SyncStats:
        started = time.perf_counter()
        index = self.workspace.fresh_index()
        if self._extractors is None:
            self._extractors = self.extractors()
        extractors = self._extractors
        keys, languages, paths, candidates = self._code_files(index, extractors)
        held = self._held()
        steady, self._steady = self._steady is held, None  # set again once in step
        # A sync stopped between writing names and edges (killed): its files are read
        # again, as their edges may be missing.
        unfinished = self.store.unfinished()
        if candidates is None or not steady or unfinished:  # every file compared
            candidates = {*keys, *held}

        def stale(path: str) -> bool:
            row = held.get(path)
            return row is None or row[1] != keys[path] or (unfinished and row[3] == "syntactic")

        changed = sorted(p for p in candidates if p in keys and stale(p))
        removed = sorted(p for p in candidates if p in held and p not in keys)
        if not changed and not removed:
            self._steady = held
            return self._stats(len(keys), 0, 0, 0, 0, started)
        digests: dict[str, dict[str, int]] = {}
        faces: dict[str, str] = {}
        facts = read_facts(
            self.workspace.root, changed, languages, paths, extractors, progress, digests, faces
        )
        moved = [p for p in changed if p in held and held[p][2] != faces.get(p)] + removed
        words, plain = self._changed_names(moved, facts, held) if moved else (set(), True)
        reuse = {}  # one file read again alone: its unchanged definitions keep their edges
        if len(changed) == 1 and not removed and (plain or not moved):
            reuse = reusable(self.store, changed[0], facts, digests, held, words)
        # What other files see of these namespaces may change: looked up again.
        touched = {*changed, *removed} | {held[p][4] for p in (*changed, *removed) if p in held}
        touched |= {found["ns"] for found in facts.values() if found is not None}
        written: dict[str, tuple[int, str, str, str, str] | None] = {}

        def write(db: Any, path: str, found: Facts, face: str, digest: dict[str, int]) -> None:
            number = write_file(db, path, keys[path], languages[path], found, face, digest)
            written[path] = (number, keys[path], face, "syntactic", found["ns"])

        with self.store.transaction() as db:
            db.execute("INSERT OR REPLACE INTO meta VALUES ('unfinished', '1')")
            for path in removed:
                drop_file(db, held[path][0])
                written[path] = None
            for path in changed:
                found = facts.get(path)
                if found is None:
                    if path in held:
                        drop_file(db, held[path][0])
                    written[path] = None
                    continue
                write(db, path, found, faces[path], digests.get(path, {}))
        self._wrote(written, facts)
        dependents = self._dependents(moved, held) - set(changed)
        dependents &= set(keys)
        dependents = {p for p in dependents if mentions(self.workspace.root / p, words)}
        if held:  # a new file: any file may have named what it defines, maybe through
            # re-exports, and named nothing then; those that mention it are read again
            fresh: set[bytes] = set()
            for path in changed:
                found = facts.get(path)
                if path not in held and found is not None:
                    fresh |= {d[0].rpartition(".")[2].encode() for d in found["defs"]}
                    fresh |= module_words(path, held)  # imports of the module itself
            if fresh:
                root = self.workspace.root
                dependents |= {p for p in keys if p not in facts and mentions(root / p, fresh)}
        more_digests: dict[str, dict[str, int]] = {}
        more_faces: dict[str, str] = {}
        more = read_facts(
            self.workspace.root, sorted(dependents), languages, paths, extractors, None,
            more_digests, more_faces,
        )  # fmt: skip
        facts.update(more)
        # A file read again as a dependent may bind its imports elsewhere now (a module
        # it imports came or went): what other files read of it is written again.
        again = {}
        for path, found in more.items():
            if found is not None and held[path][3] == "syntactic":
                face = more_faces[path]
                if face != held[path][2]:
                    again[path] = (found, face)
        if again:
            with self.store.transaction() as db:
                for path, (found, face) in again.items():
                    write(db, path, found, face, more_digests.get(path, {}))
                    touched |= {path, found["ns"]}
            self._wrote(again, more)
        # Files a SCIP index answers keep its edges; one just read again no longer does.
        precise = {p for p in facts if p in held and held[p][3] == "scip"} - set(changed)
        cold = not held
        for path, row in written.items():  # held as written, not read back
            if row is None:
                held.pop(path, None)
            else:
                held[path] = row
        edges = self._resolve(facts, languages, paths, precise, touched, reuse, cold=cold)
        self._steady = held  # in step with the index: the next sync looks at what changed
        kept = sum(len(owners) for owners in reuse.values())
        return self._stats(len(keys), len(changed), len(facts), len(removed), edges, started, kept)

    def _code_files(
        self, index: Index, extractors: dict[str, GraphExtractor]
    ) -> tuple[dict[str, str], dict[str, str], frozenset[str], set[str] | None]:
        """The index's code files: sha256 and language by path, the paths, and those
        changed since the last sync when the index can tell (None: it cannot); only
        those are looked at then."""
        cached = self._code
        changed = None
        if cached is not None and cached[0] is index:
            changed = index.changed_since(cached[1])
        if cached is None or changed is None:
            keys: dict[str, str] = {}
            languages: dict[str, str] = {}
            pairs = index.keys()  # (path, sha256), sorted
            for path, sha in pairs:
                language = index.language(path)
                if language is not None and language not in NOT_CODE and language in extractors:
                    keys[path] = sha
                    languages[path] = language
            paths = frozenset(keys)
        else:
            keys, languages, paths = cached[2], cached[3], cached[4]
            before = len(keys)
            for path in changed:
                now = index.sha(path)
                language = index.language(path)
                if now is None or language in (None, *NOT_CODE) or language not in extractors:
                    if keys.pop(path, None) is not None:
                        languages.pop(path, None)
                        before = -1
                else:
                    before = before if path in keys else -1
                    keys[path] = now
                    languages[path] = language
            if before != len(keys):  # a file came or went
                paths = frozenset(keys)
        self._code = (index, index.generation, keys, languages, paths)
        return keys, languages, paths, None if changed is None else set(changed)

    def _wrote(self, paths: Iterable[str], facts: dict[str, Facts | None]) -> None:
        """``paths`` were written (their ``facts``; None: dropped): what is kept of their
        bindings and imports in this process follows."""
        paths = list(paths)
        self._bindings.forget(paths)
        for path in paths:
            self._importers.wrote(path, facts.get(path))

    def _held(self) -> dict[str, tuple[int, str, str, str, str]]:
        """The files the graph holds (:meth:`GraphStore.files`), kept in this process
        while no other connection writes the database."""
        version = self.store.data_version()
        if self._files is None or version != self._version or not self.store.path.exists():
            self._files = self.store.files()
            self._version = version
            self._names = None
            self._bindings.forget()
            self._importers.forget()
        return self._files

    def forget(self) -> None:
        """Read the graph's files and names again (another writer may have changed them)."""
        self._files = None
        self._names = None
        self._bindings.forget()
        self._importers.forget()

    def _stats(
        self,
        files: int,
        read: int,
        resolved: int,
        removed: int,
        edges: int,
        started: float,
        kept: int = 0,
    ) -> SyncStats:
        seconds = time.perf_counter() - started
        self.last = SyncStats(files, read, resolved, removed, edges, seconds, kept)
        return self.last

    def _changed_names(
        self,
        moved: list[str],
        facts: dict[str, Facts | None],
        held: dict[str, tuple[int, str, str, str, str]],
    ) -> tuple[set[bytes] | None, bool]:
        """The short names ``moved`` files define or export differently now (None:
        anything, when a file went away or its namespace changed), and whether all of
        them are plain functions or methods (:data:`.owners.PLAIN`) that came or went."""
        words: set[bytes] = set()
        plain = True
        for path in moved:
            found = facts.get(path)
            if found is None or path not in held or found["ns"] != held[path][4]:
                return None, False
            before = {
                (name, kind, None, None, extra)
                for name, kind, extra in self.store.query(
                    "SELECT name, kind, extra FROM names WHERE file = ? AND kind != 'module'",
                    (held[path][0],),
                )
            }
            imports, typed = self._bindings.of(path)
            before |= {(i[0], "import", i[2], i[3], None) for i in imports}
            before |= {(t[0], "var", None, None, t[1]) for t in typed}
            after = {(d[0], d[1], None, None, packed_extra(d[4])) for d in found["defs"]}
            imports, typed = bindings_of(found)
            after |= {(i[0], "import", i[2], i[3], None) for i in imports}
            after |= {(t[0], "var", None, None, t[1]) for t in typed}
            for row in before ^ after:
                words.add(row[0].rpartition(".")[2].encode())
                plain = plain and row[1] in PLAIN and not row[4]
        return words, plain

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
        found |= self._importers.users(namespaces)
        spaces = sorted(namespaces)
        for start in range(0, len(spaces), 500):
            names = spaces[start : start + 500]
            marks = ",".join("?" * len(names))
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
        touched: set[str],
        reuse: dict[str, dict[str, int]],
        *,
        cold: bool,
    ) -> int:
        """Resolve the chains of ``facts`` and write their edges; how many were written.
        ``touched``: the namespaces (and paths) whose names were just written; ``reuse``:
        by path, the definitions that keep their edges, moved by as many lines."""
        from cuedeck_code.intel.lookup import NameLookup, memory_fetch, sql_fetch

        if cold:
            names = NameLookup(memory_fetch(self.store, self._held(), self._bindings), paths)
        else:  # a refresh: what earlier refreshes looked up stays, but what was written
            lookup = self._names
            if lookup is None or lookup.paths is not paths:
                self._spaces = Spaces(self.store)
                fetch = sql_fetch(self.store, self._spaces, self._held(), self._bindings)
                lookup = self._names = NameLookup(fetch, paths)
            else:
                lookup.forget(touched)
                self._spaces.forget(touched)
            names = lookup
        ids = symbol_ids(self.store) if cold else LazyIds(self.store)
        work = [(p, found) for p, found in facts.items() if found is not None and p not in precise]

        def job(chunk: Sequence[tuple[str, Facts]], tick: Callable[[int], None]) -> Resolved:
            rows: list[tuple[int, int, int, int]] = []
            still: dict[str, list[int]] = {}  # by path: definitions whose edges stay
            for done, (path, found) in enumerate(chunk, start=1):
                if ids.get(path) is not None:
                    language = languages.get(path, "")
                    found_rows, kept = file_rows(
                        self.store, path, language, found, names, ids, reuse.get(path)
                    )
                    rows.extend(found_rows)
                    if kept is not None:
                        still[path] = kept
                tick(done)
            return rows, still

        from cuedeck.system.parallel import map_chunks

        rows: list[tuple[int, int, int, int]] = []
        still: dict[str, list[int]] = {}
        message = "Resolving the code graph"
        for found_rows, found_still in map_chunks(job, work, message=message, min_items=FORKED):
            rows.extend(found_rows)
            still.update(found_still)
        if cold:
            rows.sort()  # in the table's order: appended, not scattered, pages full
        with self.store.transaction() as db:
            if not cold:
                files = [(path,) for path in facts if path not in precise and path not in still]
                mine = "SELECT n.id FROM names n JOIN files f ON f.id = n.file WHERE f.path = ?"
                db.executemany(f"DELETE FROM edges WHERE source = 0 AND src IN ({mine})", files)
                for path, numbers in still.items():
                    marks = ",".join("?" * len(numbers))
                    db.execute(
                        f"DELETE FROM edges WHERE source = 0 AND src IN ({mine}) "
                        f"AND src NOT IN ({marks})",
                        (path, *numbers),
                    )
            db.executemany("INSERT OR IGNORE INTO edges VALUES (?, ?, ?, ?, 0)", rows)
            db.execute("DELETE FROM meta WHERE key = 'unfinished'")  # in step again
        return len(rows)
