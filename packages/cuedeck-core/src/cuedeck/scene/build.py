"""Building a scene: candidates in, masked and fitted to the budget, rendered out.

:func:`build_scene` is the recipe; each step is a function below: check the options,
gather the card's candidates, label the code they cite (:func:`.code.code_labels`), read
and mask them (:func:`_read`), cost each one as it would be placed (:func:`_items`), add
what scene sources bring (:func:`_extras`), the changes since a baseline and the related
code (:func:`_code`), fit the lot to the budget (:mod:`.fit`) and describe the result
(:func:`_manifest`).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import attrs

from cuedeck.errors import InvalidInput
from cuedeck.scene.candidates import covers, gather_entries
from cuedeck.scene.code import code_item, code_labels, delta_items, is_code, related_items
from cuedeck.scene.fit import fit_to_budget
from cuedeck.scene.render import RENDERERS, Header, secret_counts
from cuedeck.scene.selection import find_card
from cuedeck.scene.shapes import FORMATS, MANIFEST_VERSION, Scene, SceneManifest

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from cuedeck.hookspecs import Pruner
    from cuedeck.masking.session import MaskSession
    from cuedeck.models import Document, Placement, Problem, SceneItem
    from cuedeck.refs.drift import Label
    from cuedeck.scene.candidates import Entry
    from cuedeck.scene.render import Renderer
    from cuedeck.token_counts import CachedCounter
    from cuedeck.workspace import Workspace

    #: What an item costs placed in a mode with a text: its rendered block, counted.
    Cost = Callable[[SceneItem, str, str], int]

#: Path -> (text, sha256) of every file a scene reads: what its manifest's inputs list.
Files = dict[str, tuple[str, str]]


@attrs.frozen
class _Options:
    """What a build was asked for, checked: the budget, the format and the pruner."""

    limit: int
    renderer: Renderer
    pruner_name: str
    pruner: Pruner


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
    measure: Callable[[str], int] | None = None,
) -> Scene:
    """The scene of ``card_id`` (default: the active card), fitted to ``token_limit``.

    ``since`` (a git ref, a task snapshot) adds the files changed since then as hunks;
    ``stack`` (a traceback, failing test output) points related code at its frames;
    ``record`` records the code references seen for the first time (their drift is
    measured from then on); ``measure`` counts what a scene text costs as sent, when
    that is more than the text (a tool's reply around it), and the budget bounds that.
    Raises CycleDetected (1002) when a reference loop is
    reachable from the card, TokenLimitExceeded (1003) when the card alone does not fit,
    FileNotFound (1001) for a missing card or global doc, InvalidInput (1004) for bad
    arguments, UnknownBaseline (1143) for a ``since`` nothing knows.
    """
    options = _options(workspace, token_limit, format, pruner)
    # Refreshed when the workspace may be stale (its first read, or after invalidate()):
    # a server keeps it in step by its watcher, so a warm scene walks no file.
    workspace.fresh_index()
    card = find_card(workspace, card_id)
    entries = gather_entries(workspace, card)
    session = workspace.mask_session()
    labels = code_labels(workspace, [card.path, *(e.path for e in entries)], record=record)
    files, texts = _read(workspace, entries, session)
    items, count, cost = _items(
        workspace, entries, texts, files, options.renderer, labels, session, recorded=record
    )
    extras = _extras(workspace, header_card_id(card.path), session, options.renderer)
    since_label, code, left_out = _code(
        workspace, card, entries, [*items, *(e for e, _ in extras)], session, cost, options,
        since=since, stack=stack,
    )  # fmt: skip
    extras.extend(code)
    if extras:
        for extra_item, digest in extras:
            if extra_item.path not in files and digest:
                files[extra_item.path] = (extra_item.text, digest)
        # A stable sort: each extra joins the end of its priority level, the card stays first.
        items = sorted([*items, *(extra for extra, _ in extras)], key=lambda item: -item.priority)
    header = attrs.evolve(
        _header(workspace, card, entries, session, options, labels),
        left_out=tuple(sorted(left_out.items())),
    )
    placements, text, used = fit_to_budget(
        items,
        options.limit,
        options.pruner,
        count,
        options.renderer,
        header,
        session.placeholders,
        workspace.token_counter.count,
        measure,
    )
    manifest = _manifest(header, placements, text, used, files, session, since_label)
    return Scene(text=text, manifest=manifest, placements=tuple(placements))


def header_card_id(path: str) -> str:
    """The card id of a card's path."""
    return path.rsplit("/", 1)[-1].removesuffix(".md")


def _options(
    workspace: Workspace, token_limit: int | None, format: str | None, pruner: str | None
) -> _Options:
    """The budget, renderer and pruner: the arguments, else ``[scene]`` config."""
    from cuedeck.scene.pruners import get_pruners

    settings = workspace.config.scene
    limit = settings.token_limit if token_limit is None else token_limit
    if limit < 1:
        raise InvalidInput(f"token limit must be positive, not {limit}", field="token_limit")
    format_name = format or settings.format
    if format_name not in RENDERERS:
        raise InvalidInput(
            f"unknown scene format {format_name!r} (one of {', '.join(FORMATS)})", field="format"
        )
    pruner_name = pruner or settings.pruner
    pruners = get_pruners(workspace.plugins)
    if pruner_name not in pruners:
        if pruner is None:
            raise workspace.config.unavailable("scene.pruner", pruner_name, list(pruners))
        raise InvalidInput(
            f"unknown pruner {pruner_name!r} (available: {', '.join(sorted(pruners))})",
            field="pruner",
        )
    return _Options(limit, RENDERERS[format_name], pruner_name, pruners[pruner_name])


def _read(
    workspace: Workspace, entries: Sequence[Entry], session: MaskSession
) -> tuple[Files, list[tuple[str, bool]]]:
    """Each file once, and each entry's text (its section alone when it has an anchor),
    masked, with whether masking left it as it was."""
    from cuedeck.text import split_lines

    files: Files = {}
    texts = []
    for entry in entries:
        if entry.path not in files:
            snapshot = workspace.snapshot(entry.path)  # what the index holds, and only that
            files[entry.path] = (snapshot.text, snapshot.sha256)
        text = files[entry.path][0]
        if entry.anchor is not None:
            first, last = entry.lines
            text = "\n".join(split_lines(text)[first - 1 : last])
        text = text.rstrip()
        masked = session.mask(text, path=entry.path)
        texts.append((masked, masked is text))
    return files, texts


def _items(
    workspace: Workspace,
    entries: Sequence[Entry],
    texts: Sequence[tuple[str, bool]],
    files: Files,
    renderer: Renderer,
    labels: Sequence[Label],
    session: MaskSession,
    *,
    recorded: bool,
) -> tuple[list[SceneItem], Callable[[str], int], Cost]:
    """Each entry as a scene item costing what it costs placed whole (code with its
    language, lines, signatures and drift label), the ``count`` a pruner measures
    outlines and signatures with (their text plus the longest framing), and the
    ``cost`` of any item placed in any mode."""
    from cuedeck.models import Placement, SceneItem
    from cuedeck.scene.pruners import full_mode

    counter = workspace.token_counter
    documents = workspace.documents

    def cost(item: SceneItem, mode: str, text: str) -> int:
        return counter.count(renderer.block(Placement(item, mode, text, 0)))

    items: list[SceneItem] = []
    framing = 0
    for entry, (text, unmasked) in zip(entries, texts, strict=True):
        document: Document = documents[entry.path]
        item = SceneItem(
            entry.path,
            entry.anchor,
            entry.priority,
            entry.depth,
            text,
            0,
            files[entry.path][1],
            role=entry.role,
            title=document.title,
            note=label_note(labels, document, entry.anchor, entry.lines, recorded=recorded),
        )
        if is_code(document):
            item = code_item(workspace, document, text, entry.lines, entry.anchor, session, item)
        elif document.language not in (None, "markdown"):
            item = _prose_item(document, text, entry.lines, item)
        mode = full_mode(item)
        if unmasked and mode == "whole" and renderer.name != "json":
            # The index counted this very text: add the framing instead of recounting.
            tokens = document.tokens + cost(item, mode, "")
        else:
            tokens = cost(item, mode, text)
        items.append(attrs.evolve(item, tokens=tokens))
        framing = max(framing, cost(item, "signatures" if item.signatures else "outline", ""))

    def count(text: str) -> int:
        return counter.count(renderer.escape(text)) + framing

    return items, count, cost


def _prose_item(
    document: Document, text: str, lines: tuple[int, int], base: SceneItem
) -> SceneItem:
    """``base`` as prose other than markdown: its language (the block's fence) and its
    outlines, made from its headings (the outline pruner reads only markdown's)."""
    from cuedeck.prose.sections import heading_lines
    from cuedeck.scene.pruners import heading_outlines
    from cuedeck.text import split_lines

    rows = split_lines(text)
    first, last = lines
    spans = [
        (h.line - first, heading_lines(document.language, rows[h.line - first]))
        for h in document.headings
        if first <= h.line <= last and h.line - first < len(rows)
    ]
    return attrs.evolve(base, language=document.language, outlines=heading_outlines(rows, spans))


def _header(
    workspace: Workspace,
    card: Document,
    entries: Sequence[Entry],
    session: MaskSession,
    options: _Options,
    labels: Sequence[Label],
) -> Header:
    """The scene's header: the card, the budget and how it is counted and fitted, the
    config it was built with and the dead references of what it includes (an orphaned
    code reference with its likeliest new home)."""
    from cuedeck.layout import CONFIG_PATH

    config_path = workspace.root / CONFIG_PATH
    config = (
        (CONFIG_PATH, hashlib.sha256(config_path.read_bytes()).hexdigest())
        if config_path.is_file()
        else None
    )
    orphans = {(lb.source, lb.line): lb for lb in labels if lb.state == "orphaned"}
    missing = tuple(
        (problem.path, problem.line, session.mask(_missing(problem, orphans), path=problem.path))
        for problem in workspace.graph.problems
        if problem.code == 1001
        and problem.path is not None
        and covers(entries, problem.path, problem.line)
    )
    counter = workspace.token_counter
    return Header(
        card=header_card_id(card.path),
        card_path=card.path,
        title=card.title,
        token_limit=options.limit,
        counter=counter.name,
        exact=counter.exact,
        pruner=options.pruner_name,
        format=options.renderer.name,
        config=config,
        missing=missing,
    )


def _manifest(
    header: Header,
    placements: Sequence[Placement],
    text: str,
    used: int,
    files: Files,
    session: MaskSession,
    since: str | None,
) -> SceneManifest:
    """What the scene holds: every candidate and how it was placed, its inputs' hashes,
    the dead references, the secrets masked and the baseline of its changes."""
    from cuedeck.scene.pruners import full_mode

    inputs = {path: digest for path, (_, digest) in files.items()}
    if header.config is not None:
        inputs[header.config[0]] = header.config[1]
    return {
        "version": MANIFEST_VERSION,
        "card": header.card,
        "card_path": header.card_path,
        "title": header.title,
        "format": header.format,
        "pruner": header.pruner,
        "counter": header.counter,
        "exact": header.exact,
        "token_limit": header.token_limit,
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
            {"path": path, "line": line, "message": message}
            for path, line, message in header.missing
        ],
        "inputs": dict(sorted(inputs.items())),
        "secrets": secret_counts(text, session.placeholders),
        "since": since,
        "left_out": dict(header.left_out),
    }


def _code(
    workspace: Workspace,
    card: Document,
    entries: Sequence[Entry],
    held: Sequence[SceneItem],
    session: MaskSession,
    cost: Cost,
    options: _Options,
    *,
    since: str | None,
    stack: str | None,
) -> tuple[str | None, list[tuple[SceneItem, str]], dict[str, int]]:
    """The changes since ``since`` (and its label) and the related code, as extras with
    their files' hashes, and what the code ranker left out by rule. Related code takes
    its share of what the rest leaves: the documents ``held`` already and, roughly,
    their manifest rows and the header."""
    found: list[tuple[SceneItem, str]] = []
    label = None
    if since is not None:
        label, deltas = delta_items(workspace, since, session, cost)
        found.extend(deltas)
    counter = workspace.token_counter
    taken = [*held, *(item for item, _ in found)]
    room = options.limit - sum(item.tokens + _row(counter, item) for item in taken) - SHELL_TOKENS
    share = min(int(workspace.config.scene.code_share * options.limit), room)
    related, left_out = related_items(
        workspace,
        card,
        [(e.path, e.anchor, e.lines) for e in entries],
        stack=stack or "",
        share=share,
        session=session,
        cost=cost,
        row=lambda item: _row(counter, item),
    )
    found.extend((item, item.sha256) for item in related)
    return label, found, left_out


#: The scene's header, truncation note and manifest's head and foot, roughly, in tokens.
SHELL_TOKENS = 120


def _row(counter: CachedCounter, item: SceneItem) -> int:
    """What ``item``'s manifest row costs, about (the numbers change as it is placed)."""
    note = f"{item.role}, {item.note}" if item.note else item.role
    cells = (str(item.priority), str(item.tokens), "section", item.key, item.sha256[:12], note)
    return counter.count("| " + " | ".join(cells) + " |\n")


def label_note(
    labels: Sequence[Label],
    document: Document,
    anchor: str | None,
    lines: tuple[int, int],
    *,
    recorded: bool,
) -> str:
    """The drift labels of the code references that name this item (or lines inside
    it), as one note (a reference seen for the first time: ``recorded now``, when it
    was)."""
    found: list[str] = []
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


def _extras(
    workspace: Workspace, card_id: str, session: MaskSession, renderer: Renderer
) -> list[tuple[SceneItem, str]]:
    """What registered scene sources add for ``card_id``, masked and costed, with each
    file's sha256; a source whose switch (its ``setting``) is off is left out."""
    from cuedeck.models import Placement, SceneItem
    from cuedeck.scene.pruners import full_mode

    found: list[tuple[SceneItem, str]] = []
    for entry in workspace.plugins.collect("register_scene_sources").values():
        switch = entry.options.get("setting")
        if switch and not _switched_on(workspace, switch):
            continue
        for extra in entry.item(workspace, card_id):
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


def _switched_on(workspace: Workspace, switch: str) -> bool:
    """The boolean setting ``section.key`` a scene source is switched by."""
    section, _, key = switch.partition(".")
    value = getattr(workspace.config.section(section), key, None)
    if not isinstance(value, bool):
        raise InvalidInput(
            f"a scene source is switched by {switch!r}, which is no boolean setting",
            field=switch,
        )
    return value
