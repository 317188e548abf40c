"""Reading files for a refresh of the index: each file's bytes hashed, then parsed by the
parser that claims it, into what the index stores.

:class:`FileReader` runs in forked workers on a cold start (:func:`cuedeck.system.parallel.
map_chunks`), so it changes nothing: it returns one :data:`Outcome` per file and the
index applies them.
"""

from __future__ import annotations

import json
import zlib
from typing import TYPE_CHECKING, Any

import attrs

from cuedeck.index.left_out import NOT_INDEXED, binary, binary_file, unreadable
from cuedeck.index.parsers import SkipFile
from cuedeck.index.store import uncounted
from cuedeck.models import Problem, converter
from cuedeck.writes import sha256_bytes

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

    from cuedeck.index.parsers import ParseContext, Parsers
    from cuedeck.index.walk import FileStat
    from cuedeck.models import Document
    from cuedeck.system.parallel import Tick

#: What a refresh found of one file: ``(path, stat, kind, detail)``. ``kind`` is
#: ``parsed`` (detail: sha256, language and the stored data), ``same`` (content
#: unchanged), ``passed over`` (detail: the parser's reason), ``left out`` (detail: the
#: Problem saying why) or ``gone``.
Outcome = tuple[str, "FileStat", str, Any]


@attrs.frozen
class FileReader:
    """Reads, hashes and parses files. ``sha_of(path)`` is the indexed file's sha256 (a
    file whose bytes still hash to it is ``same``); ``defer``: give parsers that count
    only the whole text (``deferred_counts``) a counter that leaves counts to the first
    read, as a large refresh does."""

    root: Path
    parsers: Parsers
    context: ParseContext
    sha_of: Callable[[str], str | None]
    defer: bool = False
    #: Files parsed again even when their bytes are the same (what they resolve against
    #: changed: :meth:`cuedeck.index.parsed.Index.refresh`).
    again: frozenset[str] = frozenset()

    def __call__(self, files: Sequence[tuple[str, FileStat]], tick: Tick) -> list[Outcome]:
        """What became of each of ``files`` (``tick(done)`` after each)."""
        outcomes: list[Outcome] = []
        deferred = attrs.evolve(self.context, count_tokens=uncounted) if self.defer else None
        for done, (path, stat) in enumerate(files, start=1):
            try:
                data = (self.root / path).read_bytes()
            except FileNotFoundError:
                outcomes.append((path, stat, "gone", None))
            except OSError as exc:
                outcomes.append((path, stat, "left out", unreadable(path, exc)))
            else:
                if binary(data):
                    outcomes.append((path, stat, "left out", binary_file(path)))
                elif path not in self.again and self.sha_of(path) == sha256_bytes(data):
                    outcomes.append((path, stat, "same", None))
                else:
                    outcomes.append((path, stat, *self.parse(path, data, deferred)))
            tick(done)
        return outcomes

    def parse(self, path: str, data: bytes, deferred: ParseContext | None) -> tuple[str, Any]:
        """``(kind, detail)`` of an :data:`Outcome` for a file's bytes (``deferred``: the
        context whose counter leaves counts for the first read)."""
        parser = self.parsers.claim(path)
        if parser is None:  # a file a reference brought in (Index.adopt): plain lines
            from cuedeck.index.lines import parse_lines

            return _parsed(parse_lines(path, data, deferred or self.context))
        context = deferred if deferred is not None and parser.deferred_counts else self.context
        try:
            document = parser.parse(path, data, context)
        except SkipFile as skip:
            return "passed over", skip.reason
        except Exception as exc:  # a plugin's parser must not stop the index
            return "left out", parser_failed(path, parser.name, exc)
        return _parsed(document)


def _parsed(document: Document) -> tuple[str, Any]:
    """``(kind, detail)`` of a parsed document: its sha256, language and stored data."""
    blob = json.dumps(converter.unstructure(document)).encode("utf-8")
    language = document.language or "markdown"
    return "parsed", (document.sha256, language, zlib.compress(blob, 6))


def parser_failed(path: str, parser: str, error: Exception) -> Problem:
    """The warning for a file whose parser raised."""
    return Problem(
        "warning",
        NOT_INDEXED,
        path,
        None,
        f"not indexed: parser {parser!r} failed on it ({type(error).__name__}: {error})",
        "report it to the parser's plugin, or leave the file out with [index] exclude",
    )
