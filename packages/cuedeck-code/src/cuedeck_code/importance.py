"""Importance: the definitions a task needs, ranked from what its card says and cites.

A definition's score adds four parts, each scaled to 0..1 over the repository and
weighted by :data:`WEIGHTS` (chosen on the localization benchmark, docs/code.md):

- ``text``: how well the card's words find it (BM25F of the definition in the search
  index, the card's text as the query), or 1 x the name's specificity when the text
  writes its name as code (``parse_url``; :func:`.related_rules.written_names`), and 1
  more when it writes its qualified name (``Client.send``);
- ``graph``: reference-graph importance personalised on the task. A random walk over
  the files (:mod:`cuedeck_code.codegraph`: mentions of definitions and imports)
  restarts at the files the card cites, the error's frames and the files the text
  finds; each file's share then flows along its mention edges to the definitions it
  mentions (the definitions those files depend on);
- ``recent``: how often and how lately git changed its lines (:mod:`.history`);
- ``stack``: an error's frames (:mod:`.frames`) point into it; the frame where the
  error was raised counts most, each one further out :data:`FRAME_DECAY` as much; a
  definition calling a frame's counts as a frame one further out.

Definitions the card cites are personalisation, not results; for a task (a text, cited
code or a stack) a definition none of text, graph and stack points at is not ranked:
recent changes alone say nothing about the task. Then :mod:`.related_rules`: tests
(unless the task asks for them) and generated files are left out and counted, the
frames come first and their best callers next, and a name is one entry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs
import numpy as np

from cuedeck.models import CodeRanking, RankedSymbol
from cuedeck_code.related_rules import MAX_CALLERS, left_out, one_per_symbol, written_names
from cuedeck_code.related_rules import callers as find_callers

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


class ImportanceRanker:
    """The ``importance`` code ranker (registered by cuedeck-code)."""

    def __init__(
        self, weights: Weights = WEIGHTS, *, search_mode: str = "keyword", uncited: str = UNCITED
    ) -> None:
        self.weights = weights
        self.search_mode = search_mode
        self.uncited = uncited

    def rank(self, workspace: Workspace, query: CodeQuery) -> CodeRanking:
        """Up to ``query.limit`` definitions, best first (see the module docstring), and
        the tests and generated ones left out (:mod:`.related_rules`)."""
        graph = workspace.service("code_graph").get()
        if not graph.names:
            return CodeRanking()
        candidates = self._candidates(graph, query)
        parts, callers = self._parts(workspace, graph, query, candidates)
        if query.text.strip() or query.cited or query.stack.strip():
            # For a task, only what the task points at: recent changes alone say nothing
            # about it.
            task = parts["text"] + parts["graph"] + parts["stack"]
            candidates = candidates[task[candidates] > 0]
        candidates, left_out = self._leave_out(workspace, graph, query, candidates)
        score = sum(
            (parts[name] * weight for name, weight in self.weights.items()),
            np.zeros(len(graph.names)),
        )
        # An error's frames, then their best callers, come before what the words find.
        tier = np.zeros(len(graph.names), dtype=np.int8)
        tier[list(callers)] = 2
        for found in callers.values():
            best = sorted(found, key=lambda n: -score[n])[:MAX_CALLERS]
            tier[best] = np.maximum(tier[best], 1)
        order = candidates[np.lexsort((candidates, -score[candidates], -tier[candidates]))]
        index = workspace.fresh_index()
        ranked = CodeRanking(left_out=left_out)
        for number, line, end in one_per_symbol(graph, order[: query.limit * 2].tolist()):
            if len(ranked) == query.limit:
                break
            path = graph.paths[graph.files[number]]
            document = index.get(path)
            name = graph.names[number]
            first = int(graph.lines[number])
            symbol = (
                next((s for s in document.symbols if s.line == first and s.name == name), None)
                if document
                else None
            )
            tokens = int(graph.tokens[number])
            if (line, end) != (first, int(graph.ends[number])):
                tokens = int(
                    sum(
                        graph.tokens[s]
                        for s in graph.by_file[graph.files[number]].tolist()
                        if graph.names[s] == name and line <= graph.lines[s] <= end
                    )
                )
            ranked.append(
                RankedSymbol(
                    path=path,
                    name=name,
                    kind=graph.kinds[number],
                    line=line,
                    end_line=end,
                    tokens=tokens,
                    score=round(float(score[number]), 6),
                    parts=tuple(
                        (part, round(float(parts[part][number] * weight), 6))
                        for part, weight in self.weights.items()
                    ),
                    signature=symbol.signature if symbol else "",
                    docstring=symbol.docstring if symbol else "",
                )
            )
        return ranked

    def _leave_out(
        self,
        workspace: Workspace,
        graph: CodeGraph,
        query: CodeQuery,
        candidates: NDArray[np.int64],
    ) -> tuple[NDArray[np.int64], dict[str, int]]:
        """``candidates`` less tests (unless the task asks for them) and generated
        files' definitions, and how many of each were left out."""
        from cuedeck.index.file_kinds import is_test_path
        from cuedeck_code.file_kinds import asks_for_tests
        from cuedeck_code.frames import frames, paths_by_name, resolve

        tests, generated = left_out(workspace, graph)
        by_name = paths_by_name(graph.paths)
        ran = [
            path
            for frame in frames(f"{query.stack}\n{query.text}")
            if (path := resolve(frame, graph.file_index, by_name)) is not None
        ]
        cited = [path for path, _ in query.cited]
        folder = f"{query.folder.strip('/')}/x" if query.folder else ""
        wanted = asks_for_tests(query.text, cited, ran) or bool(folder and is_test_path(folder))
        drop_tests = np.zeros(len(candidates), dtype=bool)
        if not wanted:
            drop_tests = tests[candidates] & ~generated[candidates]
        drop_generated = generated[candidates]
        counts = {"tests": int(drop_tests.sum()), "generated": int(drop_generated.sum())}
        return candidates[~(drop_tests | drop_generated)], counts

    def parts(
        self,
        workspace: Workspace,
        graph: CodeGraph,
        query: CodeQuery,
        candidates: NDArray[np.int64] | None = None,
    ) -> dict[str, NDArray[np.float64]]:
        """Each part of the score per symbol of ``graph``, scaled so the best of the
        ``candidates`` (default: every symbol) has 1."""
        return self._parts(workspace, graph, query, candidates)[0]

    def _parts(
        self,
        workspace: Workspace,
        graph: CodeGraph,
        query: CodeQuery,
        candidates: NDArray[np.int64] | None = None,
    ) -> tuple[dict[str, NDArray[np.float64]], dict[int, list[int]]]:
        """:meth:`parts`, and each frame's definition with its callers."""
        from cuedeck_code.frames import frames, paths_by_name, resolve

        files = graph.file_index
        seeds = np.zeros(len(graph.paths), dtype=np.float64)
        stack = np.zeros(len(graph.names), dtype=np.float64)
        depths: dict[int, int] = {}  # frame's definition -> its depth nearest the error
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
                depths[symbol] = min(depths.get(symbol, frame.depth), frame.depth)
        # Each frame's callers count as a frame one further out (the frames themselves
        # keep what they have: a caller is often the next frame).
        callers: dict[int, list[int]] = {}
        for symbol, depth in depths.items():
            callers[symbol] = []
            if graph.kinds[symbol] == "module":
                continue
            callers[symbol] = [c for c in find_callers(workspace, graph, symbol) if c not in depths]
            for caller in callers[symbol]:
                stack[caller] = max(stack[caller], FRAME_DECAY ** (depth + 1))
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
        parts = {
            "text": _scaled(text, among),
            "graph": _scaled(walk, among),
            "recent": _scaled(self._recent(workspace, graph), among),
            "stack": _scaled(stack, among),
        }
        return parts, callers

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
        for written in written_names(text):
            if written in qualified:
                # A qualified name written out is the most direct pointer there is: above
                # whatever the words merely find.
                for number in qualified[written]:
                    scores[number] = 1.0 + scores[number]
                continue
            numbers = short.get(written.rpartition(".")[2], [])
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
    # float from the start: bincount of no references (a workspace whose files mention
    # no definition) gives integers, and adding the imports' weights would fail
    symbols = np.bincount(
        graph.ref_dst, weights=rank[graph.ref_src] * walk.ref_share, minlength=size
    ).astype(np.float64)
    imported = graph.modules[graph.import_dst]
    has_module = imported >= 0
    symbols += np.bincount(
        imported[has_module],
        weights=(rank[graph.import_src] * walk.import_share)[has_module],
        minlength=size,
    )
    return symbols
