"""The reference graph of a repository's code: who mentions which definition, who imports
whom; built from the index and cached until a source file changes.

Nodes are the indexed code files; each definition (a :class:`~cuedeck.models.Symbol`)
belongs to one. An edge runs from a file to a definition when the file mentions the
definition's name (other than where it defines it), weighted by how specific the name
is and how often it is mentioned, and shared among the definitions of that name:

    weight(f -> s) = sqrt(mentions of name(s) in f) * specificity(name) / definers(name)

with ``specificity`` 1 for a name of 8 characters or more, ``len/8`` below that, a
fifth for a dunder name (``__init__``), half for a private one (``_helper``), times the
name's :func:`rarity` among the files (a name nearly every file writes, like ``name``,
is mostly not the definition); names
defined in more than :data:`MAX_DEFINERS` places say nothing and make no edge. An import
(resolved to a file by the parser) is an edge from file to file of weight
:data:`IMPORT_WEIGHT`. Everything lives in numpy arrays, saved beside the index under a
key of every code file's sha256, so a scene on a warm repository loads it in a few ms.
"""

from __future__ import annotations

import hashlib
import io
import logging
import math
import threading
from typing import TYPE_CHECKING, Any, TypeVar, cast

import attrs
import numpy as np

from cuedeck.layout import CACHE_DIR
from cuedeck.models import PROSE_LANGUAGES

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from numpy.typing import NDArray

    from cuedeck.workspace import Workspace

log = logging.getLogger("cuedeck")

SCHEMA = "3"
GRAPH_FILE = f"{CACHE_DIR}/code-graph.npz"
IDENTIFIERS_FILE = f"{CACHE_DIR}/code-identifiers.sqlite3"
#: A name defined in more places than this is too common to say anything.
MAX_DEFINERS = 50
#: Weight of an import edge, against one specific mention of a definition (1.0).
IMPORT_WEIGHT = 2.0
#: The least a name mentioned by every file counts (see :func:`rarity`).
RARITY_FLOOR = 0.1
#: Languages whose documents are not code.
NOT_CODE = PROSE_LANGUAGES


def specificity(name: str) -> float:
    """How much a mention of ``name`` says (see the module docstring)."""
    value = min(1.0, len(name) / 8)
    if name.startswith("__") and name.endswith("__"):
        return value * 0.2
    if name.startswith("_"):
        return value * 0.5
    return value


def rarity(mentioning: int, files: int) -> float:
    """How rare a name is among the files: 1 when few mention it, towards
    :data:`RARITY_FLOOR` as nearly all do (an inverse document frequency)."""
    if files <= 1:
        return 1.0
    value = math.log((files + 1) / (mentioning + 0.5)) / math.log(files + 1)
    return min(1.0, max(RARITY_FLOOR, value))


@attrs.frozen(eq=False)
class CodeGraph:
    """The code files, their definitions and the edges between them, as arrays.

    Symbol ``i`` is ``names[i]`` (qualified), of ``kinds[i]``, in file ``files[i]`` at
    lines ``lines[i]..ends[i]`` costing ``tokens[i]``; ``modules[f]`` is file ``f``'s
    module symbol (-1 when it has none). ``ref_*`` are the mention edges file -> symbol,
    ``import_*`` the import edges file -> file.
    """

    key: str
    paths: tuple[str, ...]
    names: tuple[str, ...]
    kinds: tuple[str, ...]
    files: NDArray[np.int32]
    lines: NDArray[np.int32]
    ends: NDArray[np.int32]
    tokens: NDArray[np.int32]
    modules: NDArray[np.int32]
    ref_src: NDArray[np.int32]
    ref_dst: NDArray[np.int32]
    ref_weight: NDArray[np.float64]
    import_src: NDArray[np.int32]
    import_dst: NDArray[np.int32]

    @property
    def file_index(self) -> dict[str, int]:
        """Path -> file number."""
        return _memo(self, "file_index", lambda: {p: i for i, p in enumerate(self.paths)})

    @property
    def by_short_name(self) -> dict[str, list[int]]:
        """The last part of a qualified name -> the definitions of that name."""

        def build() -> dict[str, list[int]]:
            found: dict[str, list[int]] = {}
            for number, (name, kind) in enumerate(zip(self.names, self.kinds, strict=True)):
                if kind != "module":
                    found.setdefault(name.rpartition(".")[2], []).append(number)
            return found

        return _memo(self, "by_short_name", build)

    @property
    def by_file(self) -> list[NDArray[np.int64]]:
        """File number -> its symbols' numbers, in file order."""

        def build() -> list[NDArray[np.int64]]:
            order = np.argsort(self.files, kind="stable")
            bounds = np.searchsorted(self.files[order], np.arange(len(self.paths) + 1))
            return [order[bounds[f] : bounds[f + 1]] for f in range(len(self.paths))]

        return _memo(self, "by_file", build)

    def symbol_at(self, file: int, line: int) -> int:
        """The innermost definition of ``file`` around ``line`` (its module, else -1)."""
        best, span = int(self.modules[file]), math.inf
        for number in self.by_file[file].tolist():
            if self.kinds[number] == "module":
                continue
            if self.lines[number] <= line <= self.ends[number]:
                size = int(self.ends[number] - self.lines[number])
                if size < span:
                    best, span = number, size
        return best


T = TypeVar("T")
#: (id of a graph, table) -> (the graph, the table): the graph is kept so an id is never reused.
_MEMO: dict[tuple[int, str], tuple[CodeGraph, Any]] = {}
_MEMO_LOCK = threading.RLock()


def _memo(graph: CodeGraph, name: str, build: Callable[[], T]) -> T:
    """``build()`` once per graph (derived tables, made when first asked for)."""
    key = (id(graph), name)
    with _MEMO_LOCK:
        found = _MEMO.get(key)
        if found is None or found[0] is not graph:
            if len(_MEMO) > 64:
                _MEMO.clear()
            found = _MEMO[key] = (graph, build())
        return cast("T", found[1])


def code_keys(workspace: Workspace) -> list[tuple[str, str]]:
    """``(path, sha256)`` of every indexed code file, sorted; decodes nothing."""
    index = workspace.fresh_index()
    every = index.keys()
    return [(p, sha) for p, sha in every if index.language(p) not in (None, *NOT_CODE)]


def graph_key(keys: Iterable[tuple[str, str]], parsers: str = "") -> str:
    """The cache key of a graph over these files, parsed by parsers of key ``parsers``."""
    digest = hashlib.sha256(
        f"code-graph {SCHEMA} {MAX_DEFINERS} {IMPORT_WEIGHT} {parsers}\n".encode()
    )
    for path, sha in keys:
        digest.update(f"{path}\0{sha}\n".encode())
    return digest.hexdigest()


class GraphService:
    """A workspace's code graph, kept in memory while no code file changes
    (registered as the ``code_graph`` service)."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self._lock = threading.Lock()
        self._graph: CodeGraph | None = None
        self._stamp: tuple[int, int] | None = None  # the index and generation it is of

    def get(self) -> CodeGraph:
        """The graph of the index as it is now (loaded, or built and saved)."""
        index = self.workspace.fresh_index()
        stamp = (id(index), index.generation)
        with self._lock:
            if self._graph is not None and self._stamp == stamp:
                return self._graph  # nothing changed since: no keys to hash
        keys = code_keys(self.workspace)
        key = graph_key(keys, index.parsers.key())
        with self._lock:
            if self._graph is not None and self._graph.key == key:
                self._stamp = stamp
                return self._graph
            graph = _load(self.workspace, key)
            if graph is None:
                graph = build_graph(self.workspace, keys, key)
                _save(self.workspace, graph)
            self._graph, self._stamp = graph, stamp
            return graph


def build_graph(workspace: Workspace, keys: list[tuple[str, str]], key: str) -> CodeGraph:
    """The graph of the code files ``keys`` (see the module docstring)."""
    from cuedeck.errors import CueError
    from cuedeck.progress import report
    from cuedeck.text import decode
    from cuedeck_code.idents import IdentifierCache, count_identifiers

    index = workspace.fresh_index()
    paths = [path for path, _ in keys]
    file_of = {path: number for number, path in enumerate(paths)}
    names: list[str] = []
    kinds: list[str] = []
    files: list[int] = []
    lines: list[int] = []
    ends: list[int] = []
    tokens: list[int] = []
    modules = np.full(len(paths), -1, dtype=np.int32)
    import_src: list[int] = []
    import_dst: list[int] = []
    index.fetch(paths)
    for number, path in enumerate(paths):
        document = index.get(path)
        if document is None:
            continue
        for symbol in document.symbols:
            if symbol.kind == "module" and modules[number] < 0:  # the file's, not a `mod`
                modules[number] = len(names)
            names.append(symbol.name)
            kinds.append(symbol.kind)
            files.append(number)
            lines.append(symbol.line)
            ends.append(symbol.end_line)
            tokens.append(symbol.tokens)
        for reference in document.references:
            target = file_of.get(reference.target)
            if reference.kind == "import" and target is not None and target != number:
                import_src.append(number)
                import_dst.append(target)

    cache = IdentifierCache(workspace.root / IDENTIFIERS_FILE)
    counts = cache.get_many(sha for _, sha in keys)
    missing = [(number, path, sha) for number, (path, sha) in enumerate(keys) if sha not in counts]
    fresh = {}
    for done, (_, path, sha) in enumerate(missing, start=1):
        try:
            fresh[sha] = count_identifiers(decode(workspace.read_bytes(path))[0])
        except CueError:
            fresh[sha] = count_identifiers("")
        if done % 50 == 0 or done == len(missing):
            report(done, len(missing), "Reading identifiers")
    cache.put_many(fresh)
    counts.update(fresh)

    definers: dict[str, list[int]] = {}
    for number, (name, kind) in enumerate(zip(names, kinds, strict=True)):
        if kind != "module":
            definers.setdefault(name.rpartition(".")[2], []).append(number)
    useful = {name: found for name, found in definers.items() if len(found) <= MAX_DEFINERS}
    # A name most files mention is mostly something else (a variable called ``name``).
    mentioning: dict[str, int] = dict.fromkeys(useful, 0)
    for _, sha in keys:
        for name in counts.get(sha, {}).keys() & useful.keys():
            mentioning[name] += 1
    total = len(keys)
    weights = {
        name: specificity(name) * rarity(mentioning[name], total) / len(found)
        for name, found in useful.items()
    }
    ref_src: list[int] = []
    ref_dst: list[int] = []
    ref_weight: list[float] = []
    files_array = np.asarray(files, dtype=np.int32)
    for number, (_, sha) in enumerate(keys):
        mentioned = counts.get(sha)
        if not mentioned:
            continue
        for name in mentioned.keys() & useful.keys():
            found = useful[name]
            # The definitions made here each mention the name once, where they are written.
            own = sum(1 for s in found if files_array[s] == number)
            times = mentioned[name] - own
            if times <= 0:
                continue
            weight = math.sqrt(times) * weights[name]
            ref_src.extend([number] * len(found))
            ref_dst.extend(found)
            ref_weight.extend([weight] * len(found))
    return CodeGraph(
        key=key,
        paths=tuple(paths),
        names=tuple(names),
        kinds=tuple(kinds),
        files=files_array,
        lines=np.asarray(lines, dtype=np.int32),
        ends=np.asarray(ends, dtype=np.int32),
        tokens=np.asarray(tokens, dtype=np.int32),
        modules=modules,
        ref_src=np.asarray(ref_src, dtype=np.int32),
        ref_dst=np.asarray(ref_dst, dtype=np.int32),
        ref_weight=np.asarray(ref_weight, dtype=np.float64),
        import_src=np.asarray(import_src, dtype=np.int32),
        import_dst=np.asarray(import_dst, dtype=np.int32),
    )


_ARRAYS = (
    "files",
    "lines",
    "ends",
    "tokens",
    "modules",
    "ref_src",
    "ref_dst",
    "ref_weight",
    "import_src",
    "import_dst",
)


def _save(workspace: Workspace, graph: CodeGraph) -> None:
    """Write the graph beside the index (a failed write only costs a rebuild)."""
    from cuedeck.writes import atomic_write

    buffer = io.BytesIO()
    np.savez(
        buffer,
        key=np.asarray(graph.key),
        paths=np.asarray("\0".join(graph.paths)),
        names=np.asarray("\0".join(graph.names)),
        kinds=np.asarray("\0".join(graph.kinds)),
        **{name: getattr(graph, name) for name in _ARRAYS},
    )
    try:
        atomic_write(workspace.root / GRAPH_FILE, buffer.getvalue(), display=GRAPH_FILE)
    except OSError as exc:
        log.debug("code graph not saved: %s", exc)


def _load(workspace: Workspace, key: str) -> CodeGraph | None:
    """The saved graph if it was built for ``key``."""
    path = workspace.root / GRAPH_FILE
    try:
        with np.load(path, allow_pickle=False) as saved:
            if str(saved["key"]) != key:
                return None
            arrays = {name: saved[name] for name in _ARRAYS}
            strings = {name: str(saved[name]) for name in ("paths", "names", "kinds")}
    except (OSError, ValueError, KeyError) as exc:
        log.debug("code graph not loaded: %s", exc)
        return None

    def split(text: str) -> tuple[str, ...]:
        return tuple(text.split("\0")) if text else ()

    return CodeGraph(
        key=key,
        paths=split(strings["paths"]),
        names=split(strings["names"]),
        kinds=split(strings["kinds"]),
        **arrays,
    )
