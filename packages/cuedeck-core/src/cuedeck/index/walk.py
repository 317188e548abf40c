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

import functools
import logging
import os
import re
import stat as stat_module
from pathlib import Path
from typing import TYPE_CHECKING

from cuedeck.layout import CARDS_DIR, CORE_PLACES, DOCS_DIR, WORKSPACE_DIR, Places, protection
from cuedeck.models import Problem

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping

    from cuedeck.index.parsers import Parsers
    from cuedeck.settings import IndexSettings

    #: Per parser name: ``select(path, size) -> reason | None`` (see Parser.select).
    Selectors = Mapping[str, Callable[[str, int], str | None]]

log = logging.getLogger("cuedeck")

_ALWAYS_SKIPPED = {".git", ".hg", ".svn", "__pycache__"}
#: Problem code of a path left out of the index (NotIndexed), and of one that cannot be
#: read (PermissionDenied); see docs/errors.md.
NOT_INDEXED = 1011
UNREADABLE = 1010
#: Problem code of a file left out for its hard links (SharedFile).
SHARED = 1014
#: The reason :func:`walk_files` gives for a file over ``[index] max_file_mb``.
TOO_LARGE = "too large"


#: ``(mtime_ns, size)``: the part of a stat result that decides whether a file changed.
#: A plain tuple: a walk makes one per file, and a large workspace has tens of thousands.
FileStat = tuple[int, int]


class Globs:
    """Gitignore-style patterns, matched as one regular expression when none negates.

    pathspec tries each pattern in turn; one alternation is several times faster, which
    matters when every refresh matches every path of a large workspace.
    """

    def __init__(self, lines: list[str]) -> None:
        # Imported here: listing cards imports this module (for ``inside``) but no globs.
        import pathspec

        self.spec = pathspec.GitIgnoreSpec.from_lines(lines)
        rules = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
        #: Every rule names folders only (``dist/``): a walk that pruned those folders
        #: need not test the files it finds (most rules of a large tree are like this).
        self.folders_only = all(r.endswith("/") and not r.startswith("!") for r in rules)
        patterns = [p for p in self.spec.patterns if p.include is not None]
        self.regex: re.Pattern[str] | None = None
        if patterns and all(p.include and p.regex is not None for p in patterns):
            alternatives = (
                p.regex.pattern.replace("(?P<ps_d>", "(?:") for p in patterns if p.regex
            )
            self.regex = re.compile("|".join(f"(?:{a})" for a in alternatives))

    def match(self, path: str) -> bool:
        """Whether ``path`` (a directory when it ends in ``/``) matches."""
        if self.regex is not None:
            return self.regex.match(path) is not None
        return self.spec.match_file(path)

    def match_found_file(self, path: str) -> bool:
        """:meth:`match` for a file whose folders were already tested."""
        return not self.folders_only and self.match(path)


def _spec(patterns: list[str]) -> Globs | None:
    return Globs(patterns) if patterns else None


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
) -> Iterator[tuple[str, FileStat]]:
    """Workspace-relative paths the index covers, with their stats, sorted.

    Markdown cards and docs under ``.cuedeck/`` always count; other files must be claimed
    by a parser, match ``include``, not match ``exclude`` and, when ``gitignore`` is
    on, not be ignored by any ``.gitignore`` between the root and the file. Paths left out
    because they leave the workspace or cannot be read are appended to ``left_out``
    (warnings); those a parser's selector or the size cap leave out are listed in
    ``passed_over`` by reason. ``places`` are what no tool reads (core's and the plugins').
    """
    root = Path(os.path.realpath(root))
    skipped: list[Problem] = [] if left_out is None else left_out
    over: dict[str, list[str]] = {} if passed_over is None else passed_over
    select = selectors or {}
    include = None if settings.include == EVERYTHING else _spec(settings.include)
    exclude = _spec(settings.exclude)
    max_bytes = int(settings.max_file_mb * 1024 * 1024)
    found: list[tuple[str, FileStat]] = []

    def visit(directory: Path, rel: str, ignores: list[tuple[str, Globs]]) -> None:
        if settings.gitignore:
            try:
                text = (directory / ".gitignore").read_text(encoding="utf-8", errors="replace")
                ignores = [*ignores, (rel, Globs(text.splitlines()))]
            except OSError:  # none there; an unreadable folder is reported by its scan below
                pass
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
            if not is_dir and parser is None:
                continue
            if not regular and entry.is_symlink() and _link_left_out(entry, child):
                continue
            if is_dir:
                if entry.name in _ALWAYS_SKIPPED or child == WORKSPACE_DIR:
                    continue
                if protection(f"{child}/", write=False, places=places) is not None:
                    continue  # a nested workspace's cache: no tool reads it
                if exclude is not None and exclude.match(child + "/"):
                    continue
                if _ignored(child + "/", ignores):
                    continue
                visit(Path(entry.path), child, ignores)
                continue
            if include is not None and not include.match(child):
                continue
            if exclude is not None and exclude.match_found_file(child):
                continue
            if ignores and _ignored(child, ignores, files=True):
                continue
            assert parser is not None
            _add(entry, child, select.get(parser.name))

    def _link_left_out(entry: os.DirEntry[str], child: str) -> bool:
        """Whether a symlink is left out: it leaves the workspace, reaches a protected
        path (``.git``, CueDeck's private files), or names a folder."""
        problem = link_problem(root, entry.path, child, places)
        if problem is not None:
            skipped.append(problem)
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


def admitted(
    root: Path,
    settings: IndexSettings,
    parsers: Parsers,
    rel: str,
    selectors: Selectors | None = None,
    places: Places = CORE_PLACES,
) -> FileStat | None:
    """The stat of ``rel`` when the index covers it, else None: :func:`walk_files`'s
    rules for one path, so that a watcher's report can be applied without a walk."""
    root = Path(os.path.realpath(root))
    parts = rel.split("/")
    parser = parsers.claim(rel)
    if parser is None or ".." in parts or "" in parts:
        return None
    for depth in range(1, len(parts)):  # linked folders are never descended into
        if os.path.islink(root.joinpath(*parts[:depth])) and depth > 2:
            return None
    path = root / rel
    if path.is_symlink() and link_problem(root, str(path), rel, places) is not None:
        return None
    special = rel.startswith((CARDS_DIR + "/", DOCS_DIR + "/"))
    if special:
        if any(part.startswith(".") for part in parts[2:]) or not rel.endswith(".md"):
            return None
    elif not _covered(root, settings, parts):
        return None
    try:
        st = path.stat()
    except OSError:
        return None
    if not stat_module.S_ISREG(st.st_mode) or st.st_size > settings.max_file_mb * 1024 * 1024:
        return None
    if st.st_nlink > 1:
        return None
    selector = None if special else (selectors or {}).get(parser.name)
    if selector is not None and selector(rel, st.st_size) is not None:
        return None
    return (st.st_mtime_ns, st.st_size)


def _covered(root: Path, settings: IndexSettings, parts: list[str]) -> bool:
    """Whether the include, exclude and .gitignore rules admit a file outside .cuedeck/."""
    if parts[0] == WORKSPACE_DIR or any(part in _ALWAYS_SKIPPED for part in parts[:-1]):
        return False
    if any(os.path.islink(root.joinpath(*parts[:depth])) for depth in range(1, len(parts))):
        return False
    include = None if settings.include == EVERYTHING else _spec(settings.include)
    exclude = _spec(settings.exclude)
    ignores: list[tuple[str, Globs]] = []
    for depth in range(len(parts)):
        base = "/".join(parts[:depth])
        if depth and (
            (exclude is not None and exclude.match(base + "/")) or _ignored(base + "/", ignores)
        ):
            return False
        if settings.gitignore:
            found = _gitignore(root / base / ".gitignore")
            if found is not None:
                ignores.append((base, found))
    rel = "/".join(parts)
    if include is not None and not include.match(rel):
        return False
    if exclude is not None and exclude.match(rel):
        return False
    return not _ignored(rel, ignores)


def gitignore(path: Path) -> Globs | None:
    """The patterns of the ``.gitignore`` at ``path`` (cached while unchanged), or None."""
    return _gitignore(path)


def ignored(rel: str, ignores: list[tuple[str, Globs]], *, files: bool = False) -> bool:
    """Whether one of ``ignores`` (``(folder, patterns)`` of each ``.gitignore`` from the
    root down) ignores ``rel`` (a folder when it ends in ``/``); ``files``: a file whose
    folders were tested already."""
    return _ignored(rel, ignores, files=files)


def _gitignore(path: Path) -> Globs | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return _gitignore_globs(str(path), st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=256)
def _gitignore_globs(path: str, mtime_ns: int, size: int) -> Globs | None:
    """The patterns of one .gitignore, cached while the file is unchanged."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return Globs(text.splitlines())


def _ignored(rel: str, ignores: list[tuple[str, Globs]], *, files: bool = False) -> bool:
    """Whether a .gitignore on the way ignores ``rel``; ``files``: a file found by a walk
    that tested its folders already."""
    for base, spec in ignores:
        local = rel[len(base) + 1 :] if base else rel
        if spec.match_found_file(local) if files else spec.match(local):
            return True
    return False


def inside(root: Path, path: str | os.PathLike[str]) -> bool:
    """Whether the real path of ``path`` (symlinks resolved) stays under ``root``."""
    real = os.path.realpath(path)
    return real == str(root) or real.startswith(str(root) + os.sep)


def link_problem(root: Path, path: str, child: str, places: Places = CORE_PLACES) -> Problem | None:
    """Why the link at ``path`` is left out (its real path leaves the workspace, or is
    inside ``.git`` or CueDeck's private files), or None when it may be followed."""
    real, base = os.path.realpath(path), os.path.realpath(root)
    if not (real == base or real.startswith(base.rstrip(os.sep) + os.sep)):
        return excluded_link(child, real)
    rel = os.path.relpath(real, base).replace(os.sep, "/")
    if protection(rel, write=False, places=places) is not None:
        return Problem(
            "warning",
            NOT_INDEXED,
            child,
            None,
            f"not indexed: a symlink to {rel}, which no tool reads (.git or CueDeck's "
            "private files)",
            "remove the link",
        )
    return None


def shared_file(child: str) -> Problem:
    """The warning for a file with several hard links (its content may live outside)."""
    return Problem(
        "warning",
        SHARED,
        child,
        None,
        "not indexed: the file has several hard links, so its content may be a file "
        "outside the workspace",
        "replace the hard link with a copy",
    )


def excluded_link(child: str, target: str) -> Problem:
    """The warning for a symlink whose real path leaves the workspace."""
    return Problem(
        "warning",
        NOT_INDEXED,
        child,
        None,
        f"not indexed: a symlink to {target}, outside the workspace",
        "CueDeck reads only files whose real path is inside the workspace; "
        "copy the file in, or remove the link",
    )


def unreadable(child: str, error: OSError) -> Problem:
    """The warning for a folder or file that cannot be read."""
    return Problem(
        "warning",
        UNREADABLE,
        child or ".",
        None,
        f"not indexed: cannot read it ({error.strerror or error})",
        "check its permissions",
    )


def binary(data: bytes) -> bool:
    """Whether ``data`` is not text: a NUL byte, or mostly bytes that are not UTF-8."""
    if b"\x00" in data:
        return True
    sample = data[:65536]
    text = sample.decode("utf-8", errors="replace")
    return len(sample) > 0 and text.count("\ufffd") > len(text) * 0.3


def binary_file(child: str) -> Problem:
    """The warning for a file named like markdown that holds binary data."""
    return Problem(
        "warning",
        NOT_INDEXED,
        child,
        None,
        "not indexed: binary content (NUL bytes or mostly undecodable) in a markdown file",
        "rename it if it is not markdown, or re-save it as UTF-8 text",
    )
