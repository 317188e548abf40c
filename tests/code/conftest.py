"""Fixtures of the code tests: the sample source files of ``data/`` in a workspace."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("cuedeck_code")

DATA = Path(__file__).parent / "data"


@pytest.fixture
def code_root(tmp_path: Path) -> Path:
    """A workspace (outside git) holding a copy of every sample file."""
    root = tmp_path / "code"
    shutil.copytree(DATA, root)
    for sub in ("cards", "docs"):
        (root / ".cuedeck" / sub).mkdir(parents=True)
    return root
