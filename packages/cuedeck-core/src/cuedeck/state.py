"""Per-workspace working state that is not content: the active card.

Kept in ``.cuedeck/state.json`` (git-ignored by ``cue init``: it is one person's
focus, not project data) and written atomically.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from cuedeck.errors import InvalidInput
from cuedeck.layout import CARD_ID, STATE_LOCK, STATE_PATH
from cuedeck.writes import locked, write_file

if TYPE_CHECKING:
    from pathlib import Path


def _read(root: Path) -> dict[str, Any]:
    try:
        data = json.loads((root / STATE_PATH).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def active_card(root: Path) -> str | None:
    """The id set by ``cue card activate``, or None."""
    value = _read(root).get("active_card")
    return value if isinstance(value, str) and CARD_ID.match(value) else None


def set_active_card(root: Path, card_id: str | None) -> None:
    """Make ``card_id`` the active card (None clears it)."""
    if card_id is not None and not CARD_ID.match(card_id):
        raise InvalidInput(f"{card_id!r} is not a card id (6 of a-z, 0-9)", field="id")
    with locked(root / STATE_LOCK):
        state = _read(root)
        if card_id is None:
            state.pop("active_card", None)
        else:
            state["active_card"] = card_id
        write_file(root, STATE_PATH, json.dumps(state, indent=2, sort_keys=True) + "\n")
