"""Which files the index reads: the one place that decides what is inside the workspace.

A file is read when a registered parser claims it (:mod:`cuedeck.index.parsers`), ``[index]
include`` matches it, ``exclude`` and the ``.gitignore`` files do not, and the claiming
parser's selector (if any) does not leave it out.

A path is part of the workspace when its resolved real path stays under the root. A
symlink to a file inside is followed (indexed under the link's own path); a symlink
whose target leaves the root is left out, whatever asks for it; a symlinked folder is
not descended into (it could loop or index the same files twice). Folders and files
that cannot be read are left out too. Each path left out is recorded as a warning for
``cue doctor``, never an error for the command that walked.
"""

from __future__ import annotations

import logging
import os
import posixpath
import stat as stat_module
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from cuedeck.index.globs import Globs, globs_of, ignored
from cuedeck.index.left_out import link_problem, shared_file, unreadable
from cuedeck.layout import CARDS_DIR, CORE_PLACES, DOCS_DIR, WORKSPACE_DIR, Places, protection

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterator, Mapping

    from cuedeck.index.parsers import Parsers
    from cuedeck.models import Problem
    from cuedeck.settings import IndexSettings

    #: Per parser name: ``select(path, size) -> reason | None`` (see Parser.select).
    Selectors = Mapping[str, Callable[[str, int], str | None]]

log = logging.getLogger("cuedeck")

ALWAYS_SKIPPED = {".git", ".hg", ".svn", "__pycache__"}
#: The reason :func:`walk_files` gives for a file over ``[index] max_file_mb``.
TOO_LARGE = "too large"
#: Why a walk did not read a file it saw (:class:`Unread`).
NO_PARSER = "no parser"
IGNORED = "ignored"
EXCLUDED = "excluded"
#: How :class:`Unread` counts a file without a suffix (``Makefile``, ``.gitignore``).
NO_SUFFIX = "(no suffix)"


@attrs.define
class Unread:
    """What a walk saw and did not read, counted: files no parser claims, by suffix
    (``.rst``; ``(no suffix)``), files and folders a ``.gitignore`` leaves out
    (``ignored``) and those ``[index] include`` and ``exclude`` leave out (``excluded``)."""

    no_parser: dict[str, int] = attrs.Factory(dict)
    files: dict[str, int] = attrs.Factory(dict)
    folders: dict[str, int] = attrs.Factory(dict)

    def file(self, path: str, reason: str | None, count: int = 1) -> None:
        """Count one file no parser claims (``reason``: a rule left it out anyway);
        ``count=-1`` takes back one the index read after all."""
        if reason is not None:
            self.files[reason] = self.files.get(reason, 0) + count
            return
        suffix = posixpath.splitext(path)[1].lower() or NO_SUFFIX
        left = self.no_parser.get(suffix, 0) + count
        if left > 0:
            self.no_parser[suffix] = left
        else:
            self.no_parser.pop(suffix, None)


#: The reason it gives for a file ``[files] deny`` names (the file tools' read boundary).
DENIED = "denied"


#: ``(mtime_ns, size)``: the part of a stat result that decides whether a file changed.
#: A plain tuple: a walk makes one per file, and a large workspace has tens of thousands.
FileStat = tuple[int, int]


#: The ``include`` that admits every file a parser claims.
EVERYTHING = ["**/*"]


def walk_files(
    root: Path,
    settings: IndexSettings,
    parsers: Parsers,
    left_out: list[Problem] | None = None,
    *,
    selectors: Selectors | None = None,
    passed_over: dict[str, list[str]] | None = None,
    places: Places = CORE_PLACES,
    known: Collection[str] = (),
    unread: Unread | None = None,
    deny: Globs | None = None,
) -> Iterator[tuple[str, FileStat]]:
    """Workspace-relative paths the index covers, with their stats, sorted.

    Markdown cards and docs under ``.cuedeck/`` always count; other files must be claimed
    by a parser (or be ``known``: indexed already, as a file a reference includes is
    though no parser claims it), match ``include``, not match ``exclude`` and, when
    ``gitignore`` is on, not be ignored by any ``.gitignore`` between the root and the
    file. Paths left out because they leave the workspace or cannot be read are appended
    to ``left_out`` (warnings); those a parser's selector or the size cap leave out are
    listed in ``passed_over`` by reason; the rest of what was seen and not read is
    counted in ``unread``. The read boundary of the file tools holds too: nothing in
    ``places`` (what no tool reads: core's and the plugins'), in a git directory, or named
    by ``deny`` (``[files] deny``, listed in ``passed_over`` as ``denied``), whatever link
    leads there.
    """
    from cuedeck.system.git import is_git_directory

    root = Path(os.path.realpath(root))
    skipped: list[Problem] = [] if left_out is None else left_out
    over: dict[str, list[str]] = {} if passed_over is None else passed_over
    select = selectors or {}
    include = None if settings.include == EVERYTHING else globs_of(settings.include)
    exclude = globs_of(settings.exclude)
    max_bytes = int(settings.max_file_mb * 1024 * 1024)
    found: list[tuple[str, FileStat]] = []

    def visit(directory: Path, rel: str, ignores: list[tuple[str, Globs]]) -> None:
        if settings.gitignore:
            try:
                text = (directory / ".gitignore").read_text(encoding="utf-8", errors="replace")
            except OSError:  # none there; an unreadable folder is reported by its scan below
                pass
            else:
                patterns = Globs(text.splitlines())
                skipped.extend(patterns.problems(f"{rel}/.gitignore" if rel else ".gitignore"))
                ignores = [*ignores, (rel, patterns)]
        try:
            entries = list(os.scandir(directory))
        except OSError as exc:
            skipped.append(unreadable(rel, exc))
            return
        for entry in entries:
            name = entry.name
            child = f"{rel}/{name}" if rel else name
            parser = parsers.claim(child)
            try:
                # A file a parser reads, the bulk of a large tree, takes the short way.
                regular = parser is not None and entry.is_file(follow_symlinks=False)
                is_dir = not regular and entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if not is_dir and parser is None and child not in known:
                if unread is not None:
                    unread.file(child, rule(child, ignores))
                continue
            if not regular and entry.is_symlink() and _link_left_out(entry, child):
                continue
            if is_dir:
                if entry.name in ALWAYS_SKIPPED or child == WORKSPACE_DIR:
                    continue
                if protection(f"{child}/", write=False, places=places) is not None:
                    continue  # a nested workspace's cache: no tool reads it
                if is_git_directory(entry.path):
                    continue  # a bare repository kept here: git's files, like .git
                if deny is not None and deny.match(child + "/"):
                    continue
                if exclude is not None and exclude.match(child + "/"):
                    if unread is not None:
                        unread.folders[EXCLUDED] = unread.folders.get(EXCLUDED, 0) + 1
                    continue
                if ignored(child + "/", ignores):
                    if unread is not None:
                        unread.folders[IGNORED] = unread.folders.get(IGNORED, 0) + 1
                    continue
                visit(Path(entry.path), child, ignores)
                continue
            left = rule(child, ignores)
            if left is not None:
                if unread is not None:
                    unread.files[left] = unread.files.get(left, 0) + 1
                continue
            if protection(child, write=False, places=places) is not None:
                continue  # a nested workspace's token hashes or state
            if deny is not None and deny.match(child):
                over.setdefault(DENIED, []).append(child)
                continue
            _add(entry, child, select.get(parser.name) if parser is not None else None)

    def rule(child: str, ignores: list[tuple[str, Globs]]) -> str | None:
        """Why ``include``, ``exclude`` or a ``.gitignore`` leaves out a file found in a
        folder they admitted, or None."""
        if include is not None and not include.match(child):
            return EXCLUDED
        if exclude is not None and exclude.match_found_file(child):
            return EXCLUDED
        if ignores and ignored(child, ignores, files=True):
            return IGNORED
        return None

    def _link_left_out(entry: os.DirEntry[str], child: str) -> bool:
        """Whether a symlink is left out: it leaves the workspace, reaches a protected
        path (``.git``, CueDeck's private files), or names a folder."""
        problem = link_problem(root, entry.path, child, places)
        if problem is not None:
            skipped.append(problem)
            return True
        if deny is not None:
            target = os.path.relpath(os.path.realpath(entry.path), root).replace(os.sep, "/")
            if deny.match(target):
                over.setdefault(DENIED, []).append(child)
                return True
        return os.path.isdir(entry.path)  # linked folders inside are not descended into

    def _add(
        entry: os.DirEntry[str],
        child: str,
        selector: Callable[[str, int], str | None] | None = None,
    ) -> None:
        try:
            st = entry.stat()
        except OSError as exc:
            skipped.append(unreadable(child, exc))
            return
        if not stat_module.S_ISREG(st.st_mode):
            return
        if st.st_nlink > 1:
            skipped.append(shared_file(child))
            return
        if st.st_size > max_bytes:
            log.warning("skipped %s: %d bytes is over [index] max_file_mb", child, st.st_size)
            over.setdefault(TOO_LARGE, []).append(child)
            return
        reason = selector(child, st.st_size) if selector is not None else None
        if reason is not None:
            over.setdefault(reason, []).append(child)
            return
        found.append((child, (st.st_mtime_ns, st.st_size)))

    def visit_cuedeck(directory: str, rel: str) -> None:
        """Every markdown file under a card or doc folder, whatever the ignore rules say."""
        try:
            entries = list(os.scandir(directory))
        except FileNotFoundError:
            return
        except OSError as exc:
            skipped.append(unreadable(rel, exc))
            return
        for entry in entries:
            if entry.name.startswith("."):
                continue
            child = f"{rel}/{entry.name}"
            if entry.is_symlink() and _link_left_out(entry, child):
                continue
            if entry.is_dir(follow_symlinks=False):
                visit_cuedeck(entry.path, child)
            elif entry.name.endswith(".md"):
                _add(entry, child)

    visit(root, "", [])
    for special in (CARDS_DIR, DOCS_DIR):
        folder = os.path.join(root, special)
        problem = link_problem(root, folder, special, places) if os.path.islink(folder) else None
        if problem is not None:
            skipped.append(problem)
            continue
        visit_cuedeck(folder, special)
    found.sort()  # by path: paths are unique, so the stats never decide
    return iter(found)


def inside(root: Path, path: str | os.PathLike[str]) -> bool:
    """Whether the real path of ``path`` (symlinks resolved) stays under ``root``."""
    real = os.path.realpath(path)
    return real == str(root) or real.startswith(str(root) + os.sep)
