"""The CueDeck plugin of cuedeck-mcp (entry point ``cuedeck = mcp``).

Kept import-light: ``cue --help`` loads every plugin module.
"""

from __future__ import annotations
