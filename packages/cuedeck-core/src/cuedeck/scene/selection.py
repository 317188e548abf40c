"""Which card a scene is built for: the one home of the active-card rule."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from cuedeck.errors import (
    FileNotFound,
    InvalidInput,
    did_you_mean,
    suggestion_text,
)

if TYPE_CHECKING:
    from cuedeck.models import Document
    from cuedeck.workspace import Workspace


def find_card(workspace: Workspace, card_id: str | None = None) -> Document:
    """The card a scene is for: ``card_id``; else the activated card; else the most
    recently updated card with ``status: active``."""
    from cuedeck.markdown.document import CARD_ID, CARDS_DIR
    from cuedeck.state import active_card

    documents = workspace.documents
    cards = {p: d for p, d in documents.items() if d.kind == "card"}
    if card_id is not None:
        if not CARD_ID.match(card_id):
            raise InvalidInput(
                f"{card_id!r} is not a card id (6 characters a-z, 0-9)", field="card_id"
            )
        path = f"{CARDS_DIR}/{card_id}.md"
        if path in cards:
            return cards[path]
        ids = [p.rsplit("/", 1)[-1].removesuffix(".md") for p in cards]
        matches = did_you_mean(card_id, ids)
        raise FileNotFound(
            f"card {card_id} does not exist",
            path=path,
            field="card_id",
            suggestion=suggestion_text(matches),
            candidates=matches,
            help="`cue card list` shows every card; without an id the scene is the active card's",
        )
    stored = active_card(workspace.root)
    if stored is not None:
        path = f"{CARDS_DIR}/{stored}.md"
        if path in cards:
            return cards[path]
        raise FileNotFound(
            f"the active card {stored} (set by `cue card activate`) no longer exists",
            path=path,
            help="activate another card with `cue card activate ID`, or pass a card id",
        )
    active = [d for d in cards.values() if str(d.frontmatter.get("status", "")).lower() == "active"]
    if active:
        return max(active, key=lambda d: (_updated(d), d.path))
    raise FileNotFound(
        "no active card: none was given, none is activated, and no card has status: active",
        path=CARDS_DIR,
        help="pass a card id (`cue scene ID`), run `cue card activate ID`, "
        "or set `status: active` in a card's frontmatter",
    )


def _updated(document: Document) -> float:
    """The card's ``updated`` (else ``created``) time as a timestamp; oldest if unknown."""
    for key in ("updated", "created"):
        value = document.frontmatter.get(key)
        if value is None:
            continue
        try:
            when = datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
        except ValueError:
            continue
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        return when.timestamp()
    return float("-inf")


# --- candidates --------------------------------------------------------------------------
