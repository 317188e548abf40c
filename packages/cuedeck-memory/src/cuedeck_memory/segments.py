"""Segments: one piece of an agent's context, and the file that holds it.

A segment file is markdown with a frontmatter, ``.cuedeck/memory/<project>/segments/
<id>.md``: the fields below as ``key: value`` lines (values written as JSON, which is
YAML too, so a person may edit them in either syntax), then the segment's text. What
the file holds is the truth; the index adds what can be derived (tokens, text hash)
and what every GC run updates (generation, survival count, last touch).
"""

from __future__ import annotations

import functools
import json
import os
import re
import secrets
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import attrs

from cuedeck.errors import InvalidInput
from cuedeck.progress import report

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

#: Segment types the reference knows; anything else is kept and weighted as a note.
TYPES = ("message", "code", "log", "decision", "note", "summary")
#: How readily a type is pruned (the GC score's type factor, in [0, 1]).
TYPE_WEIGHTS = {
    "log": 1.0,
    "message": 0.7,
    "code": 0.6,
    "note": 0.5,
    "summary": 0.3,
    "decision": 0.2,
}
TIERS = ("working", "stashed")
#: Generations by GC runs survived: young below 2, mature below 5, then old.
GENERATIONS = ((2, "young"), (5, "mature"))
OLD = "old"

PROJECT_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
SEGMENT_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
_PROJECT = re.compile(PROJECT_PATTERN)
_SEGMENT = re.compile(SEGMENT_PATTERN)
_ID_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
#: A string as a JSON literal without escaping non-ASCII (json's own C encoder).
_quote: Callable[[str], str] = json.encoder.encode_basestring

#: Frontmatter keys in the order they are written.
FILE_FIELDS = (
    "id",
    "type",
    "project_id",
    "task_id",
    "tags",
    "file_path",
    "line_range",
    "topic_id",
    "refs",
    "created_at",
    "pinned",
    "tier",
)


def type_weight(kind: str) -> float:
    """The GC type factor of ``kind`` (unknown types weigh as notes)."""
    return TYPE_WEIGHTS.get(kind, TYPE_WEIGHTS["note"])


def generation_of(survived: int) -> str:
    """The generation of a segment that survived ``survived`` GC runs."""
    for limit, name in GENERATIONS:
        if survived < limit:
            return name
    return OLD


def new_id(now: float) -> str:
    """A fresh segment id: 9 characters of time (sortable) and 6 random ones."""
    return new_ids(now, 1)[0]


def new_ids(now: float, count: int) -> list[str]:
    """``count`` fresh segment ids of one moment (one read of the random source)."""
    stamp = int(now * 1000)
    head = ""
    for _ in range(9):
        stamp, digit = divmod(stamp, 32)
        head = _ID_ALPHABET[digit] + head
    # 32 divides 256, so a random byte's low five bits are an unbiased letter.
    letters = "".join(_ID_ALPHABET[byte & 31] for byte in secrets.token_bytes(6 * count))
    return [f"{head}{letters[n : n + 6]}" for n in range(0, 6 * count, 6)]


_CARD_ID = re.compile(r"^[a-z0-9]{6}$")
_CARD_PATH = re.compile(r"(?:^|/)\.cuedeck/cards/([a-z0-9]{6})\.md$")


def card_of(ref: str) -> str | None:
    """The card id a reference names (``abc123``, ``@.cuedeck/cards/abc123.md``), or None."""
    target = ref.strip().removeprefix("@").split("#", 1)[0]
    if _CARD_ID.match(target):
        return target
    found = _CARD_PATH.search(target)
    return found.group(1) if found else None


def check_project(project_id: str) -> str:
    """``project_id`` if it can name a folder and holds no secret, else InvalidInput (1004).

    A project id is a key, written as it is to the store and to export folders' names,
    where masking cannot reach; so one that a masking rule recognises (a token pasted as
    a name) is refused rather than kept."""
    if not isinstance(project_id, str) or not _PROJECT.match(project_id):
        raise InvalidInput(
            f"{project_id!r} is not a project id (letters, digits, '.', '_', '-'; up to 64)",
            field="project_id",
        )
    rule = _secret_in(project_id)
    if rule is not None:
        raise InvalidInput(
            f"the project id holds what masking recognises as a secret ({rule}): it would be "
            "stored as it is",
            field="project_id",
            help="name the project after the work, not a credential",
        )
    return project_id


@functools.lru_cache(maxsize=256)
def _secret_in(project_id: str) -> str | None:
    """The masking rule that finds a secret in ``project_id`` (the built-in rules), or None."""
    from cuedeck.masking.session import MaskSession

    found = MaskSession().find(project_id)
    return found[0].rule if found else None


def valid_segment_id(segment_id: str) -> bool:
    """Whether ``segment_id`` can name a segment file."""
    return bool(_SEGMENT.match(segment_id))


def iso(timestamp: float) -> str:
    """``timestamp`` as ISO 8601 UTC with a ``Z``."""
    return datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="milliseconds")[:-6] + "Z"


def parse_time(value: Any, *, field: str) -> float:
    """An ISO 8601 time (or epoch seconds) as epoch seconds; naive times are UTC."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, datetime):
        when = value
    else:
        try:
            when = datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
        except ValueError:
            raise InvalidInput(f"{value!r} is not an ISO 8601 time", field=field) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.timestamp()


@attrs.frozen
class Segment:
    """One segment: the fields of its file, plus what the index derives and GC updates."""

    id: str
    type: str
    text: str
    project_id: str
    created_at: float
    task_id: str | None = None
    tags: tuple[str, ...] = ()
    file_path: str | None = None
    line_range: tuple[int, int] | None = None
    topic_id: str | None = None
    refs: tuple[str, ...] = ()
    pinned: bool = False
    tier: str = "working"
    # Derived or kept by the index:
    tokens: int = 0
    text_hash: str = ""
    last_touched_at: float = 0.0
    gc_survival_count: int = 0

    @property
    def generation(self) -> str:
        """young, mature or old, by GC runs survived."""
        return generation_of(self.gc_survival_count)

    @property
    def path(self) -> str:
        """The workspace-relative path of the segment's file."""
        from cuedeck_memory.paths import MEMORY_DIR

        return f"{MEMORY_DIR}/{self.project_id}/segments/{self.id}.md"


class SegmentFileError(ValueError):
    """A segment file that cannot be read: the message and the 1-based line."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


def _json(value: Any) -> str:
    """``value`` as ``json.dumps`` writes it (by hand: this runs for every field of every
    file a capture writes)."""
    if isinstance(value, str):
        return _quote(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return "[" + ", ".join(map(_quote, value)) + "]"
    return json.dumps(value, ensure_ascii=False)


def render_file(segment: Segment) -> str:
    """The text of ``segment``'s file."""
    line_range = segment.line_range
    values = (
        segment.id,
        segment.type,
        segment.project_id,
        segment.task_id,
        segment.tags,
        segment.file_path,
        list(line_range) if line_range else None,
        segment.topic_id,
        segment.refs,
        iso(segment.created_at),
        segment.pinned,
        segment.tier,
    )
    head = "\n".join(
        f"{key}: {_json(value)}" for key, value in zip(FILE_FIELDS, values, strict=True)
    )
    return f"---\n{head}\n---\n{segment.text}\n"


def _frontmatter(text: str) -> tuple[dict[str, Any], dict[str, int], str]:
    """The frontmatter values, each key's line, and the body of a segment file (without
    its last line end).

    Lines end at ``\n`` only (or ``\r\n`` throughout a file saved so): ``str.splitlines``
    would also split inside values at characters such as U+0085.
    """
    newline = "\r\n" if text.startswith("---\r\n") else "\n"
    opening, closing = f"---{newline}", f"{newline}---{newline}"
    if not text.startswith(opening):
        raise SegmentFileError("a segment file starts with a '---' frontmatter line", 1)
    end = text.find(closing, len(opening) - len(newline))
    if end < 0:
        if text.endswith(f"{newline}---"):
            end = len(text) - len(newline) - 3
        else:
            raise SegmentFileError("the frontmatter has no closing '---' line", 1)
    block = text[len(opening) : end + len(newline)].replace("\r\n", "\n")
    body = text[end + len(closing) :]
    body = body[: -len(newline)] if body.endswith(newline) else body
    rows = block.rstrip("\n").split("\n") if block else []
    values: dict[str, Any] = {}
    lines: dict[str, int] = {}
    fast = True
    for number, line in enumerate(rows, start=2):
        key, sep, raw = line.partition(": ")
        if not sep or not key.isidentifier():
            fast = False
            break
        try:
            values[key] = json.loads(raw)
        except ValueError:
            fast = False
            break
        lines[key] = number
    if not fast:  # written by hand in YAML syntax: core's one frontmatter reader
        from cuedeck.markdown import frontmatter

        loaded, _body, problems = frontmatter.load(["---", *rows, "---"], "")
        if problems:
            raise SegmentFileError(problems[0].message, problems[0].line or 2)
        values = loaded
        for number, text_line in enumerate(rows, start=2):
            name = text_line.split(":", 1)[0].strip()
            if name in values and name not in lines:
                lines[name] = number
    return values, lines, body


def _strings(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str | int) for v in value):
        return tuple(str(v) for v in value)
    return None


def parse_file(text: str, *, segment_id: str, project_id: str) -> Segment:
    """The segment in a file's ``text``; SegmentFileError naming the line if it is bad.

    ``segment_id`` and ``project_id`` come from the file's place; a frontmatter that
    names others is an error (a copied file must be renamed with its id).
    """
    values, lines, body = _frontmatter(text)

    def bad(key: str, message: str) -> SegmentFileError:
        return SegmentFileError(f"{key}: {message}", lines.get(key, 1))

    if values.get("id", segment_id) != segment_id:
        raise bad("id", f"{values['id']!r} differs from the file name {segment_id!r}")
    if values.get("project_id", project_id) != project_id:
        raise bad("project_id", f"{values['project_id']!r} differs from the folder {project_id!r}")
    kind = values.get("type", "note")
    if not isinstance(kind, str) or not kind:
        raise bad("type", "expected a word such as message, code, log, decision, note")
    optional: dict[str, str | None] = {}
    for key in ("task_id", "file_path", "topic_id"):
        value = values.get(key)
        if value is not None and not isinstance(value, str | int):
            raise bad(key, "expected a string or null")
        optional[key] = None if value is None else str(value)
    tags, refs = _strings(values.get("tags")), _strings(values.get("refs"))
    if tags is None:
        raise bad("tags", "expected a list of strings")
    if refs is None:
        raise bad("refs", "expected a list of strings")
    raw_range = values.get("line_range")
    line_range: tuple[int, int] | None = None
    if raw_range is not None:
        if (
            not isinstance(raw_range, list)
            or len(raw_range) != 2
            or not all(isinstance(n, int) and not isinstance(n, bool) for n in raw_range)
        ):
            raise bad("line_range", "expected [first, last] line numbers")
        line_range = (raw_range[0], raw_range[1])
    pinned = values.get("pinned", False)
    if not isinstance(pinned, bool):
        raise bad("pinned", "expected true or false")
    tier = values.get("tier", "working")
    if tier not in TIERS:
        raise bad("tier", f"expected one of {', '.join(TIERS)}")
    try:
        created = parse_time(values.get("created_at", 0), field="created_at")
    except InvalidInput as exc:
        raise bad("created_at", exc.message) from None
    return Segment(
        id=segment_id,
        type=kind,
        text=body,
        project_id=project_id,
        created_at=created,
        task_id=optional["task_id"],
        tags=tags,
        file_path=optional["file_path"],
        line_range=line_range,
        topic_id=optional["topic_id"],
        refs=refs,
        pinned=pinned,
        tier=tier,
    )


def read_segment_file(path: Path, *, segment_id: str, project: str) -> Segment:
    """The segment a file holds (line ends kept as written); SegmentFileError if bad."""
    with open(path, encoding="utf-8", newline="") as handle:
        return parse_file(handle.read(), segment_id=segment_id, project_id=project)


def read_folder(folder: Path, project: str) -> tuple[list[Segment], list[tuple[str, int, str]]]:
    """Every segment file of ``folder`` (``<id>.md``), and the (path, line, message) of
    those that cannot be read."""
    segments: list[Segment] = []
    problems: list[tuple[str, int, str]] = []
    names = sorted(n for n in os.listdir(folder) if n.endswith(".md") and not n.startswith("."))
    for n, name in enumerate(names):
        if n % 1000 == 0:
            report(n, len(names), "Reading memory segment files")
        segment_id = name[:-3]
        where = str(folder / name)
        if not (folder / name).resolve().is_relative_to(folder.resolve()):
            problems.append((where, 1, "a link that leaves the folder: not read"))
            continue
        if not valid_segment_id(segment_id):
            problems.append((where, 1, f"{segment_id!r} is not a segment id"))
            continue
        try:
            segments.append(
                read_segment_file(folder / name, segment_id=segment_id, project=project)
            )
        except UnicodeDecodeError as exc:
            problems.append((where, 1, f"not UTF-8 text: {exc.reason}"))
        except SegmentFileError as exc:
            problems.append((where, exc.line, exc.message))
    report(len(names), len(names), "Reading memory segment files")
    return segments, problems
