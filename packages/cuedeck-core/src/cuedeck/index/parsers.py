"""Parsers: which registered parser reads a file, and what it is given.

A parser maps a kind of file (``patterns``: globs such as ``*.md`` or ``*.py``) to a
function ``parse(path, data, context) -> Document``. Plugins register them with
``register_parsers``; core registers ``markdown``. The index asks :class:`Parsers` which
parser claims each path, and calls it in forked workers on a cold start, so a parser
must build any heavy object (a tree-sitter parser, say) on first use in its process.
"""

from __future__ import annotations

import fnmatch
import hashlib
import re
from typing import TYPE_CHECKING, Any, Protocol

import attrs

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable, Mapping
    from pathlib import Path

    from cuedeck.models import Document
    from cuedeck.settings import Config


class ParseFunction(Protocol):
    """Reads one file's bytes into the document the index stores."""

    def __call__(self, path: str, data: bytes, context: ParseContext) -> Document: ...


class SkipFile(Exception):
    """Raised by a parser for a file it will not index (generated, minified...).

    ``reason`` is a short key (``generated``) that ``cue index --json`` counts;
    ``detail`` says why in words.
    """

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(detail or reason)
        self.reason = reason
        self.detail = detail or reason


@attrs.frozen
class ParseContext:
    """What a parser is given besides the file: the index's token counter, the
    workspace-relative paths the index covers (to resolve imports against) and the
    workspace's config (None outside a workspace)."""

    count_tokens: Callable[[str], int]
    paths: Collection[str] = frozenset()
    config: Config | None = None


@attrs.frozen
class Parser:
    """A registered parser: its name, the files it claims and its function.

    ``select(root, config)``, when given, is called once per refresh and returns a
    function ``(path, size) -> reason | None`` that leaves files out before they are read
    (vendored folders, files over a size cap). ``deferred_counts``: the parser's only count
    is the document's ``tokens``, of the file's whole decoded text, so a large refresh may
    give it a counter that answers ``-1`` and count on first read instead.
    """

    name: str
    parse: ParseFunction
    patterns: tuple[str, ...]
    plugin: str = ""
    select: Callable[[Path, Config], Callable[[str, int], str | None]] | None = None
    deferred_counts: bool = False
    #: What the parser's output depends on besides the file (its code, its grammars), as
    #: the plugin states it: a new revision parses every file it claims again.
    revision: str = ""
    #: Which paths, coming or going, change what it made of its files (references it
    #: resolved against ``ParseContext.paths``): its files are parsed again then.
    resolves_against: Callable[[str], bool] | None = None


def _by_suffix(pattern: str) -> str | None:
    """The suffix a plain ``*.ext`` pattern stands for, else None."""
    if pattern.startswith("*.") and not any(c in pattern[1:] for c in "*?[]/"):
        return pattern[1:]
    return None


class Parsers:
    """The registered parsers, matched against paths (later registrations win, so a
    plugin may claim a kind of file core already reads)."""

    def __init__(self, parsers: Iterable[Parser]) -> None:
        self.all: dict[str, Parser] = {p.name: p for p in parsers}
        self._suffixes: dict[str, Parser] = {}
        self._globs: list[tuple[re.Pattern[str], bool, Parser]] = []
        for parser in self.all.values():
            for pattern in parser.patterns:
                suffix = _by_suffix(pattern)
                if suffix is not None:
                    self._suffixes[suffix] = parser
                else:
                    whole = "/" in pattern
                    regex = re.compile(fnmatch.translate(pattern.lstrip("/")))
                    self._globs.insert(0, (regex, whole, parser))
        # Longest suffixes first, so ``*.d.ts`` beats ``*.ts``.
        self._suffix_order = sorted(self._suffixes, key=len, reverse=True)
        self._dots = {s.count(".") for s in self._suffixes}

    def __bool__(self) -> bool:
        return bool(self.all)

    def claim(self, path: str) -> Parser | None:
        """The parser that reads ``path`` (workspace-relative), or None."""
        name = path.rpartition("/")[2]
        for regex, whole, parser in self._globs:
            if regex.match(path if whole else name):
                return parser
        if "." in name:
            for dots in self._dots:
                parts = name.rsplit(".", dots)
                if len(parts) == dots + 1:
                    found = self._suffixes.get("." + ".".join(parts[1:]))
                    if found is not None:
                        return found
        return None

    def fingerprint(self) -> str:
        """Names, patterns and revisions of every parser, as the index records them: a
        change rebuilds the cache."""
        return ";".join(
            f"{name}={','.join(sorted(p.patterns))}@{p.plugin}"
            + (f"#{p.revision}" if p.revision else "")
            for name, p in sorted(self.all.items())
        )

    def key(self) -> str:
        """A short digest of :meth:`fingerprint`: caches made from parsed documents (search's
        sections, the code graph) record it and are made again when it changes."""
        return hashlib.sha256(self.fingerprint().encode()).hexdigest()[:16]


def build_parsers(registered: Mapping[str, Any]) -> Parsers:
    """:class:`Parsers` from what ``register_parsers`` gathered (name -> Registered)."""
    from cuedeck.errors import InvalidInput

    found = []
    for name, entry in registered.items():
        patterns = entry.options.get("patterns")
        if isinstance(patterns, str):
            patterns = [patterns]
        if not patterns or not all(isinstance(p, str) and p for p in patterns):
            raise InvalidInput(
                f"register_parsers: plugin {entry.plugin!r} registered {name!r} without patterns",
                field="patterns",
                help="pass the globs of the files it reads: "
                'register(name, parse, patterns=["*.x"])',
            )
        if not callable(entry.item):
            raise InvalidInput(
                f"register_parsers: {name!r} of plugin {entry.plugin!r} is not callable",
                field="parse",
            )
        found.append(
            Parser(
                name=name,
                parse=entry.item,
                patterns=tuple(patterns),
                plugin=entry.plugin,
                select=entry.options.get("select"),
                deferred_counts=bool(entry.options.get("deferred_counts", False)),
                revision=str(entry.options.get("revision") or ""),
                resolves_against=entry.options.get("resolves_against"),
            )
        )
    return Parsers(found)
