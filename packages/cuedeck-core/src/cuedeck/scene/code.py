"""Code in scenes: signatures (the compressed form of code), related code, changes since
a baseline, and the labels of the code references a scene includes.

:func:`signature_forms` is to code what the outline is to docs: the definitions within
an item's lines, each on one line with its line range and docstring summary, then the
outermost one alone, each under a pointer (``path:L120-180``) to the full text.
:func:`related_items` asks the code ranker what the card needs beyond what it cites and
keeps the best within ``[scene] code_share`` of the budget, whole while they fit (the
files of the first few, whole, when they are small enough), then as signatures.
:func:`delta_items` holds the files changed since ``since`` as hunks.
:func:`code_labels` labels each included ``@code/`` reference (fresh, moved, drifted,
orphaned) and records the ones seen for the first time.
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING

import attrs

from cuedeck.models import RankedSymbol, SceneItem, Symbol
from cuedeck.scene.shapes import PRIORITIES

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from cuedeck.masking.session import MaskSession
    from cuedeck.models import Document
    from cuedeck.refs.drift import Label
    from cuedeck.workspace import Workspace

#: Longest docstring summary kept in signatures, in characters.
SUMMARY_CHARS = 120
#: Definitions listed by the signatures without docstrings, at most.
MEMBERS = 40
#: Kinds that hold other definitions: too large for related code's share, they come as
#: their own signature (their members are ranked on their own).
CONTAINERS = frozenset(
    {"class", "struct", "interface", "trait", "impl", "enum", "namespace", "type"}
)
#: Definitions the code ranker is asked for (the share decides how many are kept).
RANKED = 300
#: Most related items in one scene (each costs a manifest row).
MAX_RELATED = 150
#: Definitions too large for what is left that are tried as signatures before giving up.
MAX_MISSES = 12
#: A file none of whose lines the scene holds yet comes whole, in place of its best
#: definition, when it costs at most this share of related code's budget and is one of
#: the first WHOLE_FILES files the ranking meets. Chosen on the tuning repositories of
#: benchmarks/code_cases.py (docs/code.md, "Related code: importance"): shares 0.35 to
#: 1.0 and 1 to 5 files measured; 0.7 and 3 showed the most modified lines.
WHOLE_FILE_SHARE = 0.7
WHOLE_FILES = 3
#: Markdown fence language of a delta block.
DELTA_LANGUAGE = "diff"


def _span(first: int, last: int) -> str:
    return f"L{first}" if first == last else f"L{first}-{last}"


def summary(docstring: str) -> str:
    """A docstring's first sentence (or line), at most :data:`SUMMARY_CHARS`."""
    first = docstring.strip().split("\n\n", 1)[0].replace("\n", " ")
    first = " ".join(first.split())
    for end in (". ", "? ", "! "):
        if end in first:
            first = first.split(end, 1)[0] + end.strip()
            break
    if len(first) > SUMMARY_CHARS:
        first = first[: SUMMARY_CHARS - 1].rstrip() + "…"
    return first


def signature_forms(
    document: Document, first: int, last: int, anchor: str | None
) -> tuple[str, ...]:
    """The compressed forms of lines ``first..last`` of a code document, largest first,
    each under a pointer to the full text, each smaller than the one before: every
    definition inside on one line with its lines and docstring summary, nested under
    the one it belongs to; the same without the summaries (at most :data:`MEMBERS`
    lines); the outermost definition's signature and summary alone. Unmasked."""
    inside = [
        s for s in document.symbols if s.kind != "module" and first <= s.line and s.end_line <= last
    ]
    around = [
        s for s in document.symbols if s.kind != "module" and s.line <= first and last <= s.end_line
    ]
    if not inside and around:
        inside = [min(around, key=lambda s: s.end_line - s.line)]
    if not inside:
        return ()
    target = f"{document.path}#{anchor}" if anchor else document.path
    pointer = (
        f"# {document.path}:{_span(first, last)} as signatures; read_doc {target} for the full text"
    )
    module = next((s for s in document.symbols if s.kind == "module"), None)
    top = min(s.name.count(".") for s in inside)
    head = [pointer]
    if module is not None and first == 1 and module.docstring:
        head.append(f'"""{summary(module.docstring)}"""')

    def line(symbol: Symbol) -> str:
        indent = "    " * (symbol.name.count(".") - top)
        return f"{indent}{_signature(symbol)}  # {_span(symbol.line, symbol.end_line)}"

    def doc(symbol: Symbol) -> list[str]:
        indent = "    " * (symbol.name.count(".") - top + 1)
        return [f'{indent}"""{summary(symbol.docstring)}"""'] if symbol.docstring else []

    full = [*head]
    for symbol in inside:
        full += [line(symbol), *doc(symbol)]
    bare = [*head, *(line(symbol) for symbol in inside[:MEMBERS])]
    if len(inside) > MEMBERS:
        bare.append(f"# … {len(inside) - MEMBERS} more definitions")
    outer = next(s for s in inside if s.name.count(".") == top)
    own = [pointer, line(outer), *doc(outer)]
    forms: list[str] = []
    for lines in (full, bare, own):
        text = "\n".join(lines)
        if not forms or len(text) < len(forms[-1]):
            forms.append(text)
    return tuple(forms)


def _signature(symbol: Symbol) -> str:
    text = symbol.signature or f"{symbol.kind} {symbol.short_name}"
    return " ".join(text.split())


def code_item(
    workspace: Workspace,
    document: Document,
    text: str,
    lines: tuple[int, int],
    anchor: str | None,
    session: MaskSession,
    base: SceneItem,
) -> SceneItem:
    """``base`` with what a code item carries: its language, lines and signatures."""
    forms = signature_forms(document, lines[0], lines[1], anchor)
    masked = tuple(session.mask(form, path=document.path) for form in forms)
    return attrs.evolve(base, language=document.language, lines=lines, signatures=masked)


def is_code(document: Document) -> bool:
    """Whether a document is code (a parser gave it a language that is not prose)."""
    return not document.prose


# --- related code ------------------------------------------------------------------------


def related_items(
    workspace: Workspace,
    card: Document,
    included: Sequence[tuple[str, str | None, tuple[int, int]]],
    *,
    stack: str,
    share: int,
    session: MaskSession,
    cost: Callable[[SceneItem, str, str], int],
    row: Callable[[SceneItem], int],
) -> tuple[list[SceneItem], dict[str, int]]:
    """The code the ranker finds for ``card`` beyond ``included`` (``(path, anchor,
    lines)`` of what the scene holds already), best first, within ``share`` tokens
    (each item's block and manifest ``row``): each whole while it fits, else as its
    signatures, else left out, the file of one of the first definitions whole in its
    place when it is small enough (:data:`WHOLE_FILE_SHARE`); at most
    :data:`MAX_RELATED`. And what the ranker left out by rule, per reason (tests,
    generated)."""
    from cuedeck.errors import CueError
    from cuedeck.models import left_out_of
    from cuedeck.scene.related import card_query, code_ranker
    from cuedeck.text import split_lines

    ranker = code_ranker(workspace) if share > 0 else None
    if ranker is None:
        return [], {}
    documents = workspace.documents
    cited = [(p, a) for p, a, _ in included if p in documents and is_code(documents[p])]
    ranked = ranker.rank(
        workspace, card_query(workspace, card, cited=cited, stack=stack, limit=RANKED)
    )
    left_out = left_out_of(ranked)
    taken: dict[str, list[tuple[int, int]]] = {}  # spans shown whole
    outlined: dict[str, list[tuple[int, int]]] = {}  # spans shown as signatures
    for path, _, lines in included:
        taken.setdefault(path, []).append(lines)
    texts: dict[str, list[str]] = {}
    found: list[SceneItem] = []
    left = share
    misses = 0
    met: list[str] = []  # files in the order their first definition came
    for entry in ranked:
        if len(found) >= MAX_RELATED or left <= 0:
            break
        spans = taken.setdefault(entry.path, [])
        shown = outlined.setdefault(entry.path, [])
        if any(not (entry.end_line < a or b < entry.line) for a, b in spans):
            continue  # the scene holds it, or holds what it is part of, already
        document = documents.get(entry.path)
        if document is None:
            continue
        if entry.path not in texts:
            try:
                texts[entry.path] = split_lines(workspace.snapshot(entry.path).text)
            except CueError:
                continue
        # An error's frames and their callers come as they are: precise, and first.
        pointed = dict(entry.parts).get("stack", 0.0) > 0
        if entry.path not in met and not pointed:
            met.append(entry.path)
        if (
            not spans
            and not pointed
            and is_code(document)
            and len(met) <= WHOLE_FILES
            and document.tokens <= WHOLE_FILE_SHARE * share
        ):
            whole_file = _whole_file(document, texts[entry.path], entry, session, cost, row)
            need = whole_file.tokens + row(whole_file)
            if need <= left:
                found.append(
                    code_item(
                        workspace, document, whole_file.text, whole_file.lines or (1, 1),
                        None, session, whole_file,
                    )
                )  # fmt: skip
                left -= need
                spans.append(whole_file.lines or (1, 1))
                continue
        text = "\n".join(texts[entry.path][entry.line - 1 : entry.end_line]).rstrip()
        item = SceneItem(
            entry.path,
            entry.name,
            PRIORITIES["related"],
            -1,
            text,
            0,
            document.sha256,
            role="related",
            title=document.title,
            language=document.language,
            lines=(entry.line, entry.end_line),
            note=f"related: {entry.why()}",
        )
        whole = cost(item, "section", text)
        container = entry.kind in CONTAINERS
        if whole + row(item) <= left:
            # Masked only when it may be kept (the placeholders cost about what they hide).
            text = session.mask(text, path=entry.path)
            item = attrs.evolve(item, text=text)
            whole = cost(item, "section", text)
        item = attrs.evolve(item, tokens=whole)
        need = whole + row(item)
        if need > left:
            if any(not (entry.end_line < a or b < entry.line) for a, b in shown):
                continue  # outlined already, with what it holds or is part of
            misses += 1
            if misses > MAX_MISSES:
                break  # the share is as full as signatures can make it
            text = session.mask(text, path=entry.path)
            item = attrs.evolve(item, text=text)
            item = code_item(
                workspace, document, text, item.lines or (1, 1), entry.name, session, item
            )
            # Related code compressed: a class as its own signature (its members are
            # ranked on their own); a function as its signatures, else its own.
            for form in item.signatures[-1:] if container else item.signatures[-2:]:
                small = cost(item, "signatures", form)
                compressed = attrs.evolve(
                    item,
                    text=form,
                    tokens=small,
                    form="signatures",
                    note=f"{item.note}; signatures: the full text needs {whole} tokens",
                    signatures=(),
                )
                need = small + row(compressed)
                if need <= left:
                    found.append(compressed)
                    left -= need
                    # Its members may still come whole: only outlines are kept apart.
                    shown.append((entry.line, entry.end_line))
                    break
            continue
        # Kept whole: its signatures too, for the pruner to fall back on.
        found.append(
            code_item(workspace, document, text, item.lines or (1, 1), entry.name, session, item)
        )
        left -= need
        spans.append((entry.line, entry.end_line))
    return found, left_out


def _whole_file(
    document: Document,
    lines: list[str],
    entry: RankedSymbol,
    session: MaskSession,
    cost: Callable[[SceneItem, str, str], int],
    row: Callable[[SceneItem], int],
) -> SceneItem:
    """The whole file of ``entry`` as a related item, masked, with its cost."""
    text = session.mask("\n".join(lines).rstrip(), path=document.path)
    item = SceneItem(
        document.path,
        None,
        PRIORITIES["related"],
        -1,
        text,
        0,
        document.sha256,
        role="related",
        title=document.title,
        language=document.language,
        lines=(1, max(len(lines), 1)),
        note=f"related: the file of {entry.name}, {entry.why()}",
    )
    return attrs.evolve(item, tokens=cost(item, "section", text))


# --- changes since a baseline ------------------------------------------------------------


def delta_items(
    workspace: Workspace,
    since: str,
    session: MaskSession,
    cost: Callable[[SceneItem, str, str], int],
) -> tuple[str, list[tuple[SceneItem, str]]]:
    """The baseline's label, and one item per file changed since ``since`` (its hunks),
    with the file's sha256 now ("" for a deleted file)."""
    from cuedeck.refs.delta import file_deltas, resolve_baseline

    baseline = resolve_baseline(workspace, since)
    documents = workspace.documents
    found: list[tuple[SceneItem, str]] = []
    for delta in file_deltas(workspace, baseline):
        document = documents.get(delta.path)
        digest = document.sha256 if document is not None else ""
        text = session.mask(delta.text or delta.summary(), path=delta.path)
        item = SceneItem(
            delta.path,
            None,
            PRIORITIES["delta"],
            -1,
            text,
            0,
            digest,
            role="delta",
            title=posixpath.basename(delta.path),
            language=DELTA_LANGUAGE,
            form="delta",
            note=f"since {baseline.label}: {delta.summary()}",
        )
        found.append((attrs.evolve(item, tokens=cost(item, "delta", text)), digest))
    return baseline.label, found


# --- labels of code references -----------------------------------------------------------


def code_labels(workspace: Workspace, sources: Iterable[str], *, record: bool) -> list[Label]:
    """The labels of the code references ``sources`` make; with ``record``, the ones
    seen for the first time are recorded (labelled ``new`` here, fresh from now on)."""
    from cuedeck.refs.drift import Labeller, record_references

    labeller = Labeller(workspace)
    chosen = list(dict.fromkeys(sources))
    labels = labeller.labels(chosen)
    if record:
        for source in sorted(
            {label.source for label in labels if label.state == "new" and label.current}
        ):
            record_references(workspace, source)
    return labels
