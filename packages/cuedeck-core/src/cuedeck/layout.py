"""Where everything of a workspace lives under ``.cuedeck/``, and what a card id looks like.

The one home of core's paths (workspace-relative, POSIX): core code that reads or
writes under ``.cuedeck/`` imports them from here. A plugin keeps its own paths and
registers those tools may not reach (``register_paths``): :class:`Places`. A
dependency-free module: core plugin modules import it while ``cue --help`` runs.
"""

from __future__ import annotations

import re
from typing import NamedTuple

#: The folder that makes a directory a CueDeck workspace.
WORKSPACE_DIR = ".cuedeck"
CARDS_DIR = f"{WORKSPACE_DIR}/cards"
DOCS_DIR = f"{WORKSPACE_DIR}/docs"
CONFIG_PATH = f"{WORKSPACE_DIR}/config.toml"
#: One person's current card (git-ignored), and the lock its writers take.
STATE_PATH = f"{WORKSPACE_DIR}/state.json"
STATE_LOCK = f"{WORKSPACE_DIR}/.state.lock"
#: The recorded state of every ``@code/`` reference (symbol, lines, hashes): project data,
#: committed beside the cards (docs/code.md, "References to code").
CODE_REFS_PATH = f"{WORKSPACE_DIR}/code-refs.json"
#: Where ``cue scene`` writes by default (``[scene] output``).
SCENE_PATH = f"{WORKSPACE_DIR}/SCENE.md"

#: Everything rebuildable (git-ignored; ``cue clean`` removes it).
CACHE_DIR = f"{WORKSPACE_DIR}/.cache"
INDEX_DB = f"{CACHE_DIR}/index.sqlite3"
INDEX_LOCK = f"{CACHE_DIR}/index.lock"
#: Per-card write locks: ``LOCKS_DIR/<name>.lock``.
LOCKS_DIR = f"{CACHE_DIR}/locks"
CONFIRMATIONS_PATH = f"{CACHE_DIR}/confirmations.json"
CONFIRMATIONS_LOCK = f"{CONFIRMATIONS_PATH}.lock"

#: What ``cue init`` adds to the workspace's .gitignore (``cue doctor`` checks git agrees),
#: core's lines (plugins add theirs, :class:`Places`): the state lock and the holder file
#: every lock writes beside itself are one person's too.
GITIGNORE_LINES = (
    f"{CACHE_DIR}/",
    SCENE_PATH,
    STATE_PATH,
    STATE_LOCK,
    f"{STATE_LOCK}.pid",
)


class Places(NamedTuple):
    """What tools may not reach under any ``.cuedeck/`` folder (this workspace's or a
    nested one's), by the name of the entry directly under it, and what ``cue init``
    git-ignores. Core's own are :data:`CORE_PLACES`; a plugin adds its own through
    ``register_paths`` (:func:`cuedeck.plugins.host.get_places`, once per host)."""

    #: No tool reads or writes them (caches and locks, secrets' hashes, one person's state).
    private: frozenset[str]
    #: Tools may read but never write them: what the server trusts, and what only its
    #: owner's own code writes.
    control: frozenset[str]
    #: Workspace-relative lines for ``.gitignore``.
    gitignore: tuple[str, ...]


#: Core's own: the caches and locks and one person's state are private; the settings
#: the server trusts (``[masking]``, ``[files] deny``) and the record of code references
#: (only recording writes it: an edit could hide a drift) are control files.
CORE_PLACES = Places(
    private=frozenset({".cache", "state.json", ".state.lock"}),
    control=frozenset({"config.toml", "code-refs.json"}),
    gitignore=GITIGNORE_LINES,
)


def protection(rel: str, *, write: bool, places: Places = CORE_PLACES) -> str | None:
    """Why a tool may not read (or, with ``write``, write) the workspace-relative POSIX
    path ``rel``: ``"git"`` (inside any ``.git``), ``"private"``, ``"control"`` (by
    ``places``: core's own, or with what the plugins registered); else None.

    Names are compared as a case-insensitive file system (or Windows, which drops
    trailing dots and spaces) would resolve them, so ``.GIT/config`` is ``.git/config``.
    Callers pass both the path as asked and its resolved real path (see
    :meth:`cuedeck.workspace.Workspace.locate`): a link reaches what it points to.
    """
    parts = [
        part.rstrip(". ").lower() if part not in (".", "..") else part for part in rel.split("/")
    ]
    if ".git" in parts:
        return "git"
    for at, part in enumerate(parts[:-1]):
        if part != WORKSPACE_DIR:
            continue
        inner = parts[at + 1]
        if inner in places.private:
            return "private"
        if write and inner in places.control:
            return "control"
    return None


def place_name(name: str) -> str:
    """``name`` (an entry directly under ``.cuedeck/``) as :func:`protection` compares it."""
    return name.rstrip("/").rstrip(". ").lower()


#: A card id: six of a-z and 0-9; the card is ``CARDS_DIR/<id>.md``.
CARD_ID_PATTERN = r"^[a-z0-9]{6}$"
CARD_ID = re.compile(CARD_ID_PATTERN)


def card_path(card_id: str) -> str:
    """The workspace-relative path of card ``card_id``."""
    return f"{CARDS_DIR}/{card_id}.md"


#: What the written scene was built from (card, inputs and their hashes), as data.
SCENE_RECORD = f"{CACHE_DIR}/scene.json"


#: Overrides the user cache directory (tests point it at a temporary folder).
USER_CACHE_ENV = "CUEDECK_CACHE_DIR"


def user_cache_dir() -> str:
    """The per-user cache shared by every workspace (embeddings outlive ``cue clean``):
    ``$CUEDECK_CACHE_DIR``, else the platform's user cache folder for ``cuedeck``."""
    import os
    import sys

    explicit = os.environ.get(USER_CACHE_ENV)
    if explicit:
        return explicit
    system: str = sys.platform  # a variable: type checkers judge one platform only
    if system == "linux":
        # The XDG rule, platformdirs' answer here; every `cue` start reads its entry-point
        # cache from this folder, and importing platformdirs costs more than that read.
        base = os.environ.get("XDG_CACHE_HOME", "").strip() or os.path.expanduser("~/.cache")
        return os.path.join(base, "cuedeck")
    import platformdirs  # macOS and Windows

    return platformdirs.user_cache_dir("cuedeck", appauthor=False)
