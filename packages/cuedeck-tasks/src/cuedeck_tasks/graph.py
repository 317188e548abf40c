"""The dependency graph of cards, built with rustworkx from their ``depends_on`` lists.

An edge ``card -> dependency`` means the card waits for the dependency. Ids named in
``depends_on`` that have no card file are nodes too (marked missing), so validation can
report them and a new card never takes the id of a dangling reference.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import rustworkx as rx

from cuedeck.errors import did_you_mean, suggestion_text
from cuedeck.layout import card_path
from cuedeck_tasks.cards import PRIORITIES
from cuedeck_tasks.errors import CircularDependency, DependencyNotFound

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from cuedeck_tasks.cards import Card

ARROW = "→"
#: Statuses a card may have and still be "ready" (all its dependencies done).
READY_STATUSES = ("todo", "active")
EXPORT_FORMATS = ("mermaid", "dot", "json")


class TaskGraph:
    """Cards and their dependencies; queries, validation, the ready list and exports."""

    def __init__(self, cards: Mapping[str, Card]) -> None:
        self.cards = cards
        self.graph: rx.PyDiGraph = rx.PyDiGraph(multigraph=False)
        ids = sorted(cards)
        nodes = self._nodes = dict(zip(ids, self.graph.add_nodes_from(ids), strict=True))
        edges: list[tuple[int, int]] = []
        self._self_loops: list[str] = []
        for card_id in ids:
            source = nodes[card_id]
            for dependency in cards[card_id].depends_on:
                target = nodes.get(dependency)
                if target is None:
                    target = nodes[dependency] = self.graph.add_node(dependency)
                if target == source:
                    self._self_loops.append(card_id)
                edges.append((source, target))
        self.graph.add_edges_from_no_data(edges)  # repeated edges collapse (not a multigraph)

    def _node(self, card_id: str) -> int:
        index = self._nodes.get(card_id)
        if index is None:
            index = self._nodes[card_id] = self.graph.add_node(card_id)
        return index

    def __contains__(self, card_id: object) -> bool:
        return card_id in self._nodes

    # -- queries ---------------------------------------------------------------------------

    def dependencies(self, card_id: str) -> list[str]:
        """Ids ``card_id`` depends on directly, in its ``depends_on`` order."""
        card = self.cards.get(card_id)
        return list(dict.fromkeys(card.depends_on)) if card else []

    def dependents(self, card_id: str) -> list[str]:
        """Ids of the cards that depend on ``card_id`` directly, sorted."""
        index = self._nodes.get(card_id)
        if index is None:
            return []
        return sorted(self.graph[i] for i in self.graph.predecessor_indices(index))

    def missing(self) -> list[tuple[str, str]]:
        """``(card, dependency)`` pairs whose dependency has no card file."""
        cards = self.cards
        return [
            (card_id, dependency)
            for card_id in sorted(cards)
            for dependency in dict.fromkeys(cards[card_id].depends_on)
            if dependency not in cards
        ]

    def path(self, source: str, target: str) -> list[str] | None:
        """The shortest chain of dependencies from ``source`` to ``target``, or None."""
        start, end = self._nodes.get(source), self._nodes.get(target)
        if start is None or end is None:
            return None
        if start == end:
            return [source]
        found = rx.digraph_dijkstra_shortest_paths(self.graph, start, target=end)
        if end not in found:
            return None
        return [self.graph[i] for i in found[end]]

    # -- validation ------------------------------------------------------------------------

    def cycle_through(self, card_id: str) -> list[str] | None:
        """The shortest cycle ``card_id → ... → card_id``, or None."""
        best: list[str] | None = None
        for dependency in self.dependencies(card_id):
            if dependency == card_id:
                return [card_id, card_id]
            chain = self.path(dependency, card_id)
            if chain is not None and (best is None or len(chain) + 1 < len(best)):
                best = [card_id, *chain]
        return best

    def cycles(self) -> list[list[str]]:
        """One cycle per group of cards that depend on each other, each closed (a → b → a)."""
        found = [[card_id, card_id] for card_id in dict.fromkeys(self._self_loops)]
        for component in rx.strongly_connected_components(self.graph):
            if len(component) == 1:
                continue  # a self-loop at most, found above
            sub = self.graph.subgraph(sorted(component))
            edges = rx.digraph_find_cycle(sub, 0)
            ring = [sub[source] for source, _target in edges]
            found.append(_closed(ring))
        return sorted(found)

    def would_cycle(self, card_id: str, dependencies: Iterable[str]) -> list[str] | None:
        """The cycle that making ``card_id`` depend on ``dependencies`` would close, or None."""
        for dependency in dependencies:
            if dependency == card_id:
                return [card_id, card_id]
            chain = self.path(dependency, card_id)
            if chain is not None:
                return [card_id, *chain]
        return None

    def check_exist(
        self, dependencies: Iterable[str], *, card_id: str | None, writing: str | None = None
    ) -> None:
        """DependencyNotFound (1001) for the first of ``dependencies`` with no card.

        ``card_id`` is the card that would depend on them (None for a new card) and
        ``writing`` the path of the file being changed, for the error report.
        """
        for dependency in dict.fromkeys(dependencies):
            if dependency not in self.cards:
                matches = did_you_mean(dependency, self.cards)
                who = card_id or "the new card"
                raise DependencyNotFound(
                    f"card {dependency} does not exist, so {who} cannot depend on it",
                    path=writing,
                    field="depends_on",
                    id=dependency,
                    card=card_id,
                    candidates=matches,
                    suggestion=suggestion_text(matches),
                    help="list the cards with `cue card list`",
                )

    def check_new_dependencies(
        self, card_id: str, added: Iterable[str], *, writing: str | None = None
    ) -> None:
        """DependencyNotFound or CircularDependency for dependencies about to be added."""
        wanted = list(dict.fromkeys(added))
        self.check_exist(wanted, card_id=card_id, writing=writing)
        cycle = self.would_cycle(card_id, wanted)
        if cycle is not None:
            through = f" through {', '.join(cycle[2:-1])}" if len(cycle) > 3 else ""
            raise CircularDependency(
                cycle,
                arrow=ARROW,
                path=writing,
                field="depends_on",
                card=card_id,
                suggestion=f"{cycle[1]} already depends on {card_id}{through}; "
                f"drop the dependency of {card_id} on {cycle[1]}",
            )

    def ready(self) -> list[Card]:
        """Todo and active cards whose dependencies all exist and are done, most urgent first."""
        ready = [
            card
            for card in self.cards.values()
            if card.status in READY_STATUSES
            and all(
                dep in self.cards and self.cards[dep].status == "done" for dep in card.depends_on
            )
        ]
        return sorted(ready, key=urgency)

    # -- export ----------------------------------------------------------------------------

    def export(self, fmt: str) -> str:
        """The graph as ``mermaid``, ``dot`` or ``json`` text.

        Arrows of mermaid and dot point from a dependency to the card that waits for it
        (the order work flows in); json lists ``{"card", "depends_on"}`` edges.
        """
        if fmt == "mermaid":
            return self.to_mermaid()
        if fmt == "dot":
            return self.to_dot()
        if fmt == "json":
            return json.dumps(self.to_json(), indent=2, ensure_ascii=False) + "\n"
        raise ValueError(f"unknown format {fmt!r}")

    def _ordered_ids(self) -> list[str]:
        return sorted(self._nodes)

    def _edges(self) -> list[tuple[str, str]]:
        return [
            (card_id, dep) for card_id in sorted(self.cards) for dep in self.dependencies(card_id)
        ]

    def to_json(self) -> dict[str, Any]:
        """``{"nodes": [...], "edges": [...]}`` with every card and missing id."""
        nodes = []
        for card_id in self._ordered_ids():
            card = self.cards.get(card_id)
            nodes.append(
                {
                    "id": card_id,
                    "title": card.title if card else None,
                    "status": card.status if card else None,
                    "priority": card.priority if card else None,
                    "path": card_path(card_id),
                    "missing": card is None,
                }
            )
        edges = [{"card": card, "depends_on": dep} for card, dep in self._edges()]
        return {"nodes": nodes, "edges": edges}

    def to_mermaid(self) -> str:
        """A mermaid flowchart, one class per status."""
        lines = ["graph TD"]
        for card_id in self._ordered_ids():
            card = self.cards.get(card_id)
            label = f"{card_id} · {card.title}" if card else f"{card_id} (missing)"
            status = card.status if card and card.status in _COLOURS else "missing"
            lines.append(f'    {card_id}["{_mermaid_text(label)}"]:::{status}')
        lines.extend(f"    {dep} --> {card}" for card, dep in self._edges())
        lines.extend(
            f"    classDef {status} fill:{fill},color:{text}"
            for status, (fill, text) in _COLOURS.items()
        )
        return "\n".join(lines) + "\n"

    def to_dot(self) -> str:
        """A Graphviz digraph, filled by status."""
        lines = [
            "digraph cards {",
            "  rankdir=LR;",
            '  node [shape=box, style="rounded,filled", fontname="Helvetica"];',
        ]
        for card_id in self._ordered_ids():
            card = self.cards.get(card_id)
            label = f"{card_id}\n{card.title}" if card else f"{card_id}\n(missing)"
            status = card.status if card and card.status in _COLOURS else "missing"
            fill, text = _COLOURS[status]
            lines.append(
                f'  "{card_id}" [label="{_dot_text(label)}", fillcolor="{fill}", '
                f'fontcolor="{text}"{", style=dashed" if card is None else ""}];'
            )
        lines.extend(f'  "{dep}" -> "{card}";' for card, dep in self._edges())
        lines.append("}")
        return "\n".join(lines) + "\n"


_COLOURS = {
    "todo": ("#eceff1", "#263238"),
    "active": ("#2196F3", "#ffffff"),
    "done": ("#4CAF50", "#ffffff"),
    "archived": ("#9e9e9e", "#ffffff"),
    "missing": ("#ffffff", "#b71c1c"),
}


def urgency(card: Card) -> tuple[int, str, str]:
    """Sort key: critical before low, then oldest first, then id."""
    rank = PRIORITIES.index(card.priority) if card.priority in PRIORITIES else 1
    return (-rank, card.created or "", card.id)


def _closed(ring: list[str]) -> list[str]:
    """A cycle's ids rotated to start at the smallest, with the first repeated at the end."""
    start = ring.index(min(ring))
    rotated = ring[start:] + ring[:start]
    return [*rotated, rotated[0]]


def _mermaid_text(text: str) -> str:
    # Mermaid reads "#name;" as an entity, so '#' itself must be one too.
    flat = " ".join(text.split())
    return (
        flat.replace("#", "#35;").replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;")
    )


def _dot_text(text: str) -> str:
    first, _, rest = text.partition("\n")
    parts = [" ".join(first.split()), " ".join(rest.split())]
    escaped = [part.replace("\\", "\\\\").replace('"', '\\"') for part in parts]
    return "\\n".join(part for part in escaped if part)
