"""The parsed index: every file of the workspace a parser reads, cached in SQLite.

The cache (:mod:`cuedeck.index.store`) holds one row per file (path, mtime, size,
sha256, language and the parsed :class:`~cuedeck.models.Document` as JSON), and one per
file a parser passed over (generated, minified), so a refresh does not read it again
while it is unchanged. A refresh re-reads a file only when its mtime or size changed, and
re-parses it only when its sha256 changed too. A refresh of many files leaves exact token
counts of markdown for each document's first read. A cache that is corrupt or from
another schema, counter or set of parsers is rebuilt, with a warning.
Reading the stored documents is :class:`~cuedeck.index.documents.IndexDocuments` (its base).
"""

from __future__ import annotations

import json
import logging
import time
from typing import TYPE_CHECKING

import attrs

from cuedeck.index.coverage import Exclusion, admitted, explain, not_indexed
from cuedeck.index.documents import IndexDocuments
from cuedeck.index.globs import Globs
from cuedeck.index.left_out import left_out_reason
from cuedeck.index.parsers import ParseContext, Parsers
from cuedeck.index.reader import FileReader
from cuedeck.index.store import DEFER_COUNTS, SCHEMA_VERSION, UNCOUNTED, Update
from cuedeck.index.walk import FileStat, Unread, walk_files
from cuedeck.layout import CORE_PLACES, INDEX_LOCK, Places
from cuedeck.system.parallel import map_chunks
from cuedeck.watch.watcher import IDLE_SECONDS, ask, changes_seen, supported, write_stamp
from cuedeck.writes import locked, sha256_bytes

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable, Sequence
    from pathlib import Path

    from cuedeck.index.rows import Row
    from cuedeck.models import Problem
    from cuedeck.settings import Config, IndexSettings

log = logging.getLogger("cuedeck")

__all__ = ["DEFER_COUNTS", "SCHEMA_VERSION", "UNCOUNTED", "Index", "RefreshStats"]


@attrs.frozen
class RefreshStats:
    """What one refresh did."""

    seen: int
    parsed: int
    reused: int
    removed: int
    seconds: float
    rebuilt: bool = False


class Index(IndexDocuments):
    """The workspace's documents, kept in step with the files by :meth:`refresh`."""

    def __init__(
        self,
        root: Path,
        settings: IndexSettings,
        *,
        counter_name: str,
        count_tokens: Callable[[str], int],
        parsers: Parsers,
        config: Config | None = None,
        places: Places = CORE_PLACES,
    ) -> None:
        super().__init__(root, count_tokens)
        #: What no tool reads (core's places and the plugins'): left out of the walk.
        self.places = places
        self.settings = settings
        self.counter_name = counter_name
        self.parsers = parsers
        self.config = config
        self._loaded = False
        #: What the last refresh left out (links leaving the workspace, binary or
        #: unreadable files), as warnings for ``cue doctor``.
        self.left_out: list[Problem] = []
        #: Ask the workspace's watcher what changed instead of walking (and start one
        #: when none runs): for short-lived commands (:mod:`cuedeck.watch.watcher`).
        self.watch = False
        #: The watcher's id and change number these rows are in step with, in this
        #: process (the stamp on disk may be another process's): see :meth:`catch_up`.
        self.followed: tuple[str, int] | None = None
        #: Files a parser's selector or the parser itself passed over, by reason
        #: (``vendored``, ``generated``...), as of the last refresh.
        self.passed_over: dict[str, list[str]] = {}
        #: What the last walk saw and did not read (no parser, ignored, excluded).
        self.unread = Unread()
        self._passed: dict[str, tuple[FileStat, str]] = {}  # path -> (stat, reason)
        self._context: ParseContext | None = None

    # -- storage ---------------------------------------------------------------------------

    def _expected_meta(self) -> dict[str, str]:
        return {
            "schema": str(SCHEMA_VERSION),
            "counter": self.counter_name,
            "parsers": self.parsers.fingerprint(),
        }

    def _settings_key(self) -> str:
        """A digest of the config: files passed over under other settings are read again."""
        if self.config is None:
            return ""
        fields = attrs.asdict(self.config, filter=lambda a, _: a.name not in ("lines", "warnings"))
        return sha256_bytes(json.dumps(fields, sort_keys=True, default=str).encode())[:16]

    def _load(self) -> bool:
        """Open the cache, its rows left for when they are needed; False (and a warning)
        when it had to be discarded."""
        passed = self.store.load(self._expected_meta(), self._settings_key())
        if passed is None:
            return False
        self._rows.reset(stored=True)
        self._passed = {path: (stat, reason) for path, stat, reason in passed}
        return True

    def _discard(self) -> None:
        self.store.discard()
        self._rows.reset(stored=False)
        self._documents = {}
        self._passed = {}

    # -- refresh ---------------------------------------------------------------------------

    def refresh(
        self, *, rebuild: bool = False, progress: Callable[[int, int], None] | None = None
    ) -> RefreshStats:
        """Bring the index in step with the files; ``progress(done, total)`` while parsing."""
        started = time.perf_counter()
        rebuilt = rebuild
        if rebuild:
            with locked(self.root / INDEX_LOCK, display=INDEX_LOCK):
                self._discard()
            self._loaded = True
        elif not self._loaded:
            if not self._load():
                with locked(self.root / INDEX_LOCK, display=INDEX_LOCK):
                    self._discard()
                rebuilt = True
            self._loaded = True

        watcher = None
        if self.watch and not rebuilt:
            idle = self.config.watch.watcher_idle_seconds if self.config else IDLE_SECONDS
            watcher = changes_seen(self.root, idle)
        if watcher is not None and watcher[2] is not None:  # only what it saw change
            stats = self._refresh_paths(watcher[2], started)
            write_stamp(self.root, watcher[0], watcher[1])
            self.followed = watcher[0], watcher[1]
            return stats
        left_out: list[Problem] = []
        passed_over: dict[str, list[str]] = {}
        unread = Unread()
        rows = self._rows.every()
        files = list(
            walk_files(
                self.root,
                self.settings,
                self.parsers,
                left_out,
                selectors=self._selectors(),
                passed_over=passed_over,
                places=self.places,
                known=rows,  # files no parser claims, brought in by references: see adopt
                unread=unread,
                deny=self._deny(),
            )
        )
        stale = [(p, stat) for p, stat in files if (row := rows.get(p)) is None or row[0] != stat]
        reused = len(files) - len(stale)
        known = reused + sum(1 for p, _ in stale if p in rows)
        removed: list[str] = []
        if known != len(rows):  # some indexed path was not found: which ones
            seen = {path for path, _ in files}
            removed = [path for path in rows if path not in seen]
        stale = self._not_passed_over(stale, passed_over)
        again = self._rescanned(rows, stale, removed)
        forgotten = [p for p in self._passed if p not in {path for path, _ in files}]

        self._context = ParseContext(self.count_tokens, frozenset(p for p, _ in files), self.config)
        parsed, reused_now = self._apply(
            [*stale, *again], removed, left_out, progress, rebuilt=rebuilt, forgotten=forgotten,
            passed_over=passed_over, again=frozenset(p for p, _ in again),
        )  # fmt: skip
        self.left_out = left_out
        self.passed_over = {reason: sorted(paths) for reason, paths in passed_over.items()}
        self.unread = unread
        if watcher is not None:  # asked before the walk: later changes are told again
            write_stamp(self.root, watcher[0], watcher[1])
            self.followed = watcher[0], watcher[1]
        return RefreshStats(
            seen=len(files),
            parsed=parsed,
            reused=reused + reused_now,
            removed=len(removed),
            seconds=time.perf_counter() - started,
            rebuilt=rebuilt,
        )

    def _deny(self) -> Globs | None:
        """``[files] deny``: what the file tools never read, nor does the index."""
        if self.config is None or not self.config.files.deny:
            return None
        return Globs(list(self.config.files.deny))

    def _selectors(self) -> dict[str, Callable[[str, int], str | None]]:
        """Each parser's selector for this refresh (built from the config)."""
        if self.config is None:
            return {}
        found = {}
        for name, parser in self.parsers.all.items():
            if parser.select is not None:
                found[name] = parser.select(self.root, self.config)
        return found

    def _not_passed_over(
        self, stale: list[tuple[str, FileStat]], passed_over: dict[str, list[str]]
    ) -> list[tuple[str, FileStat]]:
        """``stale`` less the files a parser passed over before, unchanged since; those
        are added to ``passed_over`` under their reason."""
        if not self._passed:
            return stale
        kept = []
        for path, stat in stale:
            before = self._passed.get(path)
            if before is not None and before[0] == stat:
                passed_over.setdefault(before[1], []).append(path)
            else:
                kept.append((path, stat))
        return kept

    def catch_up(self) -> bool:
        """Apply what the workspace's watcher saw change since these rows were in step
        with it (walking when it cannot say, or on the first read); False, doing
        nothing, when no watcher answers. For long-lived readers: once in step, it costs
        a question, not a stat of every file."""
        if not supported():
            return False
        found = ask(self.root, self.followed)
        if found is None:
            return False
        watcher, seq, paths = found
        if paths is None or not self._loaded:
            self.refresh()  # asked before the walk: later changes are told again
        else:
            self._refresh_paths(paths, time.perf_counter())
        self.followed = watcher, seq
        return True

    def refresh_paths(self, paths: Iterable[str]) -> RefreshStats:
        """Bring just ``paths`` in step (what a file watcher reported), without a walk.

        Each path is judged by the index's own rules (:func:`~cuedeck.index.coverage.admitted`):
        a file the index covers is read when its stat changed, anything else is dropped.
        """
        started = time.perf_counter()
        if not self._loaded:
            return self.refresh()
        return self._refresh_paths(paths, started)

    def _refresh_paths(
        self, paths: Iterable[str], started: float, adopting: Collection[str] = ()
    ) -> RefreshStats:
        stale: list[tuple[str, FileStat]] = []
        removed: list[str] = []
        reused = 0
        wanted = sorted(set(paths))
        self._rows.read(wanted)  # those rows only: the others stay in the cache
        # Built only for paths to judge: the code plugin's selector compiles globs and may
        # ask git, which a refresh the watcher found nothing for need not pay.
        selectors = self._selectors() if wanted else {}
        known: Collection[str] = self._rows.known
        if adopting:
            known = {*known, *adopting}
        deny = self._deny() if wanted else None
        for path in wanted:
            stat = admitted(
                self.root, self.settings, self.parsers, path, selectors, known, self.places, deny
            )
            row = self._rows.known.get(path)
            if stat is None:
                if row is not None:
                    removed.append(path)
            elif row is not None and row[0] == stat:
                reused += 1
            else:
                stale.append((path, stat))
        passed_over = {
            reason: [p for p in found if p not in set(wanted)]
            for reason, found in self.passed_over.items()
        }
        stale = self._not_passed_over(stale, passed_over)
        left_out = [p for p in self.left_out if p.path not in set(wanted)]
        known = self._context.paths if self._context is not None else frozenset()
        if stale and not all(path in known for path, _ in stale):
            known = frozenset([*self._rows.paths(), *wanted])  # imports may resolve to it
        again = self._rescanned(None, stale, removed)
        if again and removed:  # what the documents read again resolve against
            known = frozenset(known) - set(removed)
        self._context = ParseContext(self.count_tokens, known, self.config)
        parsed, reused_now = self._apply(
            [*stale, *again], removed, left_out, None, rebuilt=False, passed_over=passed_over,
            again=frozenset(p for p, _ in again),
        )  # fmt: skip
        self.left_out = left_out
        self.passed_over = {reason: sorted(found) for reason, found in passed_over.items() if found}
        return RefreshStats(
            seen=len(wanted),
            parsed=parsed,
            reused=reused + reused_now,
            removed=len(removed),
            seconds=time.perf_counter() - started,
            rebuilt=False,
        )

    # -- files no parser claims, that references include -----------------------------------

    def adopt(self, paths: Iterable[str], deny: Sequence[str] = ()) -> bool:
        """Index ``paths``, files no parser claims that a reference includes (a ``.cfg``
        cited by its lines), as plain text; the walk keeps them while they are indexed.
        Each must pass the walk's rules and not match the ``deny`` globs; True when any
        was indexed."""
        with self._data_lock:
            self._rows.read(paths)
            wanted = [p for p in paths if p not in self._rows.known and not self.parsers.claim(p)]
        if deny and wanted:
            from cuedeck.index.globs import Globs

            denied = Globs(list(deny))
            wanted = [p for p in wanted if not denied.match(p)]
        fits = [p for p in wanted if admitted(self.root, self.settings, self.parsers, p, None, {p})]
        if not fits:
            return False
        before = self.generation
        self._refresh_paths(fits, time.perf_counter(), adopting=set(fits))
        for path in fits:
            if path in self:
                self.unread.file(path, None, -1)
        return self.generation != before

    def release(self, paths: Iterable[str]) -> None:
        """Drop ``paths``, files no parser claims that no reference includes any more."""
        gone = [p for p in paths if p in self and self.parsers.claim(p) is None]
        if gone:
            self._apply([], gone, self.left_out, None, rebuilt=False, passed_over={})
            for path in gone:
                self.unread.file(path, None)

    def adopted(self) -> list[str]:
        """The indexed files no parser claims (what :meth:`adopt` brought in)."""
        return [p for p in self._rows.every() if self.parsers.claim(p) is None]

    def why_not(self, path: str, deny: Sequence[str] = ()) -> Exclusion | None:
        """Why the file at ``path`` is not indexed (``deny``: the globs no tool reads),
        or None when it is, or when the workspace has no such file."""
        if path in self:
            return None
        for reason, paths in self.passed_over.items():
            if path in paths:
                return Exclusion(reason, f"it was passed over ({reason})")
        if path in self._passed:
            reason = self._passed[path][1]
            return Exclusion(reason, f"its parser passed it over ({reason})")
        for problem in self.left_out:
            if problem.path == path:
                detail = problem.message.removeprefix("not indexed: ")
                return Exclusion(left_out_reason(problem), detail)
        return explain(
            self.root, self.settings, self.parsers, path, self._selectors(), deny, self.places
        )

    def _rescanned(
        self,
        rows: dict[str, Row] | None,
        stale: list[tuple[str, FileStat]],
        removed: list[str],
    ) -> list[tuple[str, FileStat]]:
        """Unchanged files to parse again: a file came or went that their parser resolved
        references against (its ``resolves_against``: reStructuredText's ``:doc:``
        suffixes and Sphinx source folder). ``rows``: every row, or None to read them
        only when needed."""
        known = self._rows.known if rows is None else rows
        moved = [p for p, _ in stale if p not in known] + removed
        names = {
            parser.name
            for parser in self.parsers.all.values()
            if parser.resolves_against is not None and any(map(parser.resolves_against, moved))
        }
        if not names:
            return []
        skip = {p for p, _ in stale} | set(removed)
        paths = [
            path
            for path in (self._rows.paths() if rows is None else rows)
            if path not in skip and getattr(self.parsers.claim(path), "name", None) in names
        ]
        if rows is None:  # those rows only (a watcher's refresh reads no others)
            self._rows.read(paths)
            rows = self._rows.known
        return [(path, rows[path][0]) for path in paths if path in rows]

    def _apply(
        self,
        stale: list[tuple[str, FileStat]],
        removed: list[str],
        left_out: list[Problem],
        progress: Callable[[int, int], None] | None,
        *,
        rebuilt: bool,
        passed_over: dict[str, list[str]],
        forgotten: Sequence[str] = (),
        again: frozenset[str] = frozenset(),
    ) -> tuple[int, int]:
        """Read and parse ``stale`` files, drop ``removed`` ones, write the changes:
        ``(parsed, reused)``. Files a parser passes over are added to ``passed_over``
        and remembered; ``forgotten`` ones (no longer walked) are forgotten; those in
        ``again`` are parsed even when their bytes are the same."""
        updates: list[Update] = []  # path, stat, sha, language, data
        touched: list[tuple[str, FileStat]] = []  # same content, new stat
        passed: list[tuple[str, FileStat, str]] = []  # path, stat, reason
        parsed = reused = 0
        context = self._context or ParseContext(
            self.count_tokens, frozenset(self._rows.every()), self.config
        )
        read = FileReader(
            self.root, self.parsers, context, self.sha, len(stale) >= DEFER_COUNTS, again
        )
        size = sum(stat[1] for _, stat in stale)
        chunks = map_chunks(read, stale, message="Indexing files", progress=progress, size=size)
        for outcomes in chunks:
            for path, stat, kind, found in outcomes:
                if kind == "parsed":
                    # The document is decoded from its data when read: sending it back
                    # from a worker would cost more than decoding the few that are read.
                    updates.append((path, stat, *found))
                    parsed += 1
                    continue
                if kind == "same":
                    touched.append((path, stat))
                    reused += 1
                    continue
                if kind == "passed over":
                    passed.append((path, stat, found))
                    passed_over.setdefault(found, []).append(path)
                elif kind != "gone":
                    left_out.append(found)
                if path in self._rows.known:  # gone, unreadable, no longer text or passed over
                    removed.append(path)

        forget = [*forgotten, *(p for p in removed if p in self._passed)]
        if updates or touched or removed or passed or forget or rebuilt or not self.path.exists():
            self._write(updates, touched, removed, passed, forget)
        if updates or removed or rebuilt:
            self._bump(None if rebuilt else [path for path, *_ in updates] + removed)
        return parsed, reused

    def _write(
        self,
        updates: list[Update],
        touched: list[tuple[str, FileStat]],
        removed: list[str],
        passed: Sequence[tuple[str, FileStat, str]] = (),
        forget: Sequence[str] = (),
    ) -> None:
        self.store.write(
            self._expected_meta(), self._settings_key(), updates, touched, removed, passed, forget
        )
        self._rows.written(updates, touched, removed)
        for path, *_ in updates:
            self._documents.pop(path, None)  # decoded again from the new data when read
            self._passed.pop(path, None)
        for path in removed:
            self._documents.pop(path, None)
        for path in forget:
            self._passed.pop(path, None)
        for path, stat, reason in passed:
            self._passed[path] = (stat, reason)

    def summary(self) -> dict[str, dict[str, int]]:
        """Files indexed per language and passed over per reason, then what the last
        refresh did not index: files per reason (``not_indexed``), those no parser reads
        per suffix (``no_parser``) and folders the walk did not enter per reason."""
        languages: dict[str, int] = {}
        self._rows.every()
        for language in self._rows.languages.values():
            languages[language] = languages.get(language, 0) + 1
        return {
            "languages": dict(sorted(languages.items())),
            "passed_over": {r: len(p) for r, p in sorted(self.passed_over.items())},
            **not_indexed(self.unread, self.passed_over, self.left_out),
        }
