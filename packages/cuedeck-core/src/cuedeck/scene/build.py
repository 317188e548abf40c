"""Building a scene: candidates in, masked and fitted to the budget, rendered out."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import attrs

from cuedeck.errors import (
    InvalidInput,
)
from cuedeck.scene.candidates import covers, gather_entries
from cuedeck.scene.fit import fit_to_budget
from cuedeck.scene.model import FORMATS, MANIFEST_VERSION, Scene, SceneManifest
from cuedeck.scene.render import RENDERERS, Header, secret_counts
from cuedeck.scene.selection import find_card

if TYPE_CHECKING:
    from cuedeck.masking import MaskSession
    from cuedeck.models import SceneItem
    from cuedeck.scene.render import Renderer
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

    extras = _extras(workspace, header_card_id(card.path), session, renderer)
    if extras:
        for extra_item, digest in extras:
            files[extra_item.path] = (extra_item.text, digest)
        # A stable sort: each extra joins the end of its priority level, the card stays first.
        items = sorted([*items, *(extra for extra, _ in extras)], key=lambda item: -item.priority)

    config_path = workspace.root / CONFIG_PATH
    config = (
        (CONFIG_PATH, hashlib.sha256(config_path.read_bytes()).hexdigest())
        if config_path.is_file()
        else None
    )
    missing = tuple(
        (problem.path, problem.line, session.mask(problem.message, path=problem.path))
        for problem in workspace.graph.problems
        if problem.code == 1001
        and problem.path is not None
        and covers(entries, problem.path, problem.line)
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
        "missing": [
            {"path": path, "line": line, "message": message} for path, line, message in missing
        ],
        "inputs": dict(sorted(inputs.items())),
        "secrets": secrets,
    }
    return Scene(text=text, manifest=manifest, placements=tuple(placements))


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
