"""The record of code references: what each one named when it was recorded.

``.cuedeck/code-refs.json`` holds, per citing file and reference (``path#anchor`` as
written), the symbol, its lines, the sha256 of those lines' bytes and a fingerprint: a
short hash of each line, whitespace-trimmed, from which the size of a later change and
the likeness of other code are measured without the recorded text. It is written
through core's one write path, sorted, so that a diff of it reads well
(:mod:`cuedeck.refs.drift` labels the references against it).
"""

from __future__ import annotations

import difflib
import hashlib
import json
import time
from typing import TYPE_CHECKING, Any

import attrs

from cuedeck.layout import CODE_REFS_PATH
from cuedeck.models import LineRange

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from cuedeck.workspace import Workspace

RECORD_VERSION = 1
#: Hex digits of each line's hash in a fingerprint (16 bits: a line of a symbol is
#: told apart from its neighbours, and a record stays small).
LINE_HASH = 4
#: Lines of a fingerprint at most (a whole-file reference to a huge file is cut here).
FINGERPRINT_LINES = 4000


@attrs.frozen
class Recorded:
    """What a reference named when it was recorded."""

    symbol: str | None  # qualified name (None: a line range or a whole file)
    lines: tuple[int, int]
    sha256: str
    fingerprint: str
    recorded: str  # UTC, ISO 8601 to the second

    def to_json(self) -> dict[str, Any]:
        return {
            "symbol": self.symbol,
            "lines": f"L{self.lines[0]}-L{self.lines[1]}",
            "sha256": self.sha256,
            "fingerprint": self.fingerprint,
            "recorded": self.recorded,
        }

    @classmethod
    def from_json(cls, value: Any) -> Recorded | None:
        if not isinstance(value, dict):
            return None
        lines = LineRange.parse(str(value.get("lines", "")), 1 << 30)
        sha = value.get("sha256")
        if lines is None or not isinstance(sha, str):
            return None
        symbol = value.get("symbol")
        return cls(
            symbol if isinstance(symbol, str) else None,
            (lines.line, lines.end_line),
            sha,
            str(value.get("fingerprint", "")),
            str(value.get("recorded", "")),
        )


def now_stamp() -> str:
    """The current UTC time as recorded (ISO 8601, seconds, ``Z``)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


# --- text, hashes and fingerprints -------------------------------------------------------


def line_chunks(data: bytes) -> list[bytes]:
    """The lines of ``data`` with their ``\\n`` (the parser's line numbering)."""
    chunks = data.split(b"\n")
    lines = [chunk + b"\n" for chunk in chunks[:-1]]
    if chunks[-1]:
        lines.append(chunks[-1])
    return lines


def fingerprint(lines: Iterable[bytes]) -> str:
    """A short hash per line (whitespace-trimmed, so reindenting is no change)."""
    parts = []
    for number, line in enumerate(lines):
        if number >= FINGERPRINT_LINES:
            break
        trimmed = b" ".join(line.split())
        parts.append(hashlib.blake2s(trimmed, digest_size=4).hexdigest()[:LINE_HASH])
    return "".join(parts)


def line_hashes(value: str) -> list[str]:
    """A fingerprint's line hashes, one a line."""
    return [value[i : i + LINE_HASH] for i in range(0, len(value), LINE_HASH)]


def diff_size(before: str, after: str) -> tuple[int, int]:
    """Lines added and removed between two fingerprints."""
    old, new = line_hashes(before), line_hashes(after)
    added = removed = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(
        None, old, new, autojunk=False
    ).get_opcodes():
        if tag != "equal":
            removed += i2 - i1
            added += j2 - j1
    return added, removed


def likeness(before: str, after: str) -> float:
    """Share of lines two fingerprints have in common (0 to 1)."""
    old, new = line_hashes(before), line_hashes(after)
    if not old or not new:
        return 0.0
    return difflib.SequenceMatcher(None, old, new, autojunk=False).ratio()


# --- the record file ---------------------------------------------------------------------


def read_record(workspace: Workspace) -> dict[str, dict[str, Recorded]]:
    """``source -> key -> Recorded`` from ``.cuedeck/code-refs.json`` (empty when absent
    or unreadable: every reference is then ``new``)."""
    try:
        data = (workspace.root / CODE_REFS_PATH).read_bytes()
    except OSError:
        return {}
    return _parse_record(data)


def _parse_record(data: bytes | None) -> dict[str, dict[str, Recorded]]:
    try:
        value = json.loads(data.decode("utf-8")) if data else None
    except (UnicodeDecodeError, ValueError):
        return {}
    references = value.get("references") if isinstance(value, dict) else None
    if not isinstance(references, dict):
        return {}
    found: dict[str, dict[str, Recorded]] = {}
    for source, entries in references.items():
        if not isinstance(entries, dict):
            continue
        for key, entry in entries.items():
            recorded = Recorded.from_json(entry)
            if recorded is not None:
                found.setdefault(str(source), {})[str(key)] = recorded
    return found


def write_record(
    workspace: Workspace, changes: Mapping[str, Mapping[str, Recorded | None]]
) -> None:
    """Apply ``source -> key -> Recorded`` (None removes) to the record file, through the
    write path (so two recorders queue, and the second sees the first's entries)."""
    from cuedeck.writes import rewrite_file

    def change(current: bytes | None) -> str | None:
        record = _parse_record(current)
        for source, entries in changes.items():
            mine = record.setdefault(source, {})
            for key, value in entries.items():
                if value is None:
                    mine.pop(key, None)
                else:
                    mine[key] = value
            if not mine:
                record.pop(source)
        payload = {
            "version": RECORD_VERSION,
            "references": {
                source: {key: record[source][key].to_json() for key in sorted(record[source])}
                for source in sorted(record)
            },
        }
        text = json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
        return None if current is not None and text.encode("utf-8") == current else text

    rewrite_file(workspace.root, CODE_REFS_PATH, change, display=CODE_REFS_PATH)
