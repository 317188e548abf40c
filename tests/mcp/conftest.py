"""Fixtures of the MCP tests: a copy of the demo workspace and FastMCP in-memory clients."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from cuedeck.workspace import open_workspace

if TYPE_CHECKING:
    from fastmcp import FastMCP

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "examples" / "demo"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    """A private copy of examples/demo (its cache left behind)."""
    root = tmp_path / "demo"
    shutil.copytree(DEMO, root, ignore=shutil.ignore_patterns(".cache", "state.json"))
    return root


def server_for(root: Path, **options: Any) -> FastMCP:
    """A fresh server on the workspace at ``root``."""
    from cuedeck_mcp.server import build_server

    return build_server(open_workspace(root), **options)
