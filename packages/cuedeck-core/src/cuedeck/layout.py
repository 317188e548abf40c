"""Where a workspace keeps its cards and docs, and what a card id looks like.

A dependency-free module: core plugin modules import it while ``cue --help`` runs.
"""

from __future__ import annotations

import re

CARDS_DIR = ".cuedeck/cards"
DOCS_DIR = ".cuedeck/docs"
#: A card id: six of a-z and 0-9; the card is ``CARDS_DIR/<id>.md``.
CARD_ID_PATTERN = r"^[a-z0-9]{6}$"
CARD_ID = re.compile(CARD_ID_PATTERN)
