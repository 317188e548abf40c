"""Where everything of a workspace lives under ``.cuedeck/``, and what a card id looks like.

The one home of these paths (workspace-relative, POSIX): code that reads or writes
under ``.cuedeck/`` imports them from here. A dependency-free module: core plugin
modules import it while ``cue --help`` runs.
"""

from __future__ import annotations

import re

#: The folder that makes a directory a CueDeck workspace.
WORKSPACE_DIR = ".cuedeck"
CARDS_DIR = f"{WORKSPACE_DIR}/cards"
DOCS_DIR = f"{WORKSPACE_DIR}/docs"
CONFIG_PATH = f"{WORKSPACE_DIR}/config.toml"
#: Hashes and roles of the MCP bearer tokens (never the tokens): `cue mcp token add`.
ACCESS_PATH = f"{WORKSPACE_DIR}/access.toml"
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
CARDS_DB = f"{CACHE_DIR}/cards.sqlite3"
#: Per-card write locks: ``LOCKS_DIR/<name>.lock``.
LOCKS_DIR = f"{CACHE_DIR}/locks"
CONFIRMATIONS_PATH = f"{CACHE_DIR}/confirmations.json"
#: The rate-limit buckets of the local (stdio) client, kept across server restarts.
RATE_LIMITS_DB = f"{CACHE_DIR}/ratelimits.sqlite3"
CONFIRMATIONS_LOCK = f"{CONFIRMATIONS_PATH}.lock"

#: Context memory (the memory plugin): its store ``MEMORY_DIR/memory.sqlite3`` and its
#: exports live here. One person's session context: git-ignored (docs/memory.md says why).
MEMORY_DIR = f"{WORKSPACE_DIR}/memory"
#: The index an older memory plugin kept beside its segment files (read once, for the
#: GC counters, when those files move into the store).
MEMORY_DB = f"{CACHE_DIR}/memory.sqlite3"

#: What ``cue init`` adds to the workspace's .gitignore (``cue doctor`` checks git agrees):
#: the state lock and the holder file every lock writes beside itself are one person's too.
GITIGNORE_LINES = (
    f"{CACHE_DIR}/",
    SCENE_PATH,
    STATE_PATH,
    STATE_LOCK,
    f"{STATE_LOCK}.pid",
    f"{MEMORY_DIR}/",
)

#: What no tool reads or writes, relative to any ``.cuedeck/`` folder (this workspace's
#: or a nested one's): the caches and locks, the token hashes, one person's state, and
#: ``team`` (a team server's registry and its members' copies, reached only through the
#: repositories it serves).
PRIVATE = (".cache", "access.toml", "state.json", ".state.lock", "team")
#: What tools may read but never write: the settings the server trusts (``[masking]``,
#: ``[files] deny``, roles), memory (its store ``memory.sqlite3``, with the ``-wal`` and
#: ``-shm`` files SQLite keeps beside it, and its exports), which only the memory tools
#: write, and the record of code references, which only recording writes (an edit could
#: hide a drift).
CONTROL = ("config.toml", "memory", "code-refs.json")


def _as_resolved(name: str) -> str:
    return name if name in (".", "..") else name.rstrip(". ").lower()


def protection(rel: str, *, write: bool) -> str | None:
    """Why a tool may not read (or, with ``write``, write) the workspace-relative POSIX
    path ``rel``: ``"git"`` (inside any ``.git``), ``"private"``, ``"control"``; else None.

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
        if inner in PRIVATE:
            return "private"
        if write and inner in CONTROL:
            return "control"
    return None


#: A card id: six of a-z and 0-9; the card is ``CARDS_DIR/<id>.md``.
CARD_ID_PATTERN = r"^[a-z0-9]{6}$"
CARD_ID = re.compile(CARD_ID_PATTERN)


def memory_lock(project_id: str) -> str:
    """The lock writers of one memory project take."""
    return f"{LOCKS_DIR}/memory-{project_id}.lock"


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
