"""The workspace's files as the navigation tools see them.

Every file under a folder of the workspace, in path order, that ``get_file_content``
would read (:meth:`cuedeck.workspace.Workspace.read_refusal`, the one read boundary):
never ``.git`` (nor ``.hg``, ``.svn``, nor a bare repository's folder), CueDeck's private
files (the cache, ``access.toml``, state and its lock, a team's copies), ``[files] deny``
(keys and secrets) or a file with several hard links; nor what ``.gitignore`` files or
``[index] exclude`` leave out. A symlink is followed only when its real path stays inside
the workspace and may be read, and a linked folder is never descended into (it could
loop, or lead into ``.git``); what it decides is decided on resolved real paths.
"""

from __future__ import annotations

import os
import stat as stat_module
from typing import TYPE_CHECKING

import attrs

from cuedeck.errors import FileNotFound, InvalidInput
from cuedeck.layout import CACHE_DIR, protection
from cuedeck.system.git import is_git_directory

if TYPE_CHECKING:
    from collections.abc import Iterator

    from cuedeck.index.globs import Globs
    from cuedeck.workspace import Workspace

NEVER = frozenset({".git", ".hg", ".svn"})


@attrs.frozen
class Entry:
    """A file or folder met by :func:`walk`: workspace-relative ``path``, ``size`` in
    bytes (0 for a folder) and ``depth`` below the folder walked (1: its own entries)."""

    path: str
    is_dir: bool
    size: int
    depth: int


def folder_path(workspace: Workspace, path: str, *, field: str = "path") -> str:
    """``path`` as a workspace-relative folder (``""`` for the root), or 1001/1004."""
    if path.strip() in ("", ".", "./"):
        return ""
    rel = workspace.relative_path(path, field=field)
    full = os.path.join(workspace.root, rel)
    if not os.path.exists(full):
        raise FileNotFound(f"{rel} does not exist", path=rel)
    if not os.path.isdir(full):
        raise InvalidInput(f"{rel} is a file, not a folder", field=field, path=rel)
    if _never(rel):
        raise InvalidInput(f"{rel} is not browsable (.git or CueDeck's cache)", field=field)
    return "" if rel == "." else rel


def _never(rel: str) -> bool:
    parts = rel.split("/")
    return any(p in NEVER for p in parts) or rel == CACHE_DIR or rel.startswith(CACHE_DIR + "/")


class Walker:
    """Walks folders of one workspace with its ignore, exclude and deny rules."""

    def __init__(self, workspace: Workspace, *, gitignore: bool = True) -> None:
        from cuedeck.index.globs import Globs

        self.workspace = workspace
        self.root = os.path.realpath(workspace.root)
        self.gitignore = gitignore and workspace.config.index.gitignore
        exclude = workspace.config.index.exclude
        self.exclude: Globs | None = Globs(exclude) if exclude else None
        self.places = workspace.places  # what no tool reads: core's and the plugins'

    def _ignores_down_to(self, folder: str) -> list[tuple[str, Globs]]:
        """The ``.gitignore`` patterns of ``folder`` and every folder above it."""
        from pathlib import Path

        from cuedeck.index.globs import gitignore

        if not self.gitignore:
            return []
        found = []
        parts = folder.split("/") if folder else []
        for depth in range(len(parts) + 1):
            base = "/".join(parts[:depth])
            globs = gitignore(Path(self.root) / base / ".gitignore")
            if globs is not None:
                found.append((base, globs))
        return found

    def skipped(self, rel: str, ignores: list[tuple[str, Globs]], *, is_dir: bool) -> bool:
        """Whether ``rel`` is left out by the rules above."""
        from cuedeck.index.globs import ignored

        if _never(rel):
            return True
        probe = rel + "/" if is_dir else rel
        if self.exclude is not None and self.exclude.match(probe):
            return True
        return bool(ignores) and ignored(probe, ignores)

    def walk(self, folder: str, *, max_depth: int | None = None) -> Iterator[Entry]:
        """Entries under ``folder`` (``""``: the root), depth first in path order; a folder
        comes before what it holds."""
        yield from self._visit(folder, self._ignores_down_to(folder), 1, max_depth)

    def _visit(
        self, folder: str, ignores: list[tuple[str, Globs]], depth: int, max_depth: int | None
    ) -> Iterator[Entry]:
        from pathlib import Path

        from cuedeck.index.globs import gitignore

        directory = os.path.join(self.root, folder)
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            rel = f"{folder}/{entry.name}" if folder else entry.name
            inside = None
            try:
                is_link = entry.is_symlink()
                if is_link:
                    real = os.path.realpath(entry.path)
                    if not (real == self.root or real.startswith(self.root + os.sep)):
                        continue  # leaves the workspace
                    if os.path.isdir(real):
                        continue  # linked folders are never descended into
                    inside = os.path.relpath(real, self.root).replace(os.sep, "/")
                    if _never(inside):
                        continue  # a link into .git or the cache
                is_dir = entry.is_dir(follow_symlinks=False)
                st = entry.stat(follow_symlinks=True)
            except OSError:
                continue
            if self.skipped(rel, ignores, is_dir=is_dir):
                continue
            if is_dir:
                if protection(rel, write=False, places=self.places) or is_git_directory(entry.path):
                    continue  # CueDeck's private folders, a bare repository's files
                if self.workspace.denied(rel + "/"):
                    continue  # a folder [files] deny names
            elif self.workspace.read_refusal(rel, real_rel=inside, links=st.st_nlink):
                continue  # what get_file_content would refuse
            if is_dir:
                yield Entry(rel, True, 0, depth)
                if max_depth is None or depth < max_depth:
                    inner = ignores
                    if self.gitignore:
                        found = gitignore(Path(entry.path) / ".gitignore")
                        if found is not None:
                            inner = [*ignores, (rel, found)]
                    yield from self._visit(rel, inner, depth + 1, max_depth)
            elif stat_module.S_ISREG(st.st_mode):
                yield Entry(rel, False, st.st_size, depth)


def language_name(workspace: Workspace, path: str) -> str | None:
    """The language of ``path``: the index's when it indexed the file, else by suffix."""
    from cuedeck_code.languages import language_of

    indexed = workspace.index.language(path) if "index" in workspace.__dict__ else None
    if indexed is not None:
        return indexed
    if path.endswith(".md"):
        return "markdown"
    found = language_of(path)
    return found.name if found is not None else None
