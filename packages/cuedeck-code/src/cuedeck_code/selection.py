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
import subprocess
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
    from cuedeck.index.walk import Globs

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
    (or when git is missing or fails): then ``.gitignore`` alone decides."""
    git_dir = _git_dir(str(root))
    if git_dir is None:
        return None
    try:
        st = os.stat(os.path.join(git_dir, "index"))
        stamp = (st.st_mtime_ns, st.st_size)
    except OSError:
        stamp = (0, 0)  # a repository without commits or staged files yet
    return _ls_files(str(root), stamp)


def _git_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update({"GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0"})
    return env


@functools.lru_cache(maxsize=16)
def _git_dir(root: str) -> str | None:
    try:
        found = subprocess.run(
            ["git", "-C", root, "rev-parse", "--absolute-git-dir"],
            capture_output=True,
            timeout=GIT_TIMEOUT,
            env=_git_env(),
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if found.returncode != 0:
        return None
    return found.stdout.decode("utf-8", errors="replace").strip() or None


@functools.lru_cache(maxsize=16)
def _ls_files(root: str, stamp: tuple[int, int]) -> frozenset[str] | None:
    """What git tracks under ``root``, cached while the git index file is unchanged."""
    try:
        found = subprocess.run(
            ["git", "-c", "core.quotepath=off", "-C", root, "ls-files", "-z", "--cached"],
            capture_output=True,
            timeout=GIT_TIMEOUT,
            env=_git_env(),
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if found.returncode != 0:
        return None
    return frozenset(p for p in found.stdout.decode("utf-8", errors="replace").split("\0") if p)
