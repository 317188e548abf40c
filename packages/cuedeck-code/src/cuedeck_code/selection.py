"""Which source files are indexed: ``[code]`` settings applied before a file is read.

A source file is left out, with a reason ``cue index --json`` counts, when code is
``disabled``, its ``language`` is not among ``[code] languages``, it sits in a
``vendored`` folder or has a ``generated`` name (``[code] exclude``: folder globs and
file globs), it is ``too large`` (``max_file_kb``) or, in a git repository with
``git_tracked`` on, git does not track it (``untracked``). Content checks (a generated
header, minified lines) happen when the file is parsed.
"""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING

from cuedeck_code.languages import language_of
from cuedeck_code.settings import CodeSettings

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from cuedeck.config import Config

#: Seconds ``git ls-files`` may take before the git-tracked rule is skipped.
GIT_TIMEOUT = 20.0


def select(root: Path, config: Config) -> Callable[[str, int], str | None]:
    """The selector of one refresh: ``(path, size) -> reason | None``."""
    from cuedeck.index.globs import Globs

    settings = config.section("code", CodeSettings)
    languages = set(settings.languages)
    folders = [p for p in settings.exclude if p.rstrip().endswith("/")]
    names = [p for p in settings.exclude if not p.rstrip().endswith("/")]
    vendored = Globs(folders) if folders else None
    generated = Globs(names) if names else None
    cap = settings.max_file_kb * 1024
    tracked = tracked_files(root) if settings.git_tracked else None
    folders_seen: dict[str, bool] = {"": False}  # folder -> inside a vendored folder

    def in_vendored(folder: str) -> bool:
        found = folders_seen.get(folder)
        if found is None:
            parent = folder.rpartition("/")[0]
            found = in_vendored(parent) or bool(vendored.match(folder + "/"))  # type: ignore[union-attr]
            folders_seen[folder] = found
        return found

    def selector(path: str, size: int) -> str | None:
        if not settings.enabled:
            return "disabled"
        language = language_of(path)
        if languages and (language is None or language.name not in languages):
            return "language"
        if vendored is not None and in_vendored(path.rpartition("/")[0]):
            return "vendored"
        if generated is not None and generated.match(path):
            return "generated"
        if size > cap:
            return "too large"
        if tracked is not None and path not in tracked:
            return "untracked"
        return None

    return selector


def tracked_files(root: Path) -> frozenset[str] | None:
    """Paths (relative to ``root``) that git tracks, or None outside a git repository
    (or when git is missing or fails, or tracks nothing yet): then ``.gitignore`` alone
    decides."""
    from cuedeck.system.git import find_repository

    found = find_repository(root)
    if found is None:
        return None
    try:
        st = os.stat(os.path.join(found.git_dir, "index"))
        stamp = (st.st_mtime_ns, st.st_size)
    except OSError:
        stamp = (0, 0)  # a repository without commits or staged files yet
    return _ls_files(str(root), found.top, found.git_dir, stamp)


@functools.lru_cache(maxsize=16)
def _ls_files(root: str, top: str, git_dir: str, stamp: tuple[int, int]) -> frozenset[str] | None:
    """What git tracks under ``root``, cached while the git index file is unchanged."""
    from cuedeck.system.git import Git, GitTimedOut, Repository

    runner = Git(Repository(top, git_dir), cwd=root, read_only=True)
    try:
        found = runner.run(["ls-files", "-z", "--cached"], timeout=GIT_TIMEOUT)
    except (OSError, GitTimedOut):
        return None
    if found.returncode != 0:
        return None
    tracked = frozenset(p for p in found.stdout.decode("utf-8", errors="replace").split("\0") if p)
    # A repository that tracks nothing yet (``git init``, nothing added) says nothing of
    # which files are the project's: every code file would be left out.
    return tracked or None
