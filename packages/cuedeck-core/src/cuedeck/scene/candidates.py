"""What a scene may hold, and in which order: the card, its references, global docs."""

from __future__ import annotations

import heapq
from collections import deque
from typing import TYPE_CHECKING

import attrs

from cuedeck.errors import (
    CycleDetected,
    FileNotFound,
    did_you_mean,
    suggestion_text,
)
from cuedeck.scene.shapes import PRIORITIES

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from cuedeck.index.graph import ReferenceGraph
    from cuedeck.models import Document
    from cuedeck.workspace import Workspace


@attrs.define
class Entry:
    """A graph node (or global doc) on its way to becoming a scene item."""

    path: str
    anchor: str | None  # heading slug
    depth: int  # -1: a global doc nothing refers to
    rank: tuple[int, int]  # (0, found) references, (1, listed) globals, (2, found) links
    lines: tuple[int, int]
    linked: bool = False  # reached through "see also" links (depth counts their hops)

    @property
    def role(self) -> str:
        if self.depth < 0:
            return "global"
        if self.linked:
            return "linked"
        return "card" if self.depth == 0 else "direct" if self.depth == 1 else "indirect"

    @property
    def priority(self) -> int:
        return PRIORITIES[self.role]

    def absorb(self, other: Entry) -> None:
        """Take over ``other``'s better priority and earlier rank (it is inside this one)."""
        if other.priority > self.priority or (
            other.priority == self.priority and 0 <= other.depth < self.depth
        ):
            self.depth, self.linked = other.depth, other.linked
        self.rank = min(self.rank, other.rank)


def _discovery(graph: ReferenceGraph, start: str, depths: Mapping[str, int]) -> dict[str, int]:
    """Reachable nodes numbered in breadth-first order, each file's references in file order."""
    index = {graph.graph[i]: i for i in graph.graph.node_indices()}
    written = {id(link): n for links in graph.links.values() for n, link in enumerate(links)}
    order = {start: 0}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        edges = sorted(
            graph.graph.out_edges(index[node]),
            key=lambda edge: (edge[2].reference.line, written.get(id(edge[2]), 0)),
        )
        for _, target, _ in edges:
            label = graph.graph[target]
            if label not in order and label in depths:
                order[label] = len(order)
                queue.append(label)
    return order


def _see_also(
    graph: ReferenceGraph, start: list[str], included: set[str], hops: int
) -> list[tuple[str, int]]:
    """Node labels reached by up to ``hops`` "see also" links from ``start`` (in order
    found), with their hop count; a file already included is never reached again."""
    reached: dict[str, int] = {}
    seen_files = set(included)
    frontier = start
    for hop in range(1, hops + 1):
        following = []
        for label in frontier:
            path, anchor = graph.split_key(label)
            for link in graph.see_also(path, anchor):
                if link.target in seen_files:
                    continue  # each file once: a loop of links ends here too
                target = graph.key(link.target, link.anchor)
                if target not in reached:
                    reached[target] = hop
                    following.append(target)
        seen_files.update(graph.split_key(label)[0] for label in following)
        frontier = following
    return list(reached.items())


def _global_labels(workspace: Workspace) -> list[str]:
    """``[scene] global`` entries, then docs with ``global: true``, as node labels."""
    from cuedeck.layout import CONFIG_PATH

    documents = workspace.documents
    labels: list[str] = []
    for raw in workspace.config.scene.global_docs:
        path, _, anchor = raw.strip().partition("#")
        path = path.removeprefix("./")
        document = documents.get(path)
        if document is None:
            matches = did_you_mean(path, documents)
            raise FileNotFound(
                f"global doc {path} in [scene] global does not exist",
                path=CONFIG_PATH,
                field="scene.global",
                suggestion=suggestion_text(matches),
                help="fix or remove the entry in .cuedeck/config.toml",
            )
        if anchor:
            heading = document.find_heading(anchor)
            if heading is None:
                raise FileNotFound(
                    f"global doc {path} has no heading {anchor!r}",
                    path=CONFIG_PATH,
                    field="scene.global",
                    suggestion=suggestion_text(did_you_mean(anchor, document.anchors)),
                )
            labels.append(f"{path}#{heading.slug}")
        else:
            labels.append(path)
    for path, document in documents.items():
        if document.frontmatter.get("global") is True:
            labels.append(path)
    return list(dict.fromkeys(labels))


def gather_entries(workspace: Workspace, card: Document) -> list[Entry]:
    """Every candidate, merged so a file is whole once or as disjoint sections."""
    graph = workspace.graph
    cycle = graph.find_cycle(card.path)
    if cycle is not None:
        raise CycleDetected(
            cycle,
            path=card.path,
            help="a scene follows references until it has everything; break the loop",
        )
    depths = graph.depths(card.path)
    order = _discovery(graph, card.path, depths)
    found: list[Entry] = []
    for label, depth in depths.items():
        path, anchor = graph.split_key(label)
        found.append(
            Entry(path, anchor, depth, (0, order[label]), graph.section_lines(path, anchor))
        )
    included = {graph.split_key(label)[0] for label in depths}
    hops = workspace.config.scene.link_depth
    for position, (label, hop) in enumerate(_see_also(graph, list(depths), included, hops)):
        path, anchor = graph.split_key(label)
        lines = graph.section_lines(path, anchor)
        found.append(Entry(path, anchor, hop, (2, position), lines, linked=True))
    for position, label in enumerate(_global_labels(workspace)):
        path, anchor = graph.split_key(label)
        found.append(Entry(path, anchor, -1, (1, position), graph.section_lines(path, anchor)))
    by_path: dict[str, list[Entry]] = {}
    for entry in found:
        by_path.setdefault(entry.path, []).append(entry)
    merged: list[Entry] = []
    for entries in by_path.values():
        whole = [e for e in entries if e.anchor is None]
        if whole:
            keep = whole[0]
            for other in entries:
                if other is not keep:
                    keep.absorb(other)
            merged.append(keep)
            continue
        # Sections nest or are disjoint: keep the outermost, absorbing what they contain.
        entries.sort(key=lambda e: (e.lines[0], -e.lines[1]))
        outer: list[Entry] = []
        for entry in entries:
            if outer and entry.lines[1] <= outer[-1].lines[1]:
                outer[-1].absorb(entry)
            else:
                outer.append(entry)
        merged.extend(outer)
    return _order(graph, merged)


def covers(entries: Sequence[Entry], path: str, line: int | None) -> bool:
    """Whether the candidates hold line ``line`` of ``path`` (a whole file holds every
    line; a section only its own, so a section's scene says nothing of the rest)."""
    for entry in entries:
        if entry.path != path:
            continue
        if entry.anchor is None or entry.depth == 0:
            return True
        if line is not None and entry.lines[0] <= line <= entry.lines[1]:
            return True
    return False


def _order(graph: ReferenceGraph, entries: list[Entry]) -> list[Entry]:
    """Priority levels, highest first; within a level referrers before what they refer to
    (Kahn's algorithm), ties broken by discovery order."""
    owner: dict[str, int] = {}
    for number, entry in enumerate(entries):
        owner[graph.key(entry.path, entry.anchor) if entry.anchor else entry.path] = number
    sections: dict[str, list[tuple[tuple[int, int], int]]] = {}
    for number, entry in enumerate(entries):
        sections.setdefault(entry.path, []).append((entry.lines, number))

    def item_of(label: str) -> int | None:
        if label in owner:
            return owner[label]
        path, anchor = graph.split_key(label)
        first, last = graph.section_lines(path, anchor)
        for (low, high), number in sections.get(path, []):
            if low <= first and last <= high:
                return number
        return None

    edges: dict[int, set[int]] = {}
    for source, target in graph.graph.edge_list():
        a, b = item_of(graph.graph[source]), item_of(graph.graph[target])
        if (
            a is not None
            and b is not None
            and a != b
            and entries[a].priority == entries[b].priority
        ):
            edges.setdefault(a, set()).add(b)
    ordered: list[Entry] = []
    levels = sorted({e.priority for e in entries}, reverse=True)
    for level in levels:
        members = [n for n, e in enumerate(entries) if e.priority == level]
        incoming = {n: 0 for n in members}
        for a in members:
            for b in edges.get(a, ()):
                incoming[b] += 1
        ready = [(entries[n].rank, n) for n in members if incoming[n] == 0]
        heapq.heapify(ready)
        done: set[int] = set()
        while len(done) < len(members):
            if not ready:
                # Merging sections into whole files can close a loop: go on by rank.
                rest = min((entries[n].rank, n) for n in members if n not in done)
                heapq.heappush(ready, rest)
            _, number = heapq.heappop(ready)
            if number in done:
                continue
            done.add(number)
            ordered.append(entries[number])
            for b in sorted(edges.get(number, ())):
                incoming[b] -= 1
                if incoming[b] == 0 and b not in done:
                    heapq.heappush(ready, (entries[b].rank, b))
    return ordered


# --- rendering ---------------------------------------------------------------------------
