"""Importance: the definitions a task needs, ranked from what its card says and cites.

A definition's score adds four parts, each scaled to 0..1 over the repository and
weighted by :data:`WEIGHTS` (chosen on the localization benchmark, docs/code.md):

- ``text``: how well the card's words find it (BM25F of the definition in the search
  index, the card's text as the query), or 1 x the name's specificity when the text
  names it (``parse_url``, ``Client.send``);
- ``graph``: reference-graph importance personalised on the task. A random walk over
  the files (:mod:`cuedeck_code.codegraph`: mentions of definitions and imports)
  restarts at the files the card cites, the error's frames and the files the text
  finds; each file's share then flows along its mention edges to the definitions it
  mentions (the definitions those files depend on);
- ``recent``: how often and how lately git changed its lines (:mod:`.history`);
- ``stack``: an error's frames (:mod:`.frames`) point into it; the frame where the
  error was raised counts most, each one further out :data:`FRAME_DECAY` as much.

Definitions the card cites are personalisation, not results; for a task (a text, cited
code or a stack) a definition none of text, graph and stack points at is not ranked:
recent changes alone say nothing about the task.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import attrs
import numpy as np

from cuedeck.models import RankedSymbol

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from cuedeck.models import CodeQuery
    from cuedeck.workspace import Workspace
    from cuedeck_code.codegraph import CodeGraph


@attrs.frozen
class Weights:
    """How much each part of the score counts (see the module docstring)."""

    text: float = 0.5
    graph: float = 0.25
    recent: float = 0.1
    stack: float = 0.5

    def items(self) -> tuple[tuple[str, float], ...]:
        return tuple((field.name, getattr(self, field.name)) for field in attrs.fields(Weights))


#: The weights scenes and maps use. text and recent: the best mean share of modified
#: lines shown at 4k/8k/16k on the localization set (benchmarks/code_scenes.py --tune);
#: the set cites no code and holds no tracebacks, so graph (half of text) and stack
#: (as much as text: the frames are as direct as the card's words) are set by rule.
#: docs/code.md, "Related code: importance", has the table.
WEIGHTS = Weights()
#: What the walk restarts at when the card cites no code and has no stack, but has
#: words: ``none`` (no graph part then), ``text`` (the files its words find) or
#: ``uniform`` (anywhere: plain centrality). Measured: docs/code.md, "Importance".
UNCITED = "none"
#: Share of a walk that goes on along an edge rather than restarting at the task.
DAMPING = 0.85
WALK_STEPS = 30
#: Each frame further from where the error was raised counts this much of the last.
FRAME_DECAY = 0.6
#: Symbols asked of the search index for the text part.
TEXT_HITS = 100
#: Longest query taken from a card's text, in characters.
QUERY_CHARS = 1000
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


class ImportanceRanker:
    """The ``importance`` code ranker (registered by cuedeck-code)."""

    def __init__(
        self, weights: Weights = WEIGHTS, *, search_mode: str = "keyword", uncited: str = UNCITED
    ) -> None:
        self.weights = weights
        self.search_mode = search_mode
        self.uncited = uncited

    def rank(self, workspace: Workspace, query: CodeQuery) -> list[RankedSymbol]:
        """Up to ``query.limit`` definitions, best first (see the module docstring)."""
        graph = workspace.service("code_graph").get()
        if not graph.names:
            return []
        candidates = self._candidates(graph, query)
        parts = self.parts(workspace, graph, query, candidates)
        if query.text.strip() or query.cited or query.stack.strip():
            # For a task, only what the task points at: recent changes alone say nothing
            # about it.
            task = parts["text"] + parts["graph"] + parts["stack"]
            candidates = candidates[task[candidates] > 0]
        score = sum(
            (parts[name] * weight for name, weight in self.weights.items()),
            np.zeros(len(graph.names)),
        )
        chosen = candidates[np.lexsort((candidates, -score[candidates]))][: query.limit]
        index = workspace.fresh_index()
        ranked = []
        for number in chosen.tolist():
            path = graph.paths[graph.files[number]]
            document = index.get(path)
            line, name = int(graph.lines[number]), graph.names[number]
            symbol = (
                next((s for s in document.symbols if s.line == line and s.name == name), None)
                if document
                else None
            )
            ranked.append(
                RankedSymbol(
                    path=path,
                    name=graph.names[number],
                    kind=graph.kinds[number],
                    line=int(graph.lines[number]),
                    end_line=int(graph.ends[number]),
                    tokens=int(graph.tokens[number]),
                    score=round(float(score[number]), 6),
                    parts=tuple(
                        (name, round(float(parts[name][number] * weight), 6))
                        for name, weight in self.weights.items()
                    ),
                    signature=symbol.signature if symbol else "",
                    docstring=symbol.docstring if symbol else "",
                )
            )
        return ranked

    def parts(
        self,
        workspace: Workspace,
        graph: CodeGraph,
        query: CodeQuery,
        candidates: NDArray[np.int64] | None = None,
    ) -> dict[str, NDArray[np.float64]]:
        """Each part of the score per symbol of ``graph``, scaled so the best of the
        ``candidates`` (default: every symbol) has 1."""
        from cuedeck_code.frames import frames, paths_by_name, resolve

        files = graph.file_index
        seeds = np.zeros(len(graph.paths), dtype=np.float64)
        stack = np.zeros(len(graph.names), dtype=np.float64)
        by_name = paths_by_name(graph.paths)
        for frame in frames(f"{query.stack}\n{query.text}"):
            path = resolve(frame, files, by_name)
            if path is None:
                continue
            weight = FRAME_DECAY**frame.depth
            file = files[path]
            seeds[file] += weight
            symbol = graph.symbol_at(file, frame.line)
            if symbol >= 0:
                stack[symbol] += weight
        for path, _ in query.cited:
            if path in files:
                seeds[files[path]] += 1.0
        text = self._text(workspace, graph, query.text)
        walk = np.zeros(len(graph.names), dtype=np.float64)
        if seeds.any() or self.uncited == "uniform" or not text.any():
            walk = flow(graph, seeds)  # no seeds: a walk restarting anywhere (centrality)
        elif self.uncited == "text":
            per_file = np.zeros(len(graph.paths), dtype=np.float64)
            np.maximum.at(per_file, graph.files, text)
            walk = flow(graph, per_file)
        among = np.arange(len(graph.names)) if candidates is None else candidates
        return {
            "text": _scaled(text, among),
            "graph": _scaled(walk, among),
            "recent": _scaled(self._recent(workspace, graph), among),
            "stack": _scaled(stack, among),
        }

    def _text(self, workspace: Workspace, graph: CodeGraph, text: str) -> NDArray[np.float64]:
        """The ``text`` part before scaling: search scores, and names the text writes."""
        scores = np.zeros(len(graph.names), dtype=np.float64)
        query = text.strip()[:QUERY_CHARS]
        if not query:
            return scores
        wanted: dict[tuple[str, str], float] = {}
        from cuedeck.errors import CueError

        try:
            from cuedeck_code.search_tool import search_code

            found = search_code(workspace, query, mode=self.search_mode, limit=TEXT_HITS)  # type: ignore[arg-type]
        except CueError:
            found = None  # cuedeck-search is not installed: names alone
        if found is not None and found["results"]:
            best = max(hit["score"] for hit in found["results"])
            for hit in found["results"]:
                wanted[(hit["path"], hit["symbol"])] = hit["score"] / best if best > 0 else 0.0
        files = graph.file_index
        for (path, name), value in wanted.items():
            file = files.get(path)
            if file is None:
                continue
            for number in graph.by_file[file].tolist():
                if graph.names[number] == name:
                    scores[number] = max(scores[number], value)
        from cuedeck_code.codegraph import specificity

        short = graph.by_short_name
        qualified = _qualified(graph)
        for written in set(_NAME.findall(text)):
            if len(written) < 4:
                continue
            numbers = qualified.get(written) or short.get(written.rpartition(".")[2], [])
            if not numbers or len(numbers) > 10:
                continue
            weight = specificity(written.rpartition(".")[2])
            for number in numbers:
                scores[number] = max(scores[number], weight)
        return scores

    def _recent(self, workspace: Workspace, graph: CodeGraph) -> NDArray[np.float64]:
        from cuedeck_code.codegraph import _memo
        from cuedeck_code.history import head, read_changes, recency

        commit = head(str(workspace.root))
        if commit is None:
            return np.zeros(len(graph.names), dtype=np.float64)

        def build() -> NDArray[np.float64]:
            found = read_changes(workspace)
            if found is None:
                return np.zeros(len(graph.names), dtype=np.float64)
            return recency(graph, found[1])

        return _memo(graph, f"recency {commit}", build)

    @staticmethod
    def _candidates(graph: CodeGraph, query: CodeQuery) -> NDArray[np.int64]:
        """Definitions that may be ranked: not a module (unless its file defines nothing
        else), under ``query.folder``, not cited by the card."""
        keep = np.array([kind != "module" for kind in graph.kinds], dtype=bool)
        lonely = np.bincount(graph.files[keep], minlength=len(graph.paths)) == 0
        for lone in np.flatnonzero(lonely & (graph.modules >= 0)).tolist():
            keep[graph.modules[lone]] = True
        if query.folder:
            prefix = query.folder.strip("/") + "/"
            inside = np.array([p.startswith(prefix) for p in graph.paths], dtype=bool)
            keep &= inside[graph.files]
        files = graph.file_index
        for path, anchor in query.cited:
            cited = files.get(path)
            if cited is None:
                continue
            for number in graph.by_file[cited].tolist():
                if anchor is None or graph.names[number] == anchor:
                    keep[number] = False
        return np.flatnonzero(keep)


def _scaled(values: NDArray[np.float64], among: NDArray[np.int64]) -> NDArray[np.float64]:
    """``values`` over the best of them ``among`` (at most 1 there)."""
    top = float(values[among].max()) if len(among) else 0.0
    return np.minimum(values / top, 1.0) if top > 0 else values


def _qualified(graph: CodeGraph) -> dict[str, list[int]]:
    from cuedeck_code.codegraph import _memo

    def build() -> dict[str, list[int]]:
        found: dict[str, list[int]] = {}
        for number, (name, kind) in enumerate(zip(graph.names, graph.kinds, strict=True)):
            if kind != "module" and "." in name:
                found.setdefault(name, []).append(number)
        return found

    return _memo(graph, "qualified", build)


@attrs.frozen(eq=False)
class Walk:
    """A graph's edges made ready for walks: file-to-file transitions (mention edges
    summed per pair of files, plus imports), and each mention edge's share of its
    file's out-weight (to split a file's rank among the definitions it mentions)."""

    pair_src: NDArray[np.int64]
    pair_dst: NDArray[np.int64]
    pair_share: NDArray[np.float64]
    dangling: NDArray[np.bool_]
    ref_share: NDArray[np.float64]
    import_share: NDArray[np.float64]


def _walk(graph: CodeGraph) -> Walk:
    from cuedeck_code.codegraph import IMPORT_WEIGHT, _memo

    def build() -> Walk:
        count = len(graph.paths)
        src = np.concatenate([graph.ref_src, graph.import_src]).astype(np.int64)
        dst = np.concatenate([graph.files[graph.ref_dst], graph.import_dst]).astype(np.int64)
        weight = np.concatenate([graph.ref_weight, np.full(len(graph.import_src), IMPORT_WEIGHT)])
        out = np.bincount(src, weights=weight, minlength=count)
        share = np.divide(weight, out[src], out=np.zeros_like(weight), where=out[src] > 0)
        pairs, inverse = np.unique(src * count + dst, return_inverse=True)
        summed = np.bincount(inverse, weights=share, minlength=len(pairs))
        edges = len(graph.ref_src)
        return Walk(
            pair_src=pairs // count,
            pair_dst=pairs % count,
            pair_share=summed.astype(np.float64),
            dangling=out == 0,
            ref_share=share[:edges],
            import_share=share[edges:],
        )

    return _memo(graph, "walk", build)


def flow(graph: CodeGraph, seeds: NDArray[np.float64]) -> NDArray[np.float64]:
    """The ``graph`` part before scaling: a walk over files restarting at ``seeds``
    (everywhere alike when there are none), each file's share then split among the
    definitions it mentions in proportion to the edge weights."""
    count = len(graph.paths)
    restart = seeds / seeds.sum() if seeds.sum() > 0 else np.full(count, 1.0 / max(count, 1))
    walk = _walk(graph)
    rank = restart.copy()
    for _ in range(WALK_STEPS):
        moved = np.bincount(
            walk.pair_dst, weights=rank[walk.pair_src] * walk.pair_share, minlength=count
        )
        lost = rank[walk.dangling].sum()
        rank = (1 - DAMPING) * restart + DAMPING * (moved + lost * restart)
    size = len(graph.names)
    symbols = np.bincount(
        graph.ref_dst, weights=rank[graph.ref_src] * walk.ref_share, minlength=size
    )
    imported = graph.modules[graph.import_dst]
    has_module = imported >= 0
    symbols += np.bincount(
        imported[has_module],
        weights=(rank[graph.import_src] * walk.import_share)[has_module],
        minlength=size,
    )
    return symbols.astype(np.float64)
