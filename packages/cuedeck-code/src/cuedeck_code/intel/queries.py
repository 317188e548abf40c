"""Questions asked of the code graph: which symbols a name means, who references them,
what they reference, the impact of changing them and the call chains between two.

A symbol is a definition of the graph (a row of ``names``), or a file's ``module`` row
(the code outside any definition). It is shown as ``module/Class#method()``: the
module (Python's dotted name, else the path without its suffix), then each enclosing
definition with its descriptor (``#`` after a type, ``()`` after a function, ``.``
after anything else), as SCIP writes symbols.
"""

from __future__ import annotations

import posixpath
from collections import deque
from typing import TYPE_CHECKING, Any

import attrs

from cuedeck_code.intel.facts import CONTAINERS, LINKED, python_module
from cuedeck_code.intel.store import COLUMN, RELATIONS, SOURCES

if TYPE_CHECKING:
    from cuedeck_code.intel.store import GraphStore

#: Symbols a fuzzy name may stand for, at most.
MAX_MATCHES = 20
#: Symbols an impact analysis visits, at most.
MAX_IMPACT = 2000
#: Relations a call chain follows.
CHAIN_RELATIONS = (
    RELATIONS.index("call"),
    RELATIONS.index("reference"),
    RELATIONS.index("decorator"),
)
_SUFFIXES = (
    ".d.ts",
    ".py",
    ".pyi",
    ".ts",
    ".tsx",
    ".js",
    ".jsx",
    ".mjs",
    ".cjs",
    ".go",
    ".rs",
    ".java",
    ".c",
    ".cc",
    ".cpp",
    ".h",
    ".hpp",
    ".rb",
)


@attrs.frozen
class Symbol:
    """A definition (or a file's module row) of the graph."""

    id: int
    name: str
    kind: str
    path: str
    line: int
    end_line: int
    display: str

    def compact(self) -> str:
        """``module/Class#method() (path:line)``: a line for a model."""
        return f"{self.display} ({self.path}:{self.line})"


class Graph:
    """Read-only questions over a graph store."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store
        self._paths: frozenset[str] | None = None
        self._symbols: dict[int, Symbol] = {}

    # -- symbols ---------------------------------------------------------------------------

    def paths(self) -> frozenset[str]:
        if self._paths is None:
            self._paths = frozenset(p for (p,) in self.store.query("SELECT path FROM files"))
        return self._paths

    def symbols(self, ids: list[int]) -> dict[int, Symbol]:
        """The symbols of ``ids`` (those that exist)."""
        wanted = [i for i in dict.fromkeys(ids) if i not in self._symbols]
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self.store.query(
                "SELECT n.id, n.name, n.kind, f.path, n.line, n.end_line, f.language "
                f"FROM names n JOIN files f ON f.id = n.file WHERE n.id IN ({marks})",
                chunk,
            )
            kinds = self._kinds({(row[3], row[1]) for row in rows})
            for number, name, kind, path, line, end, language in rows:
                display = self.display(path, language, name, kind, kinds.get(path, {}))
                self._symbols[number] = Symbol(number, name, kind, path, line, end, display)
        return {i: self._symbols[i] for i in ids if i in self._symbols}

    def _kinds(self, named: set[tuple[str, str]]) -> dict[str, dict[str, str]]:
        """The kinds of the definitions around each ``(path, name)`` (``Client`` for
        ``Client.send``), by path."""
        from cuedeck_code.intel.store import name_key

        wanted = {
            (path, ".".join(name.split(".")[:depth]))
            for path, name in named
            for depth in range(1, name.count(".") + 1)
        }
        found: dict[str, dict[str, str]] = {}
        keys = sorted({name_key(name) for _, name in wanted})
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for path, name, kind in self.store.query(
                "SELECT f.path, n.name, n.kind FROM names n JOIN files f ON f.id = n.file "
                f"WHERE n.key IN ({marks})",
                chunk,
            ):
                if (path, name) in wanted:
                    found.setdefault(path, {})[name] = kind
        return found

    def display(self, path: str, language: str, name: str, kind: str, kinds: dict[str, str]) -> str:
        """``module/Class#method()`` (see the module docstring)."""
        if language == "python":
            module = python_module(path, self.paths())
        else:
            module = next((path[: -len(s)] for s in _SUFFIXES if path.endswith(s)), path)
        if kind == "module" or not name:
            return f"{module}/"
        parts = name.split(".")
        out = []
        for depth in range(1, len(parts) + 1):
            qualified = ".".join(parts[:depth])
            part_kind = kind if depth == len(parts) else kinds.get(qualified, "class")
            out.append(parts[depth - 1] + _descriptor(part_kind))
        return f"{module}/{''.join(out)}"

    def find(self, written: str, *, exact: bool = False, linked: bool = True) -> list[Symbol]:
        """The symbols ``written`` names: ``path#Name``, a display (``mod/Class#m()``), a
        qualified name (``Client.send``) or a short one (``send``); without ``exact``, a
        part of a name too (``User`` finds ``UserService``). Best first."""
        text = written.strip()
        kinds = tuple(sorted(LINKED)) if linked else None
        # Every row of names is a definition or a module; linked: the kinds edges reach.
        where_kind = f"n.kind IN ({','.join('?' * len(kinds))})" if kinds else "1"
        params: tuple[Any, ...] = kinds or ()
        path = None
        if "#" in text and "/" in text.split("#", 1)[0] and not text.endswith(("#", ")", ".")):
            path, _, text = text.partition("#")
        elif "/" in text:
            text = _from_display(text)
        from cuedeck_code.intel.store import name_key

        base = f"SELECT n.id FROM names n JOIN files f ON f.id = n.file WHERE {where_kind} "
        short = text.rpartition(".")[2]
        # A short name is found by its CRC-32 (short_key), then checked against the name.
        by_short = "AND n.short_key = ? AND (n.name = ? OR substr(n.name, ?) = ?) "
        shorts = (name_key(short), short, -len(short) - 1, "." + short)
        tries: list[tuple[str, tuple[Any, ...]]] = []
        if path is not None:
            tries.append((base + "AND f.path = ? AND n.name = ?", (*params, path, text)))
            tries.append((base + "AND f.path = ? " + by_short, (*params, path, *shorts)))
        else:
            tries.append((base + "AND n.key = ? AND n.name = ?", (*params, name_key(text), text)))
            if "." in text:
                tries.append((base + by_short + "AND n.name LIKE ? ESCAPE '\\'",
                              (*params, *shorts, "%." + _like(text))))  # fmt: skip
            tries.append((base + by_short, (*params, *shorts)))
            if not exact:
                if "." not in text:  # the short name, in any case
                    either = "AND (n.name LIKE ? ESCAPE '\\' OR n.name LIKE ? ESCAPE '\\')"
                    tries.append((base + either, (*params, _like(text), "%." + _like(text))))
                tries.append((base + "AND n.name LIKE ? ESCAPE '\\'",
                              (*params, "%" + _like(text) + "%")))  # fmt: skip
        for sql, values in tries:
            rows = self.store.query(sql + " LIMIT 200", values)
            if rows:
                ids = [r[0] for r in rows]
                found = list(self.symbols(ids).values())
                found.sort(
                    key=lambda s: (s.name != text, len(s.name), _test_path(s.path), s.path, s.line)
                )
                return found[:MAX_MATCHES]
        return []

    # -- edges -----------------------------------------------------------------------------

    def references(self, ids: list[int]) -> list[tuple[int, int, int, int, int, str]]:
        """``(src, dst, line, column, relation, source)`` of every edge into ``ids``, in
        file and line order."""
        return self._edges("dst", ids)

    def outgoing(self, ids: list[int]) -> list[tuple[int, int, int, int, int, str]]:
        return self._edges("src", ids)

    def _edges(self, column: str, ids: list[int]) -> list[tuple[int, int, int, int, int, str]]:
        found = []
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for src, dst, pos, relation, source in self.store.query(
                f"SELECT src, dst, pos, relation, source FROM edges WHERE {column} IN ({marks})",
                chunk,
            ):
                found.append((src, dst, pos // COLUMN, pos % COLUMN, relation, SOURCES[source]))
        return found

    def neighbours(
        self, ids: set[int], *, incoming: bool, relations: tuple[int, ...] | None = None
    ) -> dict[int, set[int]]:
        """Each of ``ids`` -> the symbols with an edge into it (``incoming``) or out of it."""
        here, there = ("dst", "src") if incoming else ("src", "dst")
        found: dict[int, set[int]] = {}
        listed = sorted(ids)
        only = f" AND relation IN ({','.join(map(str, relations))})" if relations else ""
        for start in range(0, len(listed), 500):
            chunk = listed[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for a, b in self.store.query(
                f"SELECT DISTINCT {here}, {there} FROM edges WHERE {here} IN ({marks}){only}",
                chunk,
            ):
                if a != b:
                    found.setdefault(a, set()).add(b)
        return found

    def impact(self, ids: list[int], depth: int) -> tuple[dict[int, tuple[int, list[int]]], bool]:
        """Symbols that depend on ``ids`` up to ``depth`` steps: id -> (depth, the chain
        from the target), and whether :data:`MAX_IMPACT` cut it short."""
        seen: dict[int, tuple[int, list[int]]] = {i: (0, [i]) for i in ids}
        frontier = set(ids)
        truncated = False
        for level in range(1, depth + 1):
            if not frontier:
                break
            step = self.neighbours(frontier, incoming=True)
            frontier = set()
            for target, sources in sorted(step.items()):
                for source in sorted(sources):
                    if source in seen:
                        continue
                    if len(seen) >= MAX_IMPACT:
                        truncated = True
                        break
                    seen[source] = (level, [*seen[target][1], source])
                    frontier.add(source)
        return {k: v for k, v in seen.items() if v[0] > 0}, truncated

    def chains(
        self, sources: list[int], targets: list[int], max_depth: int, limit: int
    ) -> tuple[list[list[int]], bool]:
        """Shortest call chains from any of ``sources`` to any of ``targets`` (at most
        ``max_depth`` steps), found by a search from both ends; and whether the depth
        bound was reached without finding one."""
        if set(sources) & set(targets):
            common = sorted(set(sources) & set(targets))
            return [[c] for c in common[:limit]], False
        forward: dict[int, list[int]] = {s: [] for s in sources}  # node -> parents
        backward: dict[int, list[int]] = {t: [] for t in targets}  # node -> children
        front, back = set(sources), set(targets)
        meet: set[int] = set()
        steps = 0
        while front and back and steps < max_depth and not meet:
            steps += 1
            if len(front) <= len(back):
                step = self.neighbours(front, incoming=False, relations=CHAIN_RELATIONS)
                front = set()
                for node, nexts in step.items():
                    for nxt in nexts:
                        if nxt not in forward:
                            forward[nxt] = [node]
                            front.add(nxt)
                        elif node not in forward[nxt] and nxt in front:
                            forward[nxt].append(node)
                meet = front & set(backward)
            else:
                step = self.neighbours(back, incoming=True, relations=CHAIN_RELATIONS)
                back = set()
                for node, previous in step.items():
                    for before in previous:
                        if before not in backward:
                            backward[before] = [node]
                            back.add(before)
                        elif node not in backward[before] and before in back:
                            backward[before].append(node)
                meet = back & set(forward)
        if not meet:
            return [], steps >= max_depth
        found: list[list[int]] = []
        for middle in sorted(meet):
            for head in _paths_to(forward, middle, limit):
                for tail in _paths_to(backward, middle, limit):
                    found.append([*head, *reversed(tail[:-1])])
                    if len(found) >= limit:
                        return found, False
        return found, False


def _paths_to(parents: dict[int, list[int]], node: int, limit: int) -> list[list[int]]:
    """Paths from a root of ``parents`` to ``node`` (at most ``limit``)."""
    out: list[list[int]] = []
    queue: deque[list[int]] = deque([[node]])
    while queue and len(out) < limit:
        path = queue.popleft()
        before = parents.get(path[0], [])
        if not before:
            out.append(path)
            continue
        for parent in before[:limit]:
            if parent not in path:
                queue.append([parent, *path])
    return out


def _descriptor(kind: str) -> str:
    if kind in CONTAINERS or kind in ("namespace",):
        return "#"
    if kind in ("function", "method", "macro"):
        return "()"
    return "."


def _from_display(text: str) -> str:
    """``mod/Class#method()`` as the qualified name ``Class.method``."""
    tail = text.rpartition("/")[2]
    for mark in ("()", "#"):
        tail = tail.replace(mark, ".")
    return ".".join(p for p in tail.split(".") if p)


def _like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _test_path(path: str) -> bool:
    name = posixpath.basename(path)
    return "test" in path.split("/")[0] or name.startswith("test_") or "/tests/" in f"/{path}"
