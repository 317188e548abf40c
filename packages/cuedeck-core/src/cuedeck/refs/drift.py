"""References to code and how they drift: the recorded state of each, and its label now.

A card or doc cites code as ``@code/path#Symbol``, ``@code/path#L120-L180`` or
``@code/path`` (``refs:`` takes the same without the ``@``). When such a reference is
recorded (``cue card update --ref``, ``update_task``, or the first scene that resolves
it), the state of what it names is written to ``.cuedeck/code-refs.json``: the symbol's
qualified name, its lines, the sha256 of those lines' bytes and a fingerprint (a short
hash of each line, whitespace-trimmed), per citing file. The record is project data,
committed beside the cards: people see it change in a diff, teammates share it, and
recording never edits the card a scene is being built from.

Compared with what the index holds now, each reference is labelled:

- ``fresh``: the same text at the same lines;
- ``moved``: the same text at other lines (for a line range: the cited text now lives
  elsewhere in the file);
- ``drifted``: the text changed since it was recorded (the fingerprints give the diff
  size: lines added and removed);
- ``orphaned``: what it named is gone; the likeliest new home is suggested (the same
  text anywhere, the same name, else the most similar text);
- ``new``: not recorded yet.
"""

from __future__ import annotations

import difflib
import hashlib
import posixpath
from typing import TYPE_CHECKING, Literal

import attrs

from cuedeck.models import LineRange, Problem, Symbol
from cuedeck.refs.coderecord import (
    Recorded,
    diff_size,
    fingerprint,
    likeness,
    line_chunks,
    line_hashes,
    now_stamp,
    read_record,
    write_record,
)

if TYPE_CHECKING:
    from collections.abc import Iterable

    from cuedeck.models import Document, Reference
    from cuedeck.workspace import Workspace

State = Literal["fresh", "moved", "drifted", "orphaned", "new"]
#: Problem codes (docs/errors.md).
DRIFTED, ORPHANED, LINES_MOVED = 1140, 1141, 1142
#: Candidates read and compared when looking for an orphan's new home.
SUGGESTION_POOL = 60
#: Least share of lines alike for "most similar text" to be suggested.
SIMILAR_FLOOR = 0.5


@attrs.frozen
class Current:
    """What a reference names now: its lines, their hash and fingerprint."""

    symbol: str | None
    lines: tuple[int, int]
    sha256: str
    fingerprint: str


@attrs.frozen
class Label:
    """A code reference of ``source`` (at ``line``), compared with its record."""

    state: State
    source: str
    line: int
    raw: str
    key: str  # path#anchor as written (the record's key)
    path: str
    anchor: str | None
    current: Current | None
    recorded: Recorded | None
    added: int = 0
    removed: int = 0
    suggestions: tuple[str, ...] = ()
    file_gone: bool = False

    def describe(self) -> str:
        """The label as one phrase: ``drifted: +3 -1 lines since 2026-11-20``."""
        day = self.recorded.recorded[:10] if self.recorded else ""
        if self.state == "moved" and self.recorded and self.current:
            before, now = _span(self.recorded.lines), _span(self.current.lines)
            return f"moved: {before} -> {now} (same text)"
        if self.state == "drifted":
            return f"drifted: +{self.added} -{self.removed} lines since {day}"
        if self.state == "orphaned":
            where = _span(self.recorded.lines) if self.recorded else "?"
            if self.file_gone or not self.anchor:
                gone = f"{self.path} is gone"
            else:
                gone = f"{self.path} has no {self.anchor}"
            home = f"; likeliest new home: {self.suggestions[0]}" if self.suggestions else ""
            return f"orphaned: {gone} (recorded at {where} on {day}){home}"
        return self.state


def _span(lines: tuple[int, int]) -> str:
    return f"L{lines[0]}-L{lines[1]}"


# --- labels ------------------------------------------------------------------------------


def code_references(document: Document) -> list[Reference]:
    """The ``@code/`` references of a document (and ``code/`` entries of ``refs:``)."""
    return [r for r in document.references if r.kind != "import" and r.cites_code]


def reference_key(reference: Reference) -> str:
    """``path#anchor`` as written: the key of a reference in the record."""
    return f"{reference.target}#{reference.anchor}" if reference.anchor else reference.target


class Labeller:
    """Labels the code references of a workspace against its record (one pass, cached)."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self.documents = workspace.documents
        self.record = read_record(workspace)
        self._bytes: dict[str, list[bytes] | None] = {}

    def lines_of(self, path: str) -> list[bytes] | None:
        """The lines of an indexed file as they are on disk (None when unreadable)."""
        if path not in self._bytes:
            from cuedeck.errors import CueError

            try:
                self._bytes[path] = line_chunks(self.workspace.snapshot(path).data)
            except CueError:
                self._bytes[path] = None
        return self._bytes[path]

    def current(self, path: str, anchor: str | None) -> Current | None:
        """What ``path#anchor`` names now, or None when it names nothing."""
        document = self.documents.get(path)
        if document is None:
            return None
        if anchor is None:
            lines = self.lines_of(path)
            if lines is None:
                return None
            return Current(None, (1, max(len(lines), 1)), document.sha256, fingerprint(lines))
        section = document.find_section(anchor)
        if section is None:
            return None
        lines = self.lines_of(path)
        if lines is None:
            return None
        chunk = lines[section.line - 1 : section.end_line]
        symbol = section.name if isinstance(section, Symbol) else None
        digest = (
            section.sha256
            if isinstance(section, Symbol) and section.sha256
            else hashlib.sha256(b"".join(chunk)).hexdigest()
        )
        return Current(symbol, (section.line, section.end_line), digest, fingerprint(chunk))

    def label(self, source: str, reference: Reference) -> Label:
        """The label of one code reference of ``source``."""
        key = reference_key(reference)
        recorded = self.record.get(source, {}).get(key)
        current = self.current(reference.target, reference.anchor)
        base = Label(
            "new",
            source,
            reference.line,
            reference.raw,
            key,
            reference.target,
            reference.anchor,
            current,
            recorded,
        )
        if recorded is None:
            return base
        if current is not None and current.sha256 == recorded.sha256:
            state: State = "fresh" if current.lines == recorded.lines else "moved"
            return attrs.evolve(base, state=state)
        if reference.anchor is None or current is None or current.symbol is None:
            # A line range (or a whole file, or a name now gone): is the text elsewhere
            # in the file?
            moved = self._find_lines(reference.target, recorded)
            if moved is not None:
                return attrs.evolve(base, state="moved", current=moved)
        if current is None:
            return attrs.evolve(
                base,
                state="orphaned",
                suggestions=self.suggest(reference, recorded),
                file_gone=reference.target not in self.documents,
            )
        added, removed = diff_size(recorded.fingerprint, current.fingerprint)
        return attrs.evolve(base, state="drifted", added=added, removed=removed)

    def _find_lines(self, path: str, recorded: Recorded) -> Current | None:
        """The recorded text at other lines of ``path``, if it is there whole."""
        lines = self.lines_of(path) if path in self.documents else None
        if not lines:
            return None
        size = recorded.lines[1] - recorded.lines[0] + 1
        wanted = line_hashes(recorded.fingerprint)
        if not wanted or size > len(lines):
            return None
        prints = line_hashes(fingerprint(lines))
        for start in range(len(lines) - size + 1):
            if prints[start : start + size] != wanted[:size]:
                continue
            chunk = b"".join(lines[start : start + size])
            if hashlib.sha256(chunk).hexdigest() == recorded.sha256:
                span = (start + 1, start + size)
                return Current(recorded.symbol, span, recorded.sha256, recorded.fingerprint)
        return None

    def suggest(self, reference: Reference, recorded: Recorded) -> tuple[str, ...]:
        """Where an orphaned reference's text likely lives now, best first: the same text
        anywhere, then the same name, then the most similar text nearby."""
        name = recorded.symbol or (reference.anchor or "")
        short = name.rpartition(".")[2]
        exact: list[str] = []
        pool: list[tuple[int, str, Symbol | None]] = []  # (closeness, path, symbol)
        folder = posixpath.dirname(reference.target)
        base = posixpath.basename(reference.target)
        for path, document in self.documents.items():
            if recorded.symbol is None and reference.anchor is None:
                # A whole file: the same bytes, or the same name, elsewhere.
                if document.sha256 == recorded.sha256:
                    exact.append(path)
                elif posixpath.basename(path) == base:
                    pool.append((0, path, None))
                continue
            for symbol in document.symbols:
                if symbol.sha256 == recorded.sha256:
                    exact.append(f"{path}#{symbol.name}")
                elif symbol.kind == "module":
                    continue
                elif symbol.short_name == short:
                    pool.append((0, path, symbol))
                elif path == reference.target:
                    pool.append((1, path, symbol))
                elif posixpath.dirname(path) == folder and _close(symbol.short_name, short):
                    pool.append((2, path, symbol))
        if exact:
            return tuple(f"{home} (same text)" for home in exact[:3])
        pool.sort(key=lambda found: found[0])
        scored: list[tuple[float, int, str, str]] = []
        for _, path, candidate in pool[:SUGGESTION_POOL]:
            lines = self.lines_of(path)
            if lines is None:
                continue
            chunk = lines[candidate.line - 1 : candidate.end_line] if candidate else lines
            alike = likeness(recorded.fingerprint, fingerprint(chunk))
            same_name = candidate is not None and candidate.short_name == short
            if alike < SIMILAR_FLOOR and not same_name:
                continue
            where = f"{path}#{candidate.name}" if candidate else path
            why = "same name, " if same_name else ""
            scored.append((-alike, -same_name, where, f"{why}{alike:.0%} of lines alike"))
        scored.sort()
        return tuple(f"{where} ({why})" for _, _, where, why in scored[:3])

    def labels(self, sources: Iterable[str] | None = None) -> list[Label]:
        """Labels of every code reference of ``sources`` (default: every document)."""
        chosen = list(self.documents) if sources is None else list(sources)
        found = []
        for source in chosen:
            document = self.documents.get(source)
            if document is None:
                continue
            for reference in code_references(document):
                found.append(self.label(source, reference))
        return found


def _close(a: str, b: str) -> bool:
    return difflib.SequenceMatcher(None, a.lower(), b.lower()).ratio() >= 0.75


def label_references(workspace: Workspace, sources: Iterable[str] | None = None) -> list[Label]:
    """The label of every code reference of ``sources`` (default: every document)."""
    return Labeller(workspace).labels(sources)


def record_references(
    workspace: Workspace,
    source: str,
    *,
    keys: Iterable[str] | None = None,
    replace: bool = False,
) -> list[Label]:
    """Record the code references of ``source`` that resolve and have no record yet
    (with ``replace``: those named by ``keys`` again, accepting their drift); records of
    references ``source`` no longer makes are removed. Returns the labels as they were
    before recording."""
    labeller = Labeller(workspace)
    labels = labeller.labels([source])
    wanted = None if keys is None else set(keys)
    changes: dict[str, Recorded | None] = {}
    stamp = now_stamp()
    for label in labels:
        if wanted is not None and label.key not in wanted:
            continue
        if label.state == "fresh" or (label.recorded is not None and not replace):
            continue
        # What the reference names now (a moved line range's label points elsewhere).
        current = labeller.current(label.path, label.anchor)
        if current is None:
            continue
        changes[label.key] = Recorded(
            current.symbol, current.lines, current.sha256, current.fingerprint, stamp
        )
    written = {label.key for label in labels}
    for key in labeller.record.get(source, {}):
        if key not in written:
            changes[key] = None
    if changes:
        write_record(workspace, {source: changes})
    return labels


# --- doctor ------------------------------------------------------------------------------


def _card_id(source: str) -> str:
    """The id of the card at ``source``, or ``ID`` for a reference made elsewhere."""
    from cuedeck.layout import CARD_ID, card_path

    stem = posixpath.splitext(posixpath.basename(source))[0]
    return stem if CARD_ID.match(stem) and card_path(stem) == source else "ID"


def drift_problems(workspace: Workspace) -> list[Problem]:
    """``cue doctor``'s findings: drifted references (warning 1140), orphaned ones (error
    1141, with the likeliest new home) and line ranges whose text moved (warning 1142)."""
    problems = []
    for label in label_references(workspace):
        if label.state == "drifted":
            problems.append(
                Problem(
                    "warning",
                    DRIFTED,
                    label.source,
                    label.line,
                    f"code reference {label.raw!r} {label.describe()}",
                    f"read it again, then record it anew: cue card update "
                    f"{_card_id(label.source)} --ref {_spec(label)}",
                )
            )
        elif label.state == "orphaned":
            home = label.suggestions[0].partition(" (")[0] if label.suggestions else None
            problems.append(
                Problem(
                    "error",
                    ORPHANED,
                    label.source,
                    label.line,
                    f"code reference {label.raw!r} {label.describe()}",
                    f"point it at code/{home}" if home else "remove it or point it elsewhere",
                )
            )
        elif (
            label.state == "moved"
            and label.current
            and LineRange.parse(label.anchor or "", 1 << 30)
        ):
            problems.append(
                Problem(
                    "warning",
                    LINES_MOVED,
                    label.source,
                    label.line,
                    f"code reference {label.raw!r} {label.describe()}",
                    f"cite code/{label.path}#{_span(label.current.lines)}, or the symbol by name",
                )
            )
    return problems


def _spec(label: Label) -> str:
    return f"code/{label.key}"


# --- checking a reference before it is recorded ------------------------------------------


def spec_key(spec: str) -> str | None:
    """The record key of a ``refs:`` entry when it cites code (``code/...``), else None."""
    from cuedeck.markdown.document import parse_ref_spec

    bare = spec.strip().removeprefix("@")
    parsed = parse_ref_spec(bare) if bare.startswith("code/") else None
    if parsed is None:
        return None
    target, anchor = parsed
    return f"{target}#{anchor}" if anchor else target


def check_code_spec(workspace: Workspace, spec: str) -> str | None:
    """The record key of ``spec`` if it cites code that exists now; FileNotFound (1001)
    with the closest paths or symbols when it does not; None for a reference to a doc."""
    from cuedeck.errors import FileNotFound, did_you_mean, suggestion_text

    key = spec_key(spec)
    if key is None:
        return None
    path, _, anchor = key.partition("#")
    documents = workspace.documents
    document = documents.get(path)
    if document is None:
        matches = did_you_mean(path, documents)
        raise FileNotFound(
            f"{spec!r} cites {path}, which is not in the workspace index",
            path=path,
            field="refs",
            suggestion=suggestion_text(matches),
            candidates=matches,
        )
    if anchor and document.find_section(anchor) is None:
        matches = did_you_mean(anchor, document.anchors)
        raise FileNotFound(
            f"{spec!r}: {path} has no symbol or line range {anchor!r}",
            path=path,
            field="refs",
            suggestion=suggestion_text(matches),
            candidates=matches,
        )
    return key
