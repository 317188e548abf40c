"""The ``cue`` command line of CueDeck; :func:`make_cli` builds it.

Plugins add commands through the ``register_commands`` hook, take the workspace with
:func:`pass_workspace`, and expose a registered tool as a command with
:func:`tool_command`.
"""

from __future__ import annotations

from cuedeck_cli.app import make_cli
from cuedeck_cli.context import pass_workspace
from cuedeck_cli.tool_commands import tool_command

__all__ = ["make_cli", "pass_workspace", "tool_command"]
