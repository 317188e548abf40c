"""Pruners: fit the candidates of a scene, in priority order, into its token budget.

``greedy`` is the original algorithm: keep documents in order while they fit and stop
at the first that does not. ``outline`` (the default) goes on past a document that
does not fit: it tries the document's outline (its headings and the first paragraph
of each section), then its headings alone, before dropping it, so the agent still sees
what exists and can ask for it. Code is compressed the same way, to its ``signatures``
(each definition's signature and docstring summary, with its lines), then to its
outermost signature and a pointer. Both always keep the active card (the first item)
whole; the scene has checked that it fits.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any, NoReturn

from cuedeck.errors import CueError
from cuedeck.markdown.blocks import Fence, fence_opened_by
from cuedeck.markdown.frontmatter import body_start

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from cuedeck.hookspecs import Pruner
    from cuedeck.models import Placement, SceneItem
    from cuedeck.plugins.host import PluginHost

#: Longest first paragraph an outline keeps, in characters (then it ends with "…").
PARAGRAPH_CHARS = 320


def full_mode(item: SceneItem) -> str:
    """How ``item`` is placed as it is: its ``form`` when it has one (related code
    already compressed), ``section`` for one section of its file, else ``whole``."""
    return item.form or ("section" if item.anchor else "whole")


def _keep(item: SceneItem) -> Placement:
    from cuedeck.models import Placement

    return Placement(item, full_mode(item), item.text, item.tokens)


def _drop(item: SceneItem, reason: str) -> Placement:
    from cuedeck.models import Placement

    return Placement(item, "dropped", "", 0, reason)


class CheckedPruner:
    """A registered pruner held to the :class:`~cuedeck.hookspecs.Pruner` contract.

    The contract, clause by clause: one placement per item, for that item, in the order
    given; the active card (``items[0]``) kept whole (or as its section); no placement
    reports negative tokens, and a dropped one none; what is kept in full costs the
    item's measured tokens, whatever the pruner says; and the placements cost at most the
    budget, or the card alone when the card alone is over it. A pruner that breaks one
    would make the scene silently wrong; it fails instead, with a
    :class:`~cuedeck.errors.CueError` naming the pruner and the broken clause.
    """

    def __init__(self, name: str, pruner: Pruner) -> None:
        self.name = name
        self.pruner = pruner

    def __repr__(self) -> str:
        return f"CheckedPruner({self.name!r}, {self.pruner!r})"

    def prune(
        self, items: Sequence[SceneItem], budget: int, count: Callable[[str], int]
    ) -> list[Placement]:
        placements = list(self.pruner.prune(items, budget, count))
        if len(placements) != len(items):
            self._broken(
                f"returned {len(placements)} placements for {len(items)} items",
                placements=len(placements),
                items=len(items),
            )
        for index, (placement, item) in enumerate(zip(placements, items, strict=True)):
            if placement.item is not item:
                given = "a copy of it" if placement.item.key == item.key else placement.item.key
                self._broken(
                    f"placement {index} is for {given}, not {item.key}: one placement per "
                    "item, for that item, in the order given",
                    item=item.key,
                )
        if items and placements[0].mode != full_mode(items[0]):
            self._broken(
                f"did not keep the active card whole (placed it {placements[0].mode})",
                item=items[0].key,
            )
        for placement in placements:
            if placement.tokens < 0 or (placement.mode == "dropped" and placement.tokens):
                self._broken(
                    f"reported {placement.tokens} tokens for {placement.item.key} "
                    f"({placement.mode})",
                    item=placement.item.key,
                    tokens=placement.tokens,
                )
        # What is kept as it is costs what the scene measured, whatever the pruner says.
        costs = [p.item.tokens if p.mode == full_mode(p.item) else p.tokens for p in placements]
        # The active card is kept even when it alone exceeds the budget.
        allowed = max(budget, costs[0]) if costs else budget
        if sum(costs) > allowed:
            self._broken(
                f"placed {sum(costs)} tokens, over its budget of {budget}",
                tokens=sum(costs),
                budget=budget,
            )
        return placements

    def _broken(self, what: str, **data: Any) -> NoReturn:
        raise CueError(
            f"pruner {self.name!r} broke its contract: {what}",
            pruner=self.name,
            help="fix the pruner, or choose another with [scene] pruner or --pruner",
            **data,
        )


def get_pruners(host: PluginHost) -> dict[str, Pruner]:
    """The registered pruners by name, each held to the contract by :class:`CheckedPruner`."""
    return {name: CheckedPruner(name, p) for name, p in host.items("register_pruners").items()}


class GreedyPruner:
    """Keep items in order while they fit; stop at the first one that does not."""

    def prune(
        self, items: Sequence[SceneItem], budget: int, count: Callable[[str], int]
    ) -> list[Placement]:
        placements: list[Placement] = []
        used = 0
        stopped_at: str | None = None
        for index, item in enumerate(items):
            if stopped_at is None and (index == 0 or used + item.tokens <= budget):
                placements.append(_keep(item))
                used += item.tokens
            elif stopped_at is None:
                stopped_at = item.key
                left = max(budget - used, 0)
                placements.append(_drop(item, f"needs {item.tokens} tokens, {left} left"))
            else:
                placements.append(_drop(item, f"after the truncation at {stopped_at}"))
        return placements


class OutlinePruner:
    """Keep what fits whole; outline what does not; drop only what not even outlines fit."""

    def prune(
        self, items: Sequence[SceneItem], budget: int, count: Callable[[str], int]
    ) -> list[Placement]:
        placements: list[Placement] = []
        used = 0
        floor = count("")  # the framing of a document: no outline costs less
        for index, item in enumerate(items):
            left = max(budget - used, 0)
            if index == 0 or item.tokens <= left:
                placement = _keep(item)
            elif left <= floor:
                placement = _drop(item, f"needs {item.tokens} tokens, {left} left")
            else:
                placement = _shrink(item, left, count)
            placements.append(placement)
            used += placement.tokens
        return placements


def _shrink(item: SceneItem, left: int, count: Callable[[str], int]) -> Placement:
    """``item`` as an outline, then as headings only, if either fits ``left``; code as
    its signatures, then its outermost signature; else dropped."""
    from cuedeck.models import Placement

    if item.signatures:
        return _signatures(item, left, count)
    smallest: int | None = None
    forms = item.outlines or outlines(item.text)
    for paragraphs, text in zip((True, False), forms, strict=True):
        if not text:
            continue
        tokens = count(text)
        if tokens >= item.tokens:
            continue  # an outline as large as the text saves nothing
        if tokens <= left:
            what = "outline" if paragraphs else "headings only"
            reason = f"{what}: the full text needs {item.tokens} tokens, {left} left"
            return Placement(item, "outline", text, tokens, reason)
        smallest = tokens
    outlined = f" ({smallest} as headings)" if smallest is not None else ""
    return _drop(item, f"needs {item.tokens} tokens{outlined}, {left} left")


def _signatures(item: SceneItem, left: int, count: Callable[[str], int]) -> Placement:
    """A code item as the first of its smaller forms that fits ``left``; else dropped."""
    from cuedeck.models import Placement

    smallest: int | None = None
    for number, text in enumerate(item.signatures):
        tokens = count(text)
        if tokens >= item.tokens:
            continue  # as large as the code itself: nothing gained
        if tokens <= left:
            what = ("signatures", "signatures without docstrings", "its signature")[
                min(number, 2) if len(item.signatures) == 3 else (0 if number == 0 else 2)
            ]
            reason = f"{what}: the full text needs {item.tokens} tokens, {left} left"
            return Placement(item, "signatures", text, tokens, reason)
        smallest = tokens
    compressed = f" ({smallest} as its signature)" if smallest is not None else ""
    return _drop(item, f"needs {item.tokens} tokens{compressed}, {left} left")


def outline(text: str, *, paragraphs: bool = True) -> str:
    """The headings of a markdown text, each with its section's first paragraph.

    Frontmatter and fenced code are skipped; a long paragraph is cut at
    :data:`PARAGRAPH_CHARS`. With ``paragraphs=False``, only the headings. Empty when
    there is nothing to show.
    """
    return outlines(text)[0 if paragraphs else 1]


_ATX = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")


@functools.lru_cache(maxsize=1024)
def outlines(text: str) -> tuple[str, str]:
    """``(outline, headings only)`` of a markdown text, in one pass over its lines.

    A line scan (ATX headings, fences, blank lines) rather than a full parse: pruners
    ask for outlines of every document that does not fit, on every budget they try.
    """
    lines = text.splitlines()
    start = body_start(lines)
    sections: list[list[str]] = [[]]  # the preamble is a section without a heading
    headings: list[str] = []
    paragraph: list[str] = []
    done = False  # the current section's first paragraph is complete
    fence: Fence | None = None
    for line in lines[start:]:
        if fence is not None:
            if fence.closed_by(line):
                fence = None
            continue
        fence = fence_opened_by(line)
        if fence is not None:
            done = done or bool(paragraph)
            continue
        if _ATX.match(line):
            _close(sections[-1], paragraph)
            paragraph, done = [], False
            headings.append(line.strip())
            sections.append([line.strip()])
            continue
        if done:
            continue
        stripped = line.strip()
        if (
            not stripped
            or stripped.startswith(("|", "<", "!["))
            or (not paragraph and line.startswith("    "))
        ):
            done = bool(paragraph)  # tables, HTML, images and code say little here
            continue
        paragraph.append(stripped)
    _close(sections[-1], paragraph)
    full = "\n\n".join("\n".join(section) for section in sections if section)
    return full, "\n".join(headings)


def heading_outlines(lines: Sequence[str], spans: Sequence[tuple[int, int]]) -> tuple[str, str]:
    """``(outline, headings only)`` of a text whose headings are ``spans`` of its lines
    (0-based first line, number of lines): each heading as written, then (in the
    outline) the first paragraph of its section. For prose that is not markdown."""
    if not spans:
        return "", ""
    full: list[str] = []
    headings: list[str] = []
    ends = [first for first, _ in spans[1:]] + [len(lines)]
    for (first, size), end in zip(spans, ends, strict=True):
        heading = "\n".join(lines[first : first + size]).strip("\n")
        headings.append(heading)
        section = [heading]
        paragraph: list[str] = []
        for line in lines[first + size : end]:
            stripped = line.strip()
            if not stripped:
                if paragraph:
                    break
                continue
            if not paragraph and (line[:1] in " \t" or stripped[0] in ".:[|<+=-"):
                continue  # directives, options, attributes, tables: not what it says
            paragraph.append(stripped)
        _close(section, paragraph)
        full.append("\n".join(section))
    return "\n\n".join(full), "\n".join(headings)


def _close(section: list[str], paragraph: list[str]) -> None:
    if paragraph:
        joined = " ".join(paragraph)
        if len(joined) > PARAGRAPH_CHARS:
            joined = joined[: PARAGRAPH_CHARS - 1].rstrip() + "…"
        section.append(joined)
