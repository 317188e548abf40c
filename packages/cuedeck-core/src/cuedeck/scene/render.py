"""Scene formats: markdown, XML and JSON renderers behind one protocol."""

from __future__ import annotations

import functools
import json
import re
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from cuedeck.scene.shapes import DIGIT, HASH_CHARS
from cuedeck.text import counted

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from cuedeck.models import Placement


@attrs.frozen
class Header:
    card: str
    card_path: str
    title: str
    token_limit: int
    counter: str
    exact: bool
    pruner: str
    format: str
    config: tuple[str, str] | None  # (path, sha256) of config.toml when it exists
    #: Dead references and anchors of included files: (path, line, message), masked.
    missing: tuple[tuple[str, int | None, str], ...] = ()
    #: Definitions the code ranker left out of related code by rule: (reason, count).
    left_out: tuple[tuple[str, int], ...] = ()


def left_out_text(left_out: Sequence[tuple[str, int]]) -> str:
    """What a code ranker left out by rule, in words: ``20 definitions in tests, 3 in
    generated files``."""
    where = {"tests": "in tests", "generated": "in generated files"}
    parts = [f"{count} {where.get(reason, reason)}" for reason, count in left_out]
    if parts:
        parts[0] = parts[0].replace(" ", " definitions ", 1)
    return ", ".join(parts)


def left_out_line(left_out: Sequence[tuple[str, int]]) -> str:
    """The manifest's line counting what related code left out by rule."""
    hint = (
        " (a card that names tests or cites one gets them)" if dict(left_out).get("tests") else ""
    )
    return f"Related code left out: {left_out_text(left_out)}{hint}."


def _short(digest: str) -> str:
    return digest[:HASH_CHARS]


def _note(placement: Placement) -> str:
    item = placement.item
    role = "active card" if item.role == "card" else item.role
    parts = [role]
    if item.note:
        parts[0] = item.note if item.note.startswith(role) else f"{role}, {item.note}"
    if placement.reason:
        parts.append(placement.reason)
    return "; ".join(parts)


def _tokens_cell(placement: Placement) -> str:
    if placement.tokens == placement.item.tokens:
        return str(placement.tokens)
    return f"{placement.tokens}/{placement.item.tokens}"


def _truncation(placements: Sequence[Placement], limit: int) -> str | None:
    from cuedeck.scene.pruners import full_mode

    dropped = sum(p.mode == "dropped" for p in placements)
    outlined = sum(p.mode == "outline" for p in placements)
    compressed = sum(p.mode == "signatures" and p.mode != full_mode(p.item) for p in placements)
    if not dropped and not outlined and not compressed:
        return None
    parts = []
    if outlined:
        parts.append(f"{outlined} outlined")
    if compressed:
        parts.append(f"{compressed} compressed to signatures")
    if dropped:
        parts.append(f"{dropped} dropped")
    return (
        f"Context truncated: {' and '.join(parts)} of {counted(len(placements), 'candidate')} "
        f"to fit the {limit}-token budget (see the manifest)."
    )


#: Dropped candidates and missing references a rendered manifest lists one by one; past
#: that it counts them (the manifest is part of the budget: one row per candidate of a
#: card citing 150 docs would crowd out the documents). ``cue scene --json`` has all.
LISTED_ROWS = 5
ALL_ROWS_HINT = "`cue scene --json` for all"


def _reason_kind(reason: str | None) -> str:
    """What a dropped candidate's reason says, without its numbers."""
    if reason is None:
        return "dropped"
    if reason.startswith("needs "):
        return "too large for the tokens left"
    return DIGIT.sub("N", reason)


@attrs.frozen
class Rows:
    """The manifest's rows as rendered: every placed candidate and the first dropped
    ones; the dropped ones past :data:`LISTED_ROWS` only counted, by reason."""

    listed: tuple[Placement, ...]
    more: int  # dropped candidates not listed
    reasons: tuple[tuple[str, int], ...]  # (reason, count) of those, most common first

    @classmethod
    def of(cls, placements: Sequence[Placement]) -> Rows:
        dropped = [p for p in placements if p.mode == "dropped"]
        if len(dropped) <= LISTED_ROWS + 1:  # a summary of one row saves nothing
            return cls(tuple(placements), 0, ())
        hidden = {id(p) for p in dropped[LISTED_ROWS:]}
        counts: dict[str, int] = {}
        for placement in dropped[LISTED_ROWS:]:
            kind = _reason_kind(placement.reason)
            counts[kind] = counts.get(kind, 0) + 1
        reasons = tuple(sorted(counts.items(), key=lambda pair: -pair[1]))
        listed = tuple(p for p in placements if id(p) not in hidden)
        return cls(listed, len(hidden), reasons)

    def summary(self) -> str | None:
        """One line for the dropped candidates not listed, or None."""
        if not self.more:
            return None
        why = "; ".join(f"{count} {reason}" for reason, count in self.reasons)
        return f"{self.more} more dropped, not listed ({why}): {ALL_ROWS_HINT}"


def _missing_rows(
    missing: Sequence[tuple[str, int | None, str]],
) -> tuple[Sequence[tuple[str, int | None, str]], str | None]:
    """The missing references listed, and a line counting the rest (or None)."""
    if len(missing) <= LISTED_ROWS + 1:
        return missing, None
    more = len(missing) - LISTED_ROWS
    return missing[:LISTED_ROWS], f"{counted(more, 'more missing reference')}: {ALL_ROWS_HINT}"


def secret_counts(text: str, placeholders: Mapping[str, str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for placeholder, rule in placeholders.items():
        found = text.count(placeholder)
        if found:
            counts[rule] = counts.get(rule, 0) + found
    return dict(sorted(counts.items()))


class Renderer(Protocol):
    """A scene format: one placed document as a block, and the whole scene as parts."""

    name: str

    def escape(self, text: str) -> str:
        """``text`` safe inside this format."""
        ...

    def block(self, placement: Placement) -> str:
        """How one placed document reads in the scene."""
        ...

    def parts(
        self,
        header: Header,
        placements: Sequence[Placement],
        used: int,
        secrets: Mapping[str, int],
        *,
        blocks: bool = True,
    ) -> list[str]:
        """The scene's lines and blocks; joined with newlines they are the scene."""
        ...


class MarkdownRenderer:
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
        elif placement.mode == "signatures":
            label += " · signatures"
            if item.form != "signatures":
                label += f" (the full text has {item.tokens} tokens)"
        elif placement.mode == "delta":
            label += " · changes"
        elif item.language is not None and item.lines is not None and item.anchor:
            label += f" · L{item.lines[0]}-L{item.lines[1]}"
        elif placement.mode == "section":
            label += " · section"
        fence = self._fence(placement.text)
        language = item.language if placement.mode != "signatures" else item.language or ""
        return f"## {label}\n\n{fence}{language or 'markdown'}\n{placement.text}\n{fence}\n"

    def parts(
        self,
        header: Header,
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
        rows = Rows.of(placements)
        for p in rows.listed:
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
        if more := rows.summary():
            out.extend([more, ""])
        if header.missing:
            missing, rest = _missing_rows(header.missing)
            out.append("Missing (references that lead nowhere, not in this scene):")
            for path, line, message in missing:
                out.append(f"- `{path}:{line}` {message}" if line else f"- `{path}` {message}")
            if rest:
                out.append(f"- {rest}")
            out.append("")
        if header.left_out:
            out.extend([left_out_line(header.left_out), ""])
        if header.config is not None:
            out.append(f"Config: `{header.config[0]}` {_short(header.config[1])}")
        masked = ", ".join(f"{rule} {n}" for rule, n in secrets.items()) or "none"
        out.append(f"Secrets masked: {masked}")
        return out


_BACKTICKS = re.compile(r"`{3,}")


class XmlRenderer:
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
            language=item.language,
            lines=f"L{item.lines[0]}-L{item.lines[1]}" if item.lines else None,
        )
        return f"<document {attributes}><![CDATA[\n{self.escape(placement.text)}\n]]></document>"

    def parts(
        self,
        header: Header,
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
        rows = Rows.of(placements)
        for p in rows.listed:
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
        if more := rows.summary():
            out.append(f"<more {_attributes(dropped=rows.more)}>{_xml_text(more)}</more>")
        missing, rest = _missing_rows(header.missing)
        for path, line, message in missing:
            where = _attributes(path=path, line=line)
            out.append(f"<missing {where}>{_xml_text(message)}</missing>")
        if rest:
            out.append(f"<more>{_xml_text(rest)}</more>")
        for reason, count in header.left_out:
            out.append(f"<left-out {_attributes(reason=reason, count=count)}/>")
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


class JsonRenderer:
    """JSON: the header fields, the documents with their text, and the manifest."""

    name = "json"

    @staticmethod
    def escape(text: str) -> str:
        return json.dumps(text, ensure_ascii=False)

    @staticmethod
    def document(placement: Placement) -> dict[str, Any]:
        item = placement.item
        found: dict[str, Any] = {
            "path": item.path,
            "anchor": item.anchor,
            "role": item.role,
            "priority": item.priority,
            "placed": placement.mode,
            "tokens": placement.tokens,
        }
        if item.language is not None:
            found["language"] = item.language
        if item.lines is not None:
            found["lines"] = f"L{item.lines[0]}-L{item.lines[1]}"
        found["text"] = placement.text
        return found

    def block(self, placement: Placement) -> str:
        # As it appears inside the "documents" list (indent=1, one level in).
        return json.dumps([self.document(placement)], ensure_ascii=False, indent=1)

    def parts(
        self,
        header: Header,
        placements: Sequence[Placement],
        used: int,
        secrets: Mapping[str, int],
        *,
        blocks: bool = True,
    ) -> list[str]:
        """The scene's lines and blocks; joined with newlines they are the scene."""
        rows = Rows.of(placements)
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
            for p in rows.listed
        ]
        manifest: dict[str, Any] = {"candidates": candidates}
        if more := rows.summary():
            manifest["more"] = {"dropped": rows.more, "note": more}
        if header.missing:
            missing, rest = _missing_rows(header.missing)
            manifest["missing"] = [
                {"path": path, "line": line, "message": message} for path, line, message in missing
            ]
            if rest:
                manifest["more_missing"] = rest
        if header.left_out:
            manifest["left_out"] = dict(header.left_out)
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


def render_scene(
    renderer: Renderer,
    header: Header,
    placements: Sequence[Placement],
    used: int,
    secrets: Mapping[str, int],
) -> str:
    return "\n".join(renderer.parts(header, placements, used, secrets)) + "\n"


RENDERERS: dict[str, Renderer] = {
    "markdown": MarkdownRenderer(),
    "xml": XmlRenderer(),
    "json": JsonRenderer(),
}


# --- building ----------------------------------------------------------------------------
