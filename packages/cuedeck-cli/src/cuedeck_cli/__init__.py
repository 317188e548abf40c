"""The ``cue`` command line of CueDeck; :func:`make_cli` builds it."""

from __future__ import annotations

from cuedeck_cli.app import make_cli

__all__ = ["make_cli"]
