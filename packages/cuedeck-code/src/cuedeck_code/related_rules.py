"""The rules that shape related code and maps beyond the score (:mod:`.importance`).

- **Left out unless asked for**: tests (unless the task asks for them: its words, the
  code it cites or its error's frames, :func:`~cuedeck_code.file_kinds.asks_for_tests`)
  and generated files (:func:`~cuedeck_code.file_kinds.generated`), counted per reason.
- **Names written**: a card names a definition when it writes it as code: dotted
  (``Text.wrap``), with an underscore or a digit (``parse_url``), camel or Pascal case
  (``parseURL``, ``Console``), in backticks or called (``wrap()``). A plain word
  (``console``, ``width``) is prose: the search ranks it like any word.
- **Callers**: with an error's frames, the definitions that call a frame's definition
  come right after the frames, before what the words find.
- **One entry per symbol**: definitions of one qualified name in one file (a property
  and its setter, overloads) make one entry, spanning them when they sit together.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from cuedeck.workspace import Workspace
    from cuedeck_code.codegraph import CodeGraph

#: Callers of one frame's definition that join the frames, at most.
MAX_CALLERS = 5
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
#: What makes a written word an identifier rather than prose.
_SHAPED = re.compile(r"[._0-9]|[a-z][A-Z]|^[A-Z]")
_MARKED = re.compile(r"`([^`\n]{1,200})`")
_CALLED = re.compile(r"([A-Za-z_][A-Za-z0-9_.]*)\s*\(")


def written_names(text: str) -> set[str]:
    """The names ``text`` writes as code (see the module docstring), 4 characters or more."""
    marked = {name for span in _MARKED.findall(text) for name in _NAME.findall(span)}
    called = set(_CALLED.findall(text))
    return {
        name
        for name in _NAME.findall(text)
        if len(name) >= 4 and (_SHAPED.search(name) or name in marked or name in called)
    }


def left_out(workspace: Workspace, graph: CodeGraph) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """Per definition of ``graph``: whether it is a test, and whether its file is
    generated (both kept with the graph)."""
    from cuedeck_code.codegraph import _memo

    def build() -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
        return tests_of(graph), generated_files(workspace, graph)[graph.files]

    return _memo(graph, "left out", build)


def tests_of(graph: CodeGraph) -> NDArray[np.bool_]:
    """Per definition of ``graph``: whether it is a test (kept with the graph)."""
    from cuedeck.index.file_kinds import is_test_path
    from cuedeck_code.codegraph import _memo
    from cuedeck_code.file_kinds import is_test

    def build() -> NDArray[np.bool_]:
        files = np.array([is_test_path(path) for path in graph.paths], dtype=bool)
        tests = files[graph.files] if len(graph.names) else np.zeros(0, dtype=bool)
        for number, name in enumerate(graph.names):
            if "." in name and not tests[number]:
                tests[number] = is_test(graph.paths[graph.files[number]], name)
        return tests

    return _memo(graph, "tests", build)


def generated_files(workspace: Workspace, graph: CodeGraph) -> NDArray[np.bool_]:
    """Per file of ``graph``: whether it is generated. Only the files that may be (by
    name, a long file with few definitions, or any when the index keeps files that say
    they are generated) are read."""
    from cuedeck.errors import CueError
    from cuedeck_code.file_kinds import generated, generated_name, may_be_data
    from cuedeck_code.settings import CodeSettings

    headers_indexed = not workspace.config.section("code", CodeSettings).skip_generated
    index = workspace.fresh_index()
    found = np.zeros(len(graph.paths), dtype=bool)
    for number, path in enumerate(graph.paths):
        if generated_name(path):
            found[number] = True
            continue
        document = index.get(path, counted=False)
        if document is None:
            continue
        if not headers_indexed and not may_be_data(document.line_count, document.symbols):
            continue
        try:
            text = workspace.snapshot(path).text
        except CueError:
            continue
        found[number] = generated(path, text, document.line_count, document.symbols)
    return found


def callers(workspace: Workspace, graph: CodeGraph, symbol: int) -> list[int]:
    """The definitions that mention ``symbol``'s name in their lines (its own lines
    aside), in the files the graph says mention it; file order."""
    from cuedeck.errors import CueError
    from cuedeck_code.idents import identifier_lines

    name = graph.names[symbol].rpartition(".")[2]
    files = np.unique(graph.ref_src[graph.ref_dst == symbol]).tolist()
    found: list[int] = []
    first, last = int(graph.lines[symbol]), int(graph.ends[symbol])
    for file in files:
        try:
            text = workspace.snapshot(graph.paths[file]).text
        except CueError:
            continue
        own = file == int(graph.files[symbol])
        for line in identifier_lines(text, [name]).get(name, []):
            if own and first <= line <= last:
                continue  # its own lines: the definition, a recursive call
            caller = graph.symbol_at(file, line)
            if caller >= 0 and graph.kinds[caller] != "module" and caller not in found:
                found.append(caller)
    return found


def one_per_symbol(graph: CodeGraph, chosen: list[int]) -> list[tuple[int, int, int]]:
    """``(definition, line, end_line)`` for each of ``chosen`` (best first) whose
    qualified name was not taken in its file yet; its lines span the definitions of that
    name next to it (no other definition of the file starts between them)."""
    taken: set[tuple[int, str]] = set()
    found: list[tuple[int, int, int]] = []
    for number in chosen:
        file, name = int(graph.files[number]), graph.names[number]
        if (file, name) in taken:
            continue
        taken.add((file, name))
        line, end = int(graph.lines[number]), int(graph.ends[number])
        mine = graph.by_file[file].tolist()
        same = sorted(
            (int(graph.lines[s]), int(graph.ends[s])) for s in mine if graph.names[s] == name
        )
        if len(same) > 1:
            starts = [
                int(graph.lines[s])
                for s in mine
                if graph.names[s] != name
                and graph.kinds[s] != "module"
                and not any(a <= graph.lines[s] and graph.ends[s] <= b for a, b in same)
            ]
            at = same.index((line, end))
            low = high = at
            while low > 0 and not any(same[low - 1][1] < x < same[low][0] for x in starts):
                low -= 1
            while high < len(same) - 1 and not any(
                same[high][1] < x < same[high + 1][0] for x in starts
            ):
                high += 1
            line, end = same[low][0], max(b for _, b in same[low : high + 1])
        found.append((number, line, end))
    return found
