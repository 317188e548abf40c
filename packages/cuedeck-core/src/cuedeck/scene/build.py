"""Building a scene: candidates in, masked and fitted to the budget, rendered out."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import attrs

from cuedeck.errors import (
    InvalidInput,
)
from cuedeck.scene.candidates import gather_entries
from cuedeck.scene.code import code_item, code_labels, delta_items, is_code, related_items
from cuedeck.scene.fit import fit_to_budget
from cuedeck.scene.model import FORMATS, MANIFEST_VERSION, Scene, SceneManifest
from cuedeck.scene.render import RENDERERS, Header, secret_counts
from cuedeck.scene.selection import find_card

if TYPE_CHECKING:
    from cuedeck.drift import Label
    from cuedeck.masking import MaskSession
    from cuedeck.models import Document, Problem, SceneItem
    from cuedeck.scene.render import Renderer
    from cuedeck.tokens import CachedCounter
    from cuedeck.workspace import Workspace
else:
    # The tool's annotations name pydantic; ``cue --help`` imports this module without
    # ever evaluating them, so pydantic loads on first use.
    pass


def build_scene(
    workspace: Workspace,
    card_id: str | None = None,
    token_limit: int | None = None,
    *,
    format: str | None = None,
    pruner: str | None = None,
    since: str | None = None,
    stack: str | None = None,
    record: bool = True,
) -> Scene:
    """The scene of ``card_id`` (default: the active card), fitted to ``token_limit``.

    ``since`` (a git ref, a task snapshot) adds the files changed since then as hunks;
    ``stack`` (a traceback, failing test output) points related code at its frames;
    ``record`` records the code references seen for the first time (their drift is
    measured from then on). Raises CycleDetected (1002) when a reference loop is
    reachable from the card, TokenLimitExceeded (1003) when the card alone does not fit,
    FileNotFound (1001) for a missing card or global doc, InvalidInput (1004) for bad
    arguments, UnknownBaseline (1143) for a ``since`` nothing knows.
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
    if format_name not in RENDERERS:
        raise InvalidInput(
            f"unknown scene format {format_name!r} (one of {', '.join(FORMATS)})", field="format"
        )
    renderer = RENDERERS[format_name]
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
    entries = gather_entries(workspace, card)

    counter = workspace.token_counter
    documents = workspace.documents
    session = workspace.mask_session()
    labels = code_labels(workspace, [card.path, *(e.path for e in entries)], record=record)
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
            note=label_note(labels, document, entry.anchor, entry.lines, recorded=record),
        )
        if is_code(document):
            item = code_item(workspace, document, text, entry.lines, entry.anchor, session, item)
        mode = full_mode(item)
        if unmasked and mode == "whole" and renderer.name != "json":
            # The index counted this very text: add the framing instead of recounting.
            tokens = document.tokens + cost(item, mode, "")
        else:
            tokens = cost(item, mode, text)
        items.append(attrs.evolve(item, tokens=tokens))
        wrapper = max(wrapper, cost(item, "signatures" if item.signatures else "outline", ""))

    def count(text: str) -> int:
        # What an outline costs as a placed document: the longest framing plus its text.
        return counter.count(renderer.escape(text)) + wrapper

    more: list[tuple[SceneItem, str]] = list(
        _extras(workspace, header_card_id(card.path), session, renderer)
    )
    since_label = None
    if since is not None:
        since_label, deltas = delta_items(workspace, since, session, cost)
        more.extend(deltas)
    included = [(e.path, e.anchor, e.lines) for e in entries]
    held = [*items, *(extra for extra, _ in more)]
    # Related code takes its share of what the rest of the scene leaves: the documents
    # held already and, roughly, their manifest rows and the header.
    room = limit - sum(item.tokens + _row(counter, item) for item in held) - SHELL_TOKENS
    share = min(int(settings.code_share * limit), room)
    related = related_items(
        workspace,
        card,
        included,
        stack=stack or "",
        share=share,
        session=session,
        cost=cost,
        row=lambda item: _row(counter, item),
    )
    more.extend((item, item.sha256) for item in related)
    if more:
        for extra_item, digest in more:
            if extra_item.path not in files and digest:
                files[extra_item.path] = (extra_item.text, digest)
        # A stable sort: each extra joins the end of its priority level, the card stays first.
        items = sorted([*items, *(extra for extra, _ in more)], key=lambda item: -item.priority)

    config_path = workspace.root / CONFIG_PATH
    config = (
        (CONFIG_PATH, hashlib.sha256(config_path.read_bytes()).hexdigest())
        if config_path.is_file()
        else None
    )
    included_paths = {entry.path for entry in entries} | {card.path}
    orphans = {(lb.source, lb.line): lb for lb in labels if lb.state == "orphaned"}
    missing = tuple(
        (problem.path, problem.line, session.mask(_missing(problem, orphans), path=problem.path))
        for problem in workspace.graph.problems
        if problem.code == 1001 and problem.path in included_paths
    )
    header = Header(
        card=header_card_id(card.path),
        card_path=card.path,
        title=card.title,
        token_limit=limit,
        counter=counter.name,
        exact=counter.exact,
        pruner=pruner_name,
        format=format_name,
        config=config,
        missing=missing,
    )
    placements, text, used = fit_to_budget(
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
    secrets = secret_counts(text, session.placeholders)
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
        "truncated": any(p.mode != full_mode(p.item) for p in placements),
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
                "lines": f"L{p.item.lines[0]}-L{p.item.lines[1]}" if p.item.lines else None,
                "note": p.item.note or None,
            }
            for p in placements
        ],
        "missing": [
            {"path": path, "line": line, "message": message} for path, line, message in missing
        ],
        "inputs": dict(sorted(inputs.items())),
        "secrets": secrets,
        "since": since_label,
    }
    return Scene(text=text, manifest=manifest, placements=tuple(placements))


def label_note(
    labels: list[Label],
    document: Document,
    anchor: str | None,
    lines: tuple[int, int],
    *,
    recorded: bool,
) -> str:
    """The drift labels of the code references that name this item (or lines inside
    it), as one note (a reference seen for the first time: ``recorded now``, when it
    was)."""
    found = []
    for label in labels:
        if label.path != document.path or label.state == "orphaned":
            continue
        if label.state == "new" and not recorded:
            continue
        if label.anchor is None:
            names = anchor is None
        else:
            section = document.find_section(label.anchor)
            names = section is not None and lines[0] <= section.line <= section.end_line <= lines[1]
        if names:
            text = "recorded now" if label.state == "new" else label.describe()
            if label.anchor is not None and label.anchor != anchor:
                text = f"#{label.anchor} {text}"
            if text not in found:
                found.append(text)
    return "; ".join(found)


def _missing(problem: Problem, orphans: dict[tuple[str, int], Label]) -> str:
    """The manifest's message for a dead reference: an orphaned code reference says
    where its code likely went."""
    orphan = orphans.get((problem.path or "", problem.line or 0))
    if orphan is None:
        return problem.message
    return f"code reference {orphan.raw!r} {orphan.describe()}"


#: The scene's header, truncation note and manifest's head and foot, roughly, in tokens.
SHELL_TOKENS = 120


def _row(counter: CachedCounter, item: SceneItem) -> int:
    """What ``item``'s manifest row costs, about (the numbers change as it is placed)."""
    note = f"{item.role}, {item.note}" if item.note else item.role
    cells = (str(item.priority), str(item.tokens), "section", item.key, item.sha256[:12], note)
    return counter.count("| " + " | ".join(cells) + " |\n")


def header_card_id(path: str) -> str:
    """The card id of a card's path."""
    return path.rsplit("/", 1)[-1].removesuffix(".md")


def _extras(
    workspace: Workspace, card_id: str, session: MaskSession, renderer: Renderer
) -> list[tuple[SceneItem, str]]:
    """What registered scene sources add for ``card_id``, masked and costed, with each
    file's sha256; ``[scene] memory = false`` leaves the ``memory`` source out."""
    from cuedeck.models import Placement, SceneItem
    from cuedeck.plugins import get_scene_sources
    from cuedeck.pruning import full_mode

    found: list[tuple[SceneItem, str]] = []
    for name, source in get_scene_sources(workspace.plugins).items():
        if name == "memory" and not workspace.config.scene.memory:
            continue
        for extra in source(workspace, card_id):
            text = session.mask(extra.text.rstrip(), path=extra.path)
            item = SceneItem(
                extra.path,
                None,
                extra.priority,
                1,
                text,
                0,
                extra.sha256,
                role=extra.role,
                title=extra.title,
            )
            tokens = workspace.token_counter.count(
                renderer.block(Placement(item, full_mode(item), text, 0))
            )
            found.append((attrs.evolve(item, tokens=tokens), extra.sha256))
    return found
