"""Frontmatter: the YAML block between ``---`` lines at the top of a markdown file.

The one place it is found and read, for the index (:mod:`cuedeck.markdown.document`), the scene's
outlines and every plugin that reads files of its own (cards). Values are read by one
safe YAML loader that keeps timestamps as the strings they were written as, so a file
round-trips them unchanged; :func:`quick` reads the common simple case (``key: value``
lines of plain words, quoted strings and flow lists) without YAML, and agrees with it
wherever it answers.

yaml is imported on first use: a process that reads no frontmatter never imports it.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any

from cuedeck.models import Problem

if TYPE_CHECKING:
    from collections.abc import Sequence

#: The tag YAML gives a plain string.
STR_TAG = "tag:yaml.org,2002:str"
#: Text that may be a plain (unquoted) YAML scalar, if YAML also reads it as a string.
PLAIN = re.compile(r"[\w/][\w ./+@-]*")
_SIMPLE_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):[ \t]+(.*?)[ \t]*")


def bounds(lines: Sequence[str]) -> tuple[int, int] | None:
    """Line indexes (0-based) of the opening and closing ``---`` (or ``...``) of the
    frontmatter block, or None when there is none (or it is never closed)."""
    if not lines or lines[0].rstrip() != "---":
        return None
    for index in range(1, len(lines)):
        if lines[index].rstrip() in ("---", "..."):
            return 0, index
    return None


def body_start(lines: Sequence[str]) -> int:
    """The 0-based index of the first line after the frontmatter (0 without one)."""
    found = bounds(lines)
    return found[1] + 1 if found is not None else 0


@functools.cache
def loader() -> Any:
    """The safe YAML loader of frontmatter: timestamps stay strings."""
    import yaml

    class FrontmatterLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
        pass

    FrontmatterLoader.yaml_implicit_resolvers = {
        first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    return FrontmatterLoader


def load(lines: Sequence[str], path: str) -> tuple[dict[str, Any], int, list[Problem]]:
    """The frontmatter mapping, the 1-based line where the body starts, and problems
    (1004 at the line of the YAML that is wrong)."""
    found = bounds(lines)
    if found is None:
        if lines and lines[0].rstrip() == "---":
            return {}, 1, [_problem(path, 1, "frontmatter starts with '---' but is never closed")]
        return {}, 1, []
    _, close = found
    source = "\n".join(lines[1:close])
    import yaml

    try:
        data = yaml.load(source, Loader=loader())
    except yaml.YAMLError as exc:
        # The construct that failed (an unclosed "[", say) beats where the parser gave up.
        mark = getattr(exc, "context_mark", None) or getattr(exc, "problem_mark", None)
        line = min(mark.line + 2, close) if mark is not None else 1
        reason = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return {}, close + 2, [_problem(path, line, f"frontmatter is not valid YAML: {reason}")]
    if data is None:
        return {}, close + 2, []
    if not isinstance(data, dict):
        kind = type(data).__name__
        return {}, close + 2, [_problem(path, 2, f"frontmatter must be a mapping, not a {kind}")]
    return {str(k): v for k, v in data.items()}, close + 2, []


def read(lines: Sequence[str], path: str) -> tuple[dict[str, Any], list[Problem]]:
    """The frontmatter mapping and its problems: :func:`quick` when it can, else
    :func:`load`."""
    found = quick(lines)
    if found is not None:
        return found, []
    data, _body, problems = load(lines, path)
    return data, problems


def quick(lines: Sequence[str]) -> dict[str, Any] | None:
    """The frontmatter of ``lines`` when every line is simple, else None (use :func:`load`).

    Simple means ``key: value`` lines (and comments or blank lines) whose values are
    plain words, quoted strings without escapes or flow lists of those, which is what
    cards written by CueDeck hold. It is about twenty times faster than YAML, which
    matters when thousands of files are read for the first time; tests check that it
    agrees with YAML wherever it answers.
    """
    if not lines or lines[0].rstrip() != "---":
        return None
    data: dict[str, Any] = {}
    for line in lines[1:]:
        if line.rstrip() in ("---", "..."):
            return data
        if not line.strip() or line.startswith("#"):
            continue
        match = _SIMPLE_LINE.fullmatch(line)
        if match is None or implicit_tag(match.group(1)) != STR_TAG:  # 'yes:' is a bool key
            return None
        raw = match.group(2)
        if raw.startswith("["):
            if not raw.endswith("]"):
                return None
            inner = raw[1:-1].strip()
            items = [_quick_scalar(item.strip()) for item in inner.split(",")] if inner else []
            if any(item is None for item in items):
                return None
            data[match.group(1)] = items
        else:
            value = _quick_scalar(raw)
            if value is None:
                return None
            data[match.group(1)] = value
    return None  # never closed: let YAML and the parser report it


@functools.lru_cache(maxsize=4096)  # frontmatter repeats the same words (todo, medium, ids)
def implicit_tag(text: str) -> str:
    """The tag YAML gives ``text`` written plain (``yes`` is a bool, ``2024-01-01`` a date)."""
    import yaml

    tag: str = _resolver().resolve(yaml.ScalarNode, text, (True, False))
    return tag


@functools.cache
def _resolver() -> Any:
    import yaml

    return yaml.resolver.Resolver()


def _quick_scalar(raw: str) -> str | None:
    if len(raw) >= 2 and raw[0] == raw[-1] == "'":
        inner = raw[1:-1]
        if "'" in inner.replace("''", ""):
            return None
        return inner.replace("''", "'") if _printable(inner) else None
    if len(raw) >= 2 and raw[0] == raw[-1] == '"':
        inner = raw[1:-1]
        return inner if '"' not in inner and "\\" not in inner and _printable(inner) else None
    if PLAIN.fullmatch(raw) and "  " not in raw and implicit_tag(raw) == STR_TAG:
        return raw
    return None


def _printable(text: str) -> bool:
    # Tabs, control characters and line separators: leave them to YAML.
    return text.isprintable() and "\u2028" not in text and "\u2029" not in text


def _problem(path: str, line: int, message: str) -> Problem:
    return Problem(
        severity="error",
        code=1004,
        path=path,
        line=line,
        message=message,
        help="fix the YAML between the '---' lines at the top of the file",
    )
