"""The CueDeck plugin of cuedeck-tasks (entry point ``cuedeck = tasks``).

Kept import-light: ``cue --help`` loads every plugin module.
"""

from __future__ import annotations
