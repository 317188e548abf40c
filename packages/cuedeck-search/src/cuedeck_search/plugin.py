"""The CueDeck plugin of cuedeck-search (entry point ``cuedeck = search``).

Kept import-light: ``cue --help`` loads every plugin module.
"""

from __future__ import annotations
