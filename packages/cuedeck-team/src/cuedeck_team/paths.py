"""Where a team keeps its files under its home's ``.cuedeck/`` (registered private with
``register_paths``: no tool reads or writes them)."""

from __future__ import annotations

from cuedeck.layout import WORKSPACE_DIR

#: A team server's home: its registry and its members' copies, reached only through the
#: repositories it serves.
TEAM_FOLDER = "team"
TEAM_DIR = f"{WORKSPACE_DIR}/{TEAM_FOLDER}"
