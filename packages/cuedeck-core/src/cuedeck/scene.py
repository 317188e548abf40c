"""Scenes: the active card and everything it references, packed into a token budget.

:func:`build_scene` resolves the active card, walks the reference graph from it (a
reference with an anchor pulls in that section only), fails on a reference cycle
(1002), orders the candidates (the card 100, direct references 50, indirect ones 25,
global docs 10; references before what they refer to within a level), masks them,
lets the configured pruner fit them to the budget and renders the scene as markdown,
XML or JSON with a header and a manifest. The rendered text never exceeds the budget
by the workspace's token counter. The CLI (``cue scene``, ``cue watch``), the
``build_scene`` tool and the MCP resource ``cuedeck://scene`` all call it.
"""

from __future__ import annotations

import functools
import hashlib
import heapq
import json
import re
from collections import deque
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

import attrs
from typing_extensions import TypedDict  # pydantic needs it for TypedDicts on 3.11

from cuedeck.errors import (
    CueError,
    CycleDetected,
    FileNotFound,
    InvalidInput,
    StaleCache,
    TokenLimitExceeded,
    did_you_mean,
    suggestion_text,
)
from cuedeck.layout import CARD_ID_PATTERN

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from pathlib import Path

    import pydantic

    from cuedeck.graph import ReferenceGraph
    from cuedeck.hookspecs import Pruner
    from cuedeck.models import Document, Placement, Problem, SceneItem
    from cuedeck.workspace import Workspace
else:
    # The tool's annotations name pydantic; ``cue --help`` imports this module without
    # ever evaluating them, so pydantic loads on first use.
    from cuedeck.tools import lazy_pydantic as pydantic

Format = Literal["markdown", "xml", "json"]
FORMATS: tuple[str, ...] = ("markdown", "xml", "json")
PRIORITIES = {"card": 100, "direct": 50, "indirect": 25, "global": 10}
#: Hex digits of each input's sha256 written into the scene (the manifest is part of the
#: budget; 48 bits are plenty to notice a changed file). ``--json`` has them in full.
HASH_CHARS = 12
MANIFEST_VERSION = 1
_DIGIT = re.compile(r"\d")
#: Most scenes rendered and counted whole while fitting one (each costs a full count).
REAL_RENDERS = 5


# --- results -----------------------------------------------------------------------------


class Candidate(TypedDict):
    """One candidate of a scene, as the manifest records it."""

    path: str
    anchor: str | None
    role: str
    priority: int
    depth: int
    placed: str
    tokens: int
    full_tokens: int
    reason: str | None
    sha256: str


class SceneManifest(TypedDict):
    """What a scene holds and why: the shape of ``cue scene --json``."""

    version: int
    card: str
    card_path: str
    title: str
    format: str
    pruner: str
    counter: str
    exact: bool
    token_limit: int
    tokens: int
    truncated: bool
    candidates: list[Candidate]
    inputs: dict[str, str]
    secrets: dict[str, int]


class SceneReply(TypedDict):
    """What the ``build_scene`` tool returns: the scene's text and its manifest."""

    text: str
    manifest: SceneManifest


@attrs.frozen
class Scene:
    """A built scene: its text, manifest and the pruner's placements."""

    text: str
    manifest: SceneManifest
    placements: tuple[Placement, ...]

    @property
    def card(self) -> str:
        """The active card's id."""
        return self.manifest["card"]

    @property
    def tokens(self) -> int:
        """Tokens of :attr:`text` by the workspace's counter."""
        return self.manifest["tokens"]

    def summary(self) -> str:
        """One line: card, tokens of budget, and what was kept, outlined and dropped."""
        counts: dict[str, int] = {}
        for candidate in self.manifest["candidates"]:
            counts[candidate["placed"]] = counts.get(candidate["placed"], 0) + 1
        kept = ", ".join(f"{n} {mode}" for mode, n in counts.items())
        secrets = sum(self.manifest["secrets"].values())
        masked = f", {secrets} secret{'s' * (secrets != 1)} masked" if secrets else ""
        return (
            f"card {self.card}: {self.tokens}/{self.manifest['token_limit']} tokens "
            f"({self.manifest['counter']}), {kept}{masked}"
        )


# --- the active card ---------------------------------------------------------------------


def find_card(workspace: Workspace, card_id: str | None = None) -> Document:
    """The card a scene is for: ``card_id``; else the activated card; else the most
    recently updated card with ``status: active``."""
    from cuedeck.parsing import CARD_ID, CARDS_DIR
    from cuedeck.state import active_card

    documents = workspace.documents
    cards = {p: d for p, d in documents.items() if d.kind == "card"}
    if card_id is not None:
        if not CARD_ID.match(card_id):
            raise InvalidInput(
                f"{card_id!r} is not a card id (6 characters a-z, 0-9)", field="card_id"
            )
        path = f"{CARDS_DIR}/{card_id}.md"
        if path in cards:
            return cards[path]
        ids = [p.rsplit("/", 1)[-1].removesuffix(".md") for p in cards]
        matches = did_you_mean(card_id, ids)
        raise FileNotFound(
            f"card {card_id} does not exist",
            path=path,
            field="card_id",
            suggestion=suggestion_text(matches),
            candidates=matches,
        )
    stored = active_card(workspace.root)
    if stored is not None:
        path = f"{CARDS_DIR}/{stored}.md"
        if path in cards:
            return cards[path]
        raise FileNotFound(
            f"the active card {stored} (set by `cue card activate`) no longer exists",
            path=path,
            help="activate another card with `cue card activate ID`, or pass a card id",
        )
    active = [d for d in cards.values() if str(d.frontmatter.get("status", "")).lower() == "active"]
    if active:
        return max(active, key=lambda d: (_updated(d), d.path))
    raise FileNotFound(
        "no active card: none was given, none is activated, and no card has status: active",
        path=CARDS_DIR,
        help="pass a card id (`cue scene ID`), run `cue card activate ID`, "
        "or set `status: active` in a card's frontmatter",
    )


def _updated(document: Document) -> float:
    """The card's ``updated`` (else ``created``) time as a timestamp; oldest if unknown."""
    for key in ("updated", "created"):
        value = document.frontmatter.get(key)
        if value is None:
            continue
        try:
            when = datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
        except ValueError:
            continue
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        return when.timestamp()
    return float("-inf")


# --- candidates --------------------------------------------------------------------------


@attrs.define
class _Entry:
    """A graph node (or global doc) on its way to becoming a scene item."""

    path: str
    anchor: str | None  # heading slug
    depth: int  # -1: a global doc nothing refers to
    rank: tuple[int, int]  # (0, order found) for references, (1, order listed) for globals
    lines: tuple[int, int]

    @property
    def role(self) -> str:
        if self.depth < 0:
            return "global"
        return "card" if self.depth == 0 else "direct" if self.depth == 1 else "indirect"

    @property
    def priority(self) -> int:
        return PRIORITIES[self.role]

    def absorb(self, other: _Entry) -> None:
        """Take over ``other``'s better priority and earlier rank (it is inside this one)."""
        if other.priority > self.priority or (
            other.priority == self.priority and 0 <= other.depth < self.depth
        ):
            self.depth = other.depth
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


def _global_labels(workspace: Workspace) -> list[str]:
    """``[scene] global`` entries, then docs with ``global: true``, as node labels."""
    from cuedeck.config import CONFIG_PATH

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


def _entries(workspace: Workspace, card: Document) -> list[_Entry]:
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
    found: list[_Entry] = []
    for label, depth in depths.items():
        path, anchor = graph.split_key(label)
        found.append(
            _Entry(path, anchor, depth, (0, order[label]), graph.section_lines(path, anchor))
        )
    for position, label in enumerate(_global_labels(workspace)):
        path, anchor = graph.split_key(label)
        found.append(_Entry(path, anchor, -1, (1, position), graph.section_lines(path, anchor)))
    by_path: dict[str, list[_Entry]] = {}
    for entry in found:
        by_path.setdefault(entry.path, []).append(entry)
    merged: list[_Entry] = []
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
        outer: list[_Entry] = []
        for entry in entries:
            if outer and entry.lines[1] <= outer[-1].lines[1]:
                outer[-1].absorb(entry)
            else:
                outer.append(entry)
        merged.extend(outer)
    return _order(graph, merged)


def _order(graph: ReferenceGraph, entries: list[_Entry]) -> list[_Entry]:
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
    ordered: list[_Entry] = []
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


@attrs.frozen
class _Header:
    card: str
    card_path: str
    title: str
    token_limit: int
    counter: str
    exact: bool
    pruner: str
    format: str
    config: tuple[str, str] | None  # (path, sha256) of config.toml when it exists


def _short(digest: str) -> str:
    return digest[:HASH_CHARS]


def _note(placement: Placement) -> str:
    role = "active card" if placement.item.role == "card" else placement.item.role
    return f"{role}; {placement.reason}" if placement.reason else role


def _tokens_cell(placement: Placement) -> str:
    if placement.tokens == placement.item.tokens:
        return str(placement.tokens)
    return f"{placement.tokens}/{placement.item.tokens}"


def _truncation(placements: Sequence[Placement], limit: int) -> str | None:
    dropped = sum(p.mode == "dropped" for p in placements)
    outlined = sum(p.mode == "outline" for p in placements)
    if not dropped and not outlined:
        return None
    parts = []
    if outlined:
        parts.append(f"{outlined} outlined")
    if dropped:
        parts.append(f"{dropped} dropped")
    return (
        f"Context truncated: {' and '.join(parts)} of {len(placements)} candidates "
        f"to fit the {limit}-token budget (see the manifest)."
    )


def _secret_counts(text: str, placeholders: Mapping[str, str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for placeholder, rule in placeholders.items():
        found = text.count(placeholder)
        if found:
            counts[rule] = counts.get(rule, 0) + found
    return dict(sorted(counts.items()))


class _Markdown:
    """Markdown: a header, one fenced block per document, a manifest table."""

    name = "markdown"

    @staticmethod
    def escape(text: str) -> str:
        return text

    @staticmethod
    @functools.lru_cache(maxsize=1024)
    def _fence(text: str) -> str:
        """A backtick fence longer than any run of backticks in ``text``."""
        if "```" not in text:
            return "```"
        return "`" * (max(len(run) for run in _BACKTICKS.findall(text)) + 1)

    def block(self, placement: Placement) -> str:
        item = placement.item
        label = item.key
        if placement.mode == "outline":
            label += f" · outline (the full text has {item.tokens} tokens)"
        elif placement.mode == "section":
            label += " · section"
        fence = self._fence(placement.text)
        return f"## {label}\n\n{fence}markdown\n{placement.text}\n{fence}\n"

    def parts(
        self,
        header: _Header,
        placements: Sequence[Placement],
        used: int,
        secrets: Mapping[str, int],
        *,
        blocks: bool = True,
    ) -> list[str]:
        """The scene's lines and blocks; joined with newlines they are the scene."""
        out = [
            f"# Scene: {header.title} ({header.card})",
            "",
            f"> card `{header.card_path}` · budget {header.token_limit} tokens · used {used} · "
            f"counter {header.counter} · pruner {header.pruner}",
            "",
        ]
        if blocks:
            out.extend(self.block(p) for p in placements if p.mode != "dropped")
        if marker := _truncation(placements, header.token_limit):
            out.append(f"> [!WARNING]\n> {marker}\n")
        out.append("## Manifest\n")
        out.append("| priority | tokens | placed | candidate | sha256 | note |")
        out.append("| --- | --- | --- | --- | --- | --- |")
        for p in placements:
            cells = (
                str(p.item.priority),
                _tokens_cell(p),
                p.mode,
                p.item.key.replace("|", "\\|"),
                _short(p.item.sha256),
                _note(p).replace("|", "\\|"),
            )
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
        if header.config is not None:
            out.append(f"Config: `{header.config[0]}` {_short(header.config[1])}")
        masked = ", ".join(f"{rule} {n}" for rule, n in secrets.items()) or "none"
        out.append(f"Secrets masked: {masked}")
        return out


_BACKTICKS = re.compile(r"`{3,}")


class _Xml:
    """XML: one ``<document>`` per document (CDATA content) and a ``<manifest>``."""

    name = "xml"

    @staticmethod
    def escape(text: str) -> str:
        return text.replace("]]>", "]]]]><![CDATA[>")

    def block(self, placement: Placement) -> str:
        item = placement.item
        attributes = _attributes(
            path=item.path,
            anchor=item.anchor,
            role=item.role,
            priority=item.priority,
            placed=placement.mode,
            tokens=placement.tokens,
        )
        return f"<document {attributes}><![CDATA[\n{self.escape(placement.text)}\n]]></document>"

    def parts(
        self,
        header: _Header,
        placements: Sequence[Placement],
        used: int,
        secrets: Mapping[str, int],
        *,
        blocks: bool = True,
    ) -> list[str]:
        """The scene's lines and blocks; joined with newlines they are the scene."""
        attributes = _attributes(
            card=header.card,
            path=header.card_path,
            title=header.title,
            budget=header.token_limit,
            used=used,
            counter=header.counter,
            pruner=header.pruner,
        )
        out = [f"<scene {attributes}>"]
        if blocks:
            out.extend(self.block(p) for p in placements if p.mode != "dropped")
        if marker := _truncation(placements, header.token_limit):
            out.append(f"<truncated>{_xml_text(marker)}</truncated>")
        out.append("<manifest>")
        for p in placements:
            candidate = _attributes(
                priority=p.item.priority,
                tokens=p.tokens,
                full=p.item.tokens,
                placed=p.mode,
                path=p.item.path,
                anchor=p.item.anchor,
                sha256=_short(p.item.sha256),
                note=_note(p),
            )
            out.append(f"<candidate {candidate}/>")
        if header.config is not None:
            out.append(
                f"<config {_attributes(path=header.config[0], sha256=_short(header.config[1]))}/>"
            )
        for rule, count in secrets.items():
            out.append(f"<secrets {_attributes(rule=rule, count=count)}/>")
        out.append("</manifest>")
        out.append("</scene>")
        return out


def _xml_text(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _attributes(**values: Any) -> str:
    parts = []
    for key, value in values.items():
        if value is None:
            continue
        parts.append(f'{key}="{_xml_text(str(value)).replace(chr(34), "&quot;")}"')
    return " ".join(parts)


class _Json:
    """JSON: the header fields, the documents with their text, and the manifest."""

    name = "json"

    @staticmethod
    def escape(text: str) -> str:
        return json.dumps(text, ensure_ascii=False)

    @staticmethod
    def document(placement: Placement) -> dict[str, Any]:
        item = placement.item
        return {
            "path": item.path,
            "anchor": item.anchor,
            "role": item.role,
            "priority": item.priority,
            "placed": placement.mode,
            "tokens": placement.tokens,
            "text": placement.text,
        }

    def block(self, placement: Placement) -> str:
        # As it appears inside the "documents" list (indent=1, one level in).
        return json.dumps([self.document(placement)], ensure_ascii=False, indent=1)

    def parts(
        self,
        header: _Header,
        placements: Sequence[Placement],
        used: int,
        secrets: Mapping[str, int],
        *,
        blocks: bool = True,
    ) -> list[str]:
        """The scene's lines and blocks; joined with newlines they are the scene."""
        candidates = [
            {
                "priority": p.item.priority,
                "tokens": p.tokens,
                "full": p.item.tokens,
                "placed": p.mode,
                "path": p.item.path,
                "anchor": p.item.anchor,
                "sha256": _short(p.item.sha256),
                "note": _note(p),
            }
            for p in placements
        ]
        manifest: dict[str, Any] = {"candidates": candidates}
        if header.config is not None:
            manifest["config"] = {"path": header.config[0], "sha256": _short(header.config[1])}
        manifest["secrets"] = dict(secrets)
        value = {
            "scene": {
                "card": header.card,
                "path": header.card_path,
                "title": header.title,
                "budget": header.token_limit,
                "used": used,
                "counter": header.counter,
                "pruner": header.pruner,
            },
            "documents": [self.document(p) for p in placements if p.mode != "dropped"]
            if blocks
            else [],
            "truncated": _truncation(placements, header.token_limit),
            "manifest": manifest,
        }
        return [json.dumps(value, ensure_ascii=False, indent=1)]


def _render(
    renderer: _Markdown | _Xml | _Json,
    header: _Header,
    placements: Sequence[Placement],
    used: int,
    secrets: Mapping[str, int],
) -> str:
    return "\n".join(renderer.parts(header, placements, used, secrets)) + "\n"


_RENDERERS: dict[str, _Markdown | _Xml | _Json] = {
    "markdown": _Markdown(),
    "xml": _Xml(),
    "json": _Json(),
}


# --- building ----------------------------------------------------------------------------


def build_scene(
    workspace: Workspace,
    card_id: str | None = None,
    token_limit: int | None = None,
    *,
    format: str | None = None,
    pruner: str | None = None,
) -> Scene:
    """The scene of ``card_id`` (default: the active card), fitted to ``token_limit``.

    Raises CycleDetected (1002) when a reference loop is reachable from the card,
    TokenLimitExceeded (1003) when the card alone does not fit, FileNotFound (1001) for
    a missing card or global doc, InvalidInput (1004) for bad arguments.
    """
    from cuedeck.config import CONFIG_PATH
    from cuedeck.models import Placement, SceneItem
    from cuedeck.parsing import split_lines
    from cuedeck.plugins import get_pruners
    from cuedeck.pruning import full_mode

    settings = workspace.config.scene
    limit = settings.token_limit if token_limit is None else token_limit
    if limit < 1:
        raise InvalidInput(f"token limit must be positive, not {limit}", field="token_limit")
    format_name = format or settings.format
    if format_name not in _RENDERERS:
        raise InvalidInput(
            f"unknown scene format {format_name!r} (one of {', '.join(FORMATS)})", field="format"
        )
    renderer = _RENDERERS[format_name]
    pruner_name = pruner or settings.pruner
    pruners = get_pruners(workspace.plugins)
    if pruner_name not in pruners:
        if pruner is None:
            raise workspace.config.unavailable("scene.pruner", pruner_name, list(pruners))
        raise InvalidInput(
            f"unknown pruner {pruner_name!r} (available: {', '.join(sorted(pruners))})",
            field="pruner",
        )
    workspace.refresh()
    card = find_card(workspace, card_id)
    entries = _entries(workspace, card)

    counter = workspace.token_counter
    documents = workspace.documents
    session = workspace.mask_session()
    files: dict[str, tuple[str, str]] = {}  # path -> (text, sha256)
    raw_items = []
    for entry in entries:
        if entry.path not in files:
            snapshot = workspace.snapshot(entry.path)  # what the index holds, and only that
            files[entry.path] = (snapshot.text, snapshot.sha256)
        text, digest = files[entry.path]
        if entry.anchor is not None:
            first, last = entry.lines
            text = "\n".join(split_lines(text)[first - 1 : last])
        text = text.rstrip()
        masked = session.mask(text, path=entry.path)
        raw_items.append((entry, masked, digest, masked is text))

    def cost(item: SceneItem, mode: str, text: str) -> int:
        return counter.count(renderer.block(Placement(item, mode, text, 0)))

    items: list[SceneItem] = []
    wrapper = 0
    for entry, text, digest, unmasked in raw_items:
        document = documents[entry.path]
        item = SceneItem(
            entry.path,
            entry.anchor,
            entry.priority,
            entry.depth,
            text,
            0,
            digest,
            role=entry.role,
            title=document.title,
        )
        mode = full_mode(item)
        if unmasked and mode == "whole" and renderer.name != "json":
            # The index counted this very text: add the framing instead of recounting.
            tokens = document.tokens + cost(item, mode, "")
        else:
            tokens = cost(item, mode, text)
        items.append(attrs.evolve(item, tokens=tokens))
        wrapper = max(wrapper, cost(item, "outline", ""))

    def count(text: str) -> int:
        # What an outline costs as a placed document: the longest framing plus its text.
        return counter.count(renderer.escape(text)) + wrapper

    config_path = workspace.root / CONFIG_PATH
    config = (
        (CONFIG_PATH, hashlib.sha256(config_path.read_bytes()).hexdigest())
        if config_path.is_file()
        else None
    )
    header = _Header(
        card=card.path.rsplit("/", 1)[-1].removesuffix(".md"),
        card_path=card.path,
        title=card.title,
        token_limit=limit,
        counter=counter.name,
        exact=counter.exact,
        pruner=pruner_name,
        format=format_name,
        config=config,
    )
    placements, text, used = _fit(
        items,
        limit,
        pruners[pruner_name],
        pruner_name,
        count,
        renderer,
        header,
        session.placeholders,
        counter.count,
    )
    secrets = _secret_counts(text, session.placeholders)
    inputs = {path: digest for path, (_, digest) in files.items()}
    if config is not None:
        inputs[config[0]] = config[1]
    manifest: SceneManifest = {
        "version": MANIFEST_VERSION,
        "card": header.card,
        "card_path": header.card_path,
        "title": header.title,
        "format": format_name,
        "pruner": pruner_name,
        "counter": counter.name,
        "exact": counter.exact,
        "token_limit": limit,
        "tokens": used,
        "truncated": any(p.mode in ("outline", "dropped") for p in placements),
        "candidates": [
            {
                "path": p.item.path,
                "anchor": p.item.anchor,
                "role": p.item.role,
                "priority": p.item.priority,
                "depth": p.item.depth,
                "placed": p.mode,
                "tokens": p.tokens,
                "full_tokens": p.item.tokens,
                "reason": p.reason,
                "sha256": p.item.sha256,
            }
            for p in placements
        ],
        "inputs": dict(sorted(inputs.items())),
        "secrets": secrets,
    }
    return Scene(text=text, manifest=manifest, placements=tuple(placements))


def _fit(
    items: list[SceneItem],
    limit: int,
    pruner: Pruner,
    pruner_name: str,
    count: Callable[[str], int],
    renderer: _Markdown | _Xml | _Json,
    header: _Header,
    placeholders: Mapping[str, str],
    count_text: Callable[[str], int],
) -> tuple[list[Placement], str, int]:
    """The fullest placements whose rendered scene does not exceed ``limit`` tokens.

    A pruner budget counts only the documents; the header and manifest around them
    change with the placements. So the budget is found by binary search, first on a
    prediction (the scene without its documents, counted, plus each placement's own
    cost), then checked and corrected on the real count of the whole rendered text.
    """
    from cuedeck.models import Placement
    from cuedeck.pruning import full_mode

    def secrets_of(placements: Sequence[Placement]) -> dict[str, int]:
        return _secret_counts("".join(p.text for p in placements), placeholders)

    part_tokens: dict[str, int] = {}

    def shell(placements: list[Placement]) -> tuple[str, int]:
        """The scene without documents, and the sum of its lines' counts (each counted once:
        most manifest rows repeat from one budget to the next)."""
        parts = renderer.parts(header, placements, limit, secrets_of(placements), blocks=False)
        total = 0
        for part in parts:
            # Rows differ from one budget to the next mostly in their numbers ("12 left");
            # a number costs about the same whatever its digits.
            key = _DIGIT.sub("0", part)
            if (tokens := part_tokens.get(key)) is None:
                tokens = part_tokens[key] = count_text(part + "\n")
            total += tokens
        return "\n".join(parts) + "\n", total

    # Lines counted apart add up to a little more than the text counted whole: measure
    # the difference once and take it off every prediction.
    reference, summed = shell([Placement(item, "dropped", "", 0, "over budget") for item in items])
    joining = count_text(reference) - summed

    def predict(placements: list[Placement]) -> int:
        return shell(placements)[1] + joining + sum(p.tokens for p in placements)

    def render(placements: list[Placement], head: _Header = header) -> tuple[str, int]:
        # The header states the tokens used, which the text itself includes: settle it.
        secrets = secrets_of(placements)
        used = predict(placements)
        text = ""
        for _ in range(4):
            text = _render(renderer, head, placements, used, secrets)
            counted = count_text(text)
            if counted == used:
                break
            used = counted
        return text, count_text(text)

    pruned: dict[int, list[Placement]] = {}

    def prune(budget: int) -> list[Placement]:
        if budget not in pruned:
            placements = pruner.prune(items, budget, count)
            _validate(items, placements, pruner_name)
            pruned[budget] = placements
        return pruned[budget]

    card = items[0]
    card_only = [Placement(card, full_mode(card), card.text, card.tokens)] + [
        Placement(item, "dropped", "", 0, "the active card alone fills the budget")
        for item in items[1:]
    ]
    card_text, card_used = render(card_only)
    if card_used > limit:
        needed = card_used
        for _ in range(4):  # what it needs when the header states that very budget
            needed_now = render(card_only, attrs.evolve(header, token_limit=needed))[1]
            if needed_now == needed:
                break
            needed = needed_now
        raise TokenLimitExceeded(
            f"the active card {header.card} alone needs {needed} tokens with the scene's "
            f"header and manifest, {needed - limit} over the budget of {limit}",
            path=card.path,
            current_size=needed,
            limit=limit,
            action=f"raise the budget to at least {needed} (--token-limit or [scene] "
            "token_limit) or shorten the card",
            help=f"raise the budget to at least {needed} tokens, or shorten the card",
        )

    # Many budgets give the same placements: render and count each outcome once.
    measured: dict[tuple[tuple[str, int], ...], tuple[list[Placement], str, int]] = {}
    predicted: dict[tuple[tuple[str, int], ...], int] = {}

    def outcome(budget: int) -> tuple[tuple[str, int], ...]:
        return tuple((p.mode, p.tokens) for p in prune(budget))

    def real(budget: int) -> int:
        key = outcome(budget)
        if key not in measured:
            if len(measured) >= REAL_RENDERS:
                return limit + 1  # enough full counts: settle for the best one so far
            placements = prune(budget)
            text, used = render(placements)
            measured[key] = (placements, text, used)
        return measured[key][2]

    def guess(budget: int) -> int:
        key = outcome(budget)
        if key not in predicted:
            predicted[key] = predict(prune(budget))
        return predicted[key]

    def highest(low: int, high: int, fits: Callable[[int], bool]) -> int:
        """The largest budget in [low, high) that fits, given that ``low`` does."""
        while high - low > 1:
            middle = (low + high) // 2
            if fits(middle):
                low = middle
            else:
                high = middle
        return low

    # Budgets past min(everything, limit) change nothing: documents are part of the limit.
    top = min(sum(item.tokens for item in items), limit)
    if guess(top) <= limit and real(top) <= limit:
        budget = top
    else:
        budget = highest(card.tokens, top + 1, lambda b: guess(b) <= limit)
        # How far the prediction is off here, and a margin for how that varies elsewhere.
        error = guess(budget) - real(budget)
        margin = 16 + limit // 200
        if real(budget) > limit:
            # The prediction was bold: find the real edge near where it says, corrected.
            low = highest(card.tokens, budget, lambda b: guess(b) - error + margin <= limit)
            if real(low) <= limit:
                budget = highest(low, budget, lambda b: real(b) <= limit)
            else:
                budget = highest(card.tokens, low, lambda b: real(b) <= limit)
        elif budget < top and real(budget + 1) <= limit:
            # The prediction was cautious: go on from there on real counts, as far as
            # the prediction corrected by its error here says it may still fit.
            end = highest(budget, top + 1, lambda b: guess(b) - error - margin <= limit) + 1
            budget = highest(budget + 1, max(end, budget + 2), lambda b: real(b) <= limit)
    real(budget)
    fitting = [found for found in measured.values() if found[2] <= limit]
    if not fitting:
        return card_only, card_text, card_used
    return max(fitting, key=lambda found: found[2])


def _validate(items: Sequence[SceneItem], placements: Sequence[Placement], name: str) -> None:
    from cuedeck.pruning import full_mode

    if len(placements) != len(items) or any(
        p.item is not i for p, i in zip(placements, items, strict=False)
    ):
        raise CueError(f"pruner {name!r} did not return one placement per item, in order")
    if placements[0].mode != full_mode(items[0]):
        raise CueError(f"pruner {name!r} did not keep the active card whole")


# --- output and staleness ----------------------------------------------------------------


def output_path(workspace: Workspace) -> Path:
    """Where ``cue scene`` writes: ``[scene] output`` inside the workspace."""
    return workspace.root / workspace.relative_path(
        workspace.config.scene.output, field="scene.output"
    )


def write_scene(workspace: Workspace, scene: Scene) -> bool:
    """Write the scene to its output file atomically; False when it was already there."""
    from cuedeck.files import atomic_write

    path = output_path(workspace)
    data = scene.text.encode("utf-8")
    try:
        if path.read_bytes() == data:
            return False
    except OSError:
        pass
    atomic_write(path, data)
    return True


@attrs.frozen
class Recorded:
    """What a written scene says about itself: its card and its inputs' short hashes."""

    card: str | None
    inputs: dict[str, str]


_MD_CARD = re.compile(r"^> card `([^`]+)` ", re.MULTILINE)
_MD_ROW = re.compile(r"^\| \d+ \| [\d/]+ \| \w+ \| (.+?) \| ([0-9a-f]+) \| ", re.MULTILINE)
_MD_CONFIG = re.compile(r"^Config: `([^`]+)` ([0-9a-f]+)$", re.MULTILINE)


def read_recorded(text: str) -> Recorded | None:
    """The card and input hashes a scene in any format records, or None if it is not one."""
    stripped = text.lstrip()
    inputs: dict[str, str] = {}
    card: str | None = None
    if stripped.startswith("{"):
        try:
            value = json.loads(text)
            card = value["scene"]["path"]
            for candidate in value["manifest"]["candidates"]:
                inputs[candidate["path"]] = candidate["sha256"]
            if config := value["manifest"].get("config"):
                inputs[config["path"]] = config["sha256"]
        except (ValueError, KeyError, TypeError):
            return None
    elif stripped.startswith("<scene"):
        import xml.etree.ElementTree as ElementTree

        try:
            root = ElementTree.fromstring(text)
        except ElementTree.ParseError:
            return None
        card = root.get("path")
        for element in root.iter():
            if element.tag in ("candidate", "config"):
                path, digest = element.get("path"), element.get("sha256")
                if path and digest:
                    inputs[path] = digest
    else:
        if found := _MD_CARD.search(text):
            card = found.group(1)
        for row in _MD_ROW.finditer(text):
            key = row.group(1).replace("\\|", "|")
            inputs[key.split("#", 1)[0]] = row.group(2)
        if config_row := _MD_CONFIG.search(text):
            inputs[config_row.group(1)] = config_row.group(2)
    if card is None or not inputs:
        return None
    return Recorded(card, inputs)


def changed_inputs(workspace: Workspace, recorded: Recorded) -> list[str]:
    """Inputs whose bytes no longer have the recorded hash (or that are gone), sorted."""
    changed = []
    for path, short in sorted(recorded.inputs.items()):
        try:
            digest = hashlib.sha256((workspace.root / path).read_bytes()).hexdigest()
        except OSError:
            changed.append(path)
            continue
        if not digest.startswith(short):
            changed.append(path)
    return changed


def check_scene(workspace: Workspace, scene: Scene) -> None:
    """Raise StaleCache (1006) unless the output file holds exactly ``scene``'s text.

    The error names the inputs that changed since the file was written.
    """
    path = output_path(workspace)
    display = workspace.config.scene.output
    try:
        on_disk = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        raise StaleCache(
            f"{display} does not exist yet", path=display, changed=[], help="run `cue scene`"
        ) from None
    if on_disk == scene.text:
        return
    recorded = read_recorded(on_disk)
    if recorded is None:
        raise StaleCache(
            f"{display} is not a scene CueDeck wrote",
            path=display,
            changed=[],
            help="run `cue scene`",
        )
    changed = changed_inputs(workspace, recorded)
    if changed:
        more = f" (and {len(changed) - 1} more)" if len(changed) > 1 else ""
        what = "was removed" if not (workspace.root / changed[0]).exists() else "changed"
        message = f"{display} is stale: {changed[0]} {what} since it was built{more}"
    elif recorded.card != scene.manifest["card_path"]:
        message = (
            f"{display} is for {recorded.card}, the scene now is for {scene.manifest['card_path']}"
        )
    else:
        new = sorted(set(scene.manifest["inputs"]) - set(recorded.inputs))
        if new:
            changed = new
            message = f"{display} is stale: {new[0]} is a new input"
        else:
            message = f"{display} differs from a fresh build (another budget, format or pruner?)"
    raise StaleCache(message, path=display, changed=changed, help="run `cue scene` to rebuild it")


def scene_problems(workspace: Workspace) -> list[Problem]:
    """Doctor's view: a warning when the written scene's inputs changed since."""
    from cuedeck.models import Problem

    try:
        path = output_path(workspace)
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, CueError):
        return []
    recorded = read_recorded(text)
    if recorded is None:
        return []
    changed = changed_inputs(workspace, recorded)
    if not changed:
        return []
    more = f" (and {len(changed) - 1} more)" if len(changed) > 1 else ""
    return [
        Problem(
            "warning",
            StaleCache.code,
            workspace.config.scene.output,
            None,
            f"the scene is stale: {changed[0]} changed since it was built{more}",
            "run `cue scene` to rebuild it",
        )
    ]


# --- the tool ----------------------------------------------------------------------------


def build_scene_tool(
    workspace: Workspace,
    card_id: Annotated[
        str | None,
        pydantic.Field(
            description="Card id (6 characters); default: the active card",
            pattern=CARD_ID_PATTERN,
        ),
    ] = None,
    token_limit: Annotated[
        int | None,
        pydantic.Field(description="Token budget; default: [scene] token_limit", ge=1),
    ] = None,
    format: Annotated[
        Format | None,
        pydantic.Field(description="markdown, xml or json; default: [scene] format"),
    ] = None,
) -> SceneReply:
    """Build the scene: the active card and what it references, fitted to the token budget.

    Secrets are masked. The manifest lists every candidate with its priority, tokens and
    whether it was kept whole, as a section, as an outline or dropped (and why). Nothing
    is written; `cue scene` writes .cuedeck/SCENE.md.
    """
    scene = build_scene(workspace, card_id, token_limit, format=format)
    return {"text": scene.text, "manifest": scene.manifest}
