"""Whether the index covers one path, and if not, why: :func:`walk_files`'s rules for a
single file, so that a watcher's report is applied without a walk (:func:`admitted`)
and a reference to a file the index left out says why (:func:`judge`, :func:`explain`);
and what a refresh did not index, counted by why (:func:`not_indexed`).

:func:`~cuedeck.index.walk.walk_files` and these functions apply the same rules; tests
hold them to each other.
"""

from __future__ import annotations

import os
import stat as stat_module
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from cuedeck.index.globs import Globs, gitignore, globs_of, ignored
from cuedeck.index.left_out import link_problem
from cuedeck.index.walk import (
    ALWAYS_SKIPPED,
    DENIED,
    EVERYTHING,
    EXCLUDED,
    IGNORED,
    NO_PARSER,
    TOO_LARGE,
)
from cuedeck.layout import CARDS_DIR, CORE_PLACES, DOCS_DIR, WORKSPACE_DIR, Places, protection

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping, Sequence

    from cuedeck.index.parsers import Parsers
    from cuedeck.index.walk import FileStat, Selectors, Unread
    from cuedeck.models import Problem
    from cuedeck.settings import IndexSettings


@attrs.frozen
class Exclusion:
    """Why the index leaves a file out: a short ``reason`` (the key ``cue index``
    counts it under) and ``detail``, a sentence for a reader."""

    reason: str
    detail: str


def admitted(
    root: Path,
    settings: IndexSettings,
    parsers: Parsers,
    rel: str,
    selectors: Selectors | None = None,
    known: Collection[str] = (),
    places: Places = CORE_PLACES,
    deny: Globs | None = None,
) -> FileStat | None:
    """The stat of ``rel`` when the index covers it, else None (``known``: paths the
    index holds although no parser claims them, as :func:`walk_files` takes them;
    ``places``: what no tool reads, core's and the plugins'; ``deny``: ``[files] deny``)."""
    found = judge(root, settings, parsers, rel, selectors, known, places, deny)
    return found if isinstance(found, tuple) else None


def judge(
    root: Path,
    settings: IndexSettings,
    parsers: Parsers,
    rel: str,
    selectors: Selectors | None = None,
    known: Collection[str] = (),
    places: Places = CORE_PLACES,
    deny: Globs | None = None,
) -> FileStat | Exclusion | None:
    """The stat of ``rel`` when the index covers it, why not when it does not, or None
    when there is no such file in the workspace. The file tools' read boundary holds:
    nothing in ``places``, in a git directory, or named by ``deny``."""
    from cuedeck.system.git import inside_git_directory

    root = Path(os.path.realpath(root))
    parts = rel.split("/")
    if ".." in parts or "" in parts or rel.startswith("/"):
        return None
    path = root / rel
    if not os.path.lexists(path):
        return None
    if protection(rel, write=False, places=places) or inside_git_directory(str(root), rel):
        return Exclusion("protected", "no tool reads it (git's files or CueDeck's private ones)")
    parser = parsers.claim(rel)
    for depth in range(1, len(parts)):  # linked folders are never descended into
        if os.path.islink(root.joinpath(*parts[:depth])) and depth > 2:
            return Exclusion("linked folder", "it is inside a linked folder, which no walk enters")
    if path.is_symlink():
        problem = link_problem(root, str(path), rel, places)
        if problem is not None:
            return Exclusion("link", problem.message.removeprefix("not indexed: "))
    special = rel.startswith((CARDS_DIR + "/", DOCS_DIR + "/"))
    if deny is not None and not special:
        real = os.path.relpath(os.path.realpath(path), root).replace(os.sep, "/")
        if deny.match(rel) or deny.match(real):
            return Exclusion(DENIED, "[files] deny keeps it from every tool")
    if special:
        if any(part.startswith(".") for part in parts[2:]) or not rel.endswith(".md"):
            return Exclusion("not a card", "only markdown files under .cuedeck/ are cards and docs")
    else:
        left = _left_by_rules(root, settings, parts)
        if left is not None:
            return left
    try:
        st = path.stat()
    except OSError as exc:
        return Exclusion("unreadable", f"it cannot be read ({exc.strerror or exc})")
    if not stat_module.S_ISREG(st.st_mode):
        return Exclusion("not a file", "it is a folder or a special file")
    if st.st_size > settings.max_file_mb * 1024 * 1024:
        return Exclusion(TOO_LARGE, f"it is over [index] max_file_mb ({settings.max_file_mb:g})")
    if st.st_nlink > 1:
        return Exclusion("hard-linked", "it has several hard links")
    if parser is None and rel not in known:
        suffix = os.path.splitext(rel)[1] or os.path.basename(rel)
        return Exclusion(NO_PARSER, f"no parser reads {suffix} files")
    selector = None if special or parser is None else (selectors or {}).get(parser.name)
    reason = selector(rel, st.st_size) if selector is not None else None
    if reason is not None:
        assert parser is not None
        return Exclusion(reason, f"the {parser.name} parser's settings leave it out ({reason})")
    return (st.st_mtime_ns, st.st_size)


def _left_by_rules(root: Path, settings: IndexSettings, parts: list[str]) -> Exclusion | None:
    """Why the include, exclude and .gitignore rules leave out a file outside
    ``.cuedeck/``, or None when they admit it."""
    if parts[0] == WORKSPACE_DIR:
        return Exclusion("cuedeck", "CueDeck's own files are not indexed")
    if any(part in ALWAYS_SKIPPED for part in parts[:-1]):
        return Exclusion("skipped folder", "it is inside a folder no walk enters (.git...)")
    if any(os.path.islink(root.joinpath(*parts[:depth])) for depth in range(1, len(parts))):
        return Exclusion("linked folder", "it is inside a linked folder, which no walk enters")
    include = None if settings.include == EVERYTHING else globs_of(settings.include)
    exclude = globs_of(settings.exclude)
    ignores: list[tuple[str, Globs]] = []
    excluded = Exclusion(EXCLUDED, "[index] include or exclude leaves it out")
    by_gitignore = Exclusion(IGNORED, "a .gitignore ignores it")
    for depth in range(len(parts)):
        base = "/".join(parts[:depth])
        if depth and exclude is not None and exclude.match(base + "/"):
            return excluded
        if depth and ignored(base + "/", ignores):
            return by_gitignore
        if settings.gitignore:
            found = gitignore(root / base / ".gitignore")
            if found is not None:
                ignores.append((base, found))
    rel = "/".join(parts)
    if (include is not None and not include.match(rel)) or (
        exclude is not None and exclude.match(rel)
    ):
        return excluded
    return by_gitignore if ignored(rel, ignores) else None


def explain(
    root: Path,
    settings: IndexSettings,
    parsers: Parsers,
    rel: str,
    selectors: Selectors | None = None,
    deny: Sequence[str] = (),
    places: Places = CORE_PLACES,
) -> Exclusion | None:
    """Why ``rel``, a path the last refresh did not index nor record as left out, is not
    indexed (``deny``: the globs no tool reads), or None when there is no such file."""
    from cuedeck.index.globs import Globs
    from cuedeck.index.left_out import binary

    if deny and os.path.lexists(root / rel) and Globs(list(deny)).match(rel):
        return Exclusion(DENIED, "[files] deny keeps it from every tool")
    found = judge(root, settings, parsers, rel, selectors, places=places)
    if not isinstance(found, tuple):
        return found
    try:
        with open(root / rel, "rb") as handle:
            if binary(handle.read(65536)):
                return Exclusion("binary", "binary content, not text")
    except OSError as exc:
        return Exclusion("unreadable", f"it cannot be read ({exc.strerror or exc})")
    return Exclusion("pending", "not indexed yet: the next refresh reads it")


def not_indexed(
    unread: Unread, passed_over: Mapping[str, Sequence[str]], left_out: Sequence[Problem]
) -> dict[str, dict[str, int]]:
    """What a refresh did not index: files per reason (``not_indexed``), those no parser
    reads per suffix (``no_parser``) and folders the walk did not enter per reason
    (``folders_not_entered``), largest first."""
    from cuedeck.index.left_out import left_out_reason

    left: dict[str, int] = {}

    def add(reason: str, count: int) -> None:
        if count:
            left[reason] = left.get(reason, 0) + count

    add(NO_PARSER, sum(unread.no_parser.values()))
    for reason, count in unread.files.items():
        add(reason, count)
    for reason, paths in passed_over.items():
        add(reason, len(paths))
    for problem in left_out:
        add(left_out_reason(problem), 1)
    return {
        "not_indexed": _by_count(left),
        "no_parser": _by_count(unread.no_parser),
        "folders_not_entered": _by_count(unread.folders),
    }


def _by_count(counts: Mapping[str, int]) -> dict[str, int]:
    """``counts`` largest first, then by name."""
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))
