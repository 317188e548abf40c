"""Finding a workspace's root: the path given, else ``CUE_WORKSPACE``, else the nearest
folder upwards holding ``.cuedeck/``."""

from __future__ import annotations

import os
from pathlib import Path

from cuedeck.errors import FileNotFound
from cuedeck.layout import WORKSPACE_DIR

ENV_WORKSPACE = "CUE_WORKSPACE"


def find_root(start: Path | str | None = None) -> Path:
    """The workspace root for ``start`` (default: ``CUE_WORKSPACE`` or the cwd)."""
    if start is None:
        env = os.environ.get(ENV_WORKSPACE)
        if env:
            return _explicit_root(Path(env), ENV_WORKSPACE)
        here = Path.cwd().resolve()
        for candidate in (here, *here.parents):
            if (candidate / WORKSPACE_DIR).is_dir():
                return candidate
        raise FileNotFound(
            f"no {WORKSPACE_DIR}/ directory in {here} or any parent",
            path=str(here),
            help="run `cue init` to create a workspace here, or pass -C DIR",
        )
    return _explicit_root(Path(start), "path")


def _explicit_root(path: Path, source: str) -> Path:
    path = path.expanduser().resolve()
    if not path.is_dir():
        raise FileNotFound(
            f"workspace directory {path} does not exist", path=str(path), field=source
        )
    if not (path / WORKSPACE_DIR).is_dir():
        raise FileNotFound(
            f"{path} is not a CueDeck workspace (no {WORKSPACE_DIR}/ directory)",
            path=str(path),
            help=f"run `cue init` in {path}",
        )
    return path
