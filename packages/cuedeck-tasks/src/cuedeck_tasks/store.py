"""The card store: every read and write of ``.cuedeck/cards/*.md`` goes through it.

Reads are cached by file identity (inode, mtime, size): in memory for the life of the
store, and in ``.cuedeck/.cache/cards.sqlite3`` across processes, so listing thousands
of cards does not parse thousands of YAML blocks.

Writes go through core's write path (:func:`cuedeck.writes.rewrite_file`): read, edit and
the atomic write happen under the lock of the card file's real path, the same lock the
file tools take, so concurrent writers never lose an update. Changes to
dependencies also hold a workspace-wide lock, so two writers cannot close a cycle
between them. A caller that edits from an older read passes it as ``base``: when another
writer has meanwhile changed a field this update sets, the update fails with
:class:`~cuedeck.errors.Conflict` (1005); otherwise it is applied to the current file.
"""

from __future__ import annotations

import contextlib
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cuedeck.errors import Conflict, CueError, FileNotFound, InvalidInput, did_you_mean
from cuedeck.errors import suggestion_text as _suggestion_text
from cuedeck.index.left_out import link_problem
from cuedeck.layout import (
    CACHE_DIR,
    CARD_ID,
    CARDS_DIR,
    CORE_PLACES,
    LOCKS_DIR,
    card_path,
)
from cuedeck.markdown import frontmatter
from cuedeck.text import decode, split_lines
from cuedeck.writes import locked, rewrite_file, sha256_bytes, write_file
from cuedeck_tasks.card_cache import CardCache, FileKey
from cuedeck_tasks.card_updates import CardChanges as CardChanges  # re-exported: public API
from cuedeck_tasks.card_updates import Updated as Updated
from cuedeck_tasks.card_updates import check_overlap, edited_text
from cuedeck_tasks.cardfile import (
    first_title,
    render_frontmatter,
)
from cuedeck_tasks.cardmerge import CONFLICT_PROBLEM, conflict_lines
from cuedeck_tasks.cards import (
    PRIORITIES,
    Card,
    check_card_label,
    check_choice,
    check_id,
    check_text,
    heading_of,
    new_id,
    utc_now,
)
from cuedeck_tasks.graph import TaskGraph

if TYPE_CHECKING:
    from collections.abc import Iterable

    from cuedeck.hookspecs import CardChange
    from cuedeck.workspace import Workspace
    from cuedeck_tasks.filters import CardFilter

log = logging.getLogger("cuedeck")

#: The cross-process cache of parsed cards (card_cache.py), under core's cache folder.
CACHE_FILE = f"{CACHE_DIR}/cards.sqlite3"
_ID_ATTEMPTS = 20


class CardStore:
    """Cards of one workspace: read, list, create, update; see the module docstring."""

    def __init__(self, workspace: Workspace | Path) -> None:
        from cuedeck.workspace import Workspace

        self.workspace = workspace if isinstance(workspace, Workspace) else None
        self.root = workspace.root if isinstance(workspace, Workspace) else Path(workspace)
        self.directory = self.root / CARDS_DIR
        #: What no tool reaches: a link to one of them is not a card.
        self.places = workspace.places if isinstance(workspace, Workspace) else CORE_PLACES
        self._memory: dict[str, tuple[FileKey, Card]] = {}
        self._disk = CardCache(self.root / CACHE_FILE)
        self._graph: tuple[tuple[tuple[str, FileKey], ...], TaskGraph] | None = None

    def __repr__(self) -> str:
        return f"CardStore({str(self.root)!r})"

    @classmethod
    def of(cls, workspace: Workspace) -> CardStore:
        """The workspace's card store: its ``cards`` service, typed."""
        return workspace.service("cards", cls)

    # -- reading ---------------------------------------------------------------------------

    def _scan(self) -> dict[str, FileKey]:
        found: dict[str, FileKey] = {}
        try:
            entries = os.scandir(self.directory)
        except FileNotFoundError:
            return found
        with entries:
            for entry in entries:
                name = entry.name
                if len(name) != 9 or not name.endswith(".md") or not CARD_ID.match(name[:6]):
                    continue
                if entry.is_symlink() and link_problem(self.root, entry.path, name, self.places):
                    continue  # not part of the workspace (cue doctor names it)
                try:
                    stat = entry.stat()
                except FileNotFoundError:
                    continue
                if stat.st_mode & 0o170000 == 0o100000:  # regular files only
                    found[name[:6]] = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        return found

    def all(self) -> dict[str, Card]:
        """Every card by id, sorted by id."""
        return self._all(self._scan())

    def _all(self, keys: dict[str, FileKey]) -> dict[str, Card]:
        cards: dict[str, Card] = {}
        fresh: list[tuple[str, FileKey, Card]] = []
        for card_id in sorted(keys):
            key = keys[card_id]
            remembered = self._memory.get(card_id)
            if remembered is not None and remembered[0] == key:
                cards[card_id] = remembered[1]
                continue
            card = self._disk.get(card_id, key)
            if card is None:
                loaded = self._read(card_id)
                if loaded is None:
                    continue
                key, card = loaded
                fresh.append((card_id, key, card))
            self._memory[card_id] = (key, card)
            cards[card_id] = card
        for gone in set(self._memory) - set(keys):
            self._memory.pop(gone, None)  # pop: another thread may have dropped it too
        if fresh:
            self._disk.save(fresh)
        return cards

    def ids(self) -> list[str]:
        """Every card id, sorted."""
        return sorted(self._scan())

    def get(self, card_id: str) -> Card:
        """The card ``card_id``, or FileNotFound (1001) naming similar ids."""
        check_id(card_id)
        path = self._path(card_id)
        try:
            stat = path.stat()
        except FileNotFoundError:
            raise self.not_found(card_id) from None
        key = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        remembered = self._memory.get(card_id)
        if remembered is not None and remembered[0] == key:
            return remembered[1]
        loaded = self._read(card_id)
        if loaded is None:
            raise self.not_found(card_id)
        self._memory[card_id] = loaded
        return loaded[1]

    def text(self, card_id: str) -> str:
        """The text of card ``card_id``'s file."""
        check_id(card_id)
        try:
            return decode(self._path(card_id).read_bytes())[0]
        except FileNotFoundError:
            raise self.not_found(card_id) from None

    def resolve(self, prefix: str) -> str:
        """The id that ``prefix`` (an id, or the start of exactly one) names."""
        prefix = prefix.strip().lower()
        if CARD_ID.match(prefix):
            return prefix
        if prefix and prefix.isalnum():
            matches = [card_id for card_id in self.ids() if card_id.startswith(prefix)]
            if len(matches) == 1:
                return matches[0]
            if len(matches) > 1:
                raise InvalidInput(
                    f"{prefix!r} is the start of {len(matches)} card ids: {', '.join(matches[:8])}",
                    field="id",
                    candidates=matches,
                )
        raise self.not_found(prefix)

    def not_found(self, card_id: str) -> FileNotFound:
        """FileNotFound (1001) for ``card_id``, naming similar ids."""
        matches = did_you_mean(card_id, self.ids())
        return FileNotFound(
            f"no card {card_id!r} in {CARDS_DIR}/",
            path=card_path(card_id) if CARD_ID.match(card_id) else None,
            id=card_id,
            candidates=matches,
            suggestion=_suggestion_text(matches),
            help="`cue card list` shows every card and its id (a unique prefix works too)",
        )

    def select(self, filters: CardFilter | None = None) -> list[Card]:
        """Cards passing ``filters``, sorted by id."""
        cards = self.all().values()
        return [card for card in cards if filters is None or filters.accepts(card)]

    def graph(self) -> TaskGraph:
        """The dependency graph of the cards as they are now (rebuilt only after changes)."""
        keys = self._scan()
        snapshot = tuple(sorted(keys.items()))
        if self._graph is None or self._graph[0] != snapshot:
            self._graph = (snapshot, TaskGraph(self._all(keys)))
        return self._graph[1]

    def _path(self, card_id: str) -> Path:
        """The file of card ``card_id``; one whose real path leaves the workspace (a
        symlink out) is treated as absent, as the index treats it."""
        path = self.directory / f"{card_id}.md"
        if path.is_symlink() and link_problem(
            self.root, str(path), card_path(card_id), self.places
        ):
            raise self.not_found(card_id)
        return path

    def _read(self, card_id: str) -> tuple[FileKey, Card] | None:
        try:
            path = self._path(card_id)
        except FileNotFound:
            return None
        try:
            with path.open("rb") as handle:
                stat = os.fstat(handle.fileno())
                data = handle.read()
        except FileNotFoundError:
            return None
        return (stat.st_ino, stat.st_mtime_ns, stat.st_size), self._parse(card_id, data)

    @staticmethod
    def _parse(card_id: str, data: bytes) -> Card:
        text, replaced = decode(data)
        lines = split_lines(text)
        conflicted = conflict_lines(lines) if b"<<<<<<<" in data else ()
        values, problems = frontmatter.read(lines, card_path(card_id))
        messages = [f"line {line}: {CONFLICT_PROBLEM}" for line in conflicted]
        messages += [f"line {p.line}: {p.message}" for p in problems]
        if replaced:
            messages.append("the file is not valid UTF-8")
        return Card.from_frontmatter(
            card_id,
            values,
            sha256=sha256_bytes(data),
            problems=messages,
            heading=None if values.get("title") else first_title(lines),
            conflicted=conflicted,
        )

    # -- writing ---------------------------------------------------------------------------

    def _lock(self, name: str) -> contextlib.AbstractContextManager[None]:
        return locked(self.root / LOCKS_DIR / f"{name}.lock", display=f"{LOCKS_DIR}/{name}.lock")

    def create(
        self,
        title: str,
        *,
        priority: str | None = None,
        assignee: str | None = None,
        tags: Iterable[str] = (),
        depends_on: Iterable[str] = (),
        body: str | None = None,
    ) -> Card:
        """Write a new ``todo`` card and return it.

        Dependencies must exist (DependencyNotFound, 1001); nothing is written otherwise.
        """
        check_card_label(title, field="title")
        if priority is None:
            priority = self._default_priority()
        check_choice(priority, PRIORITIES, field="priority")
        if assignee is not None:
            check_card_label(assignee, field="assignee", allow_empty=True)
        tag_list = list(dict.fromkeys(check_card_label(tag, field="tags") for tag in tags))
        deps = list(dict.fromkeys(check_id(dep, field="depends_on") for dep in depends_on))
        if body is not None:
            check_text(body, field="body", allow_empty=True)
        with self._lock("dependencies") if deps else contextlib.nullcontext():
            graph = self.graph()
            graph.check_exist(deps, card_id=None)
            for _ in range(_ID_ATTEMPTS):
                card_id = new_id(title)
                # Also skip ids that cards already name in depends_on (dangling references).
                if card_id in graph or (self.directory / f"{card_id}.md").exists():
                    continue
                graph.check_new_dependencies(card_id, deps)
                now = utc_now()
                fields: dict[str, Any] = {
                    "id": card_id,
                    "title": title,
                    "status": "todo",
                    "priority": priority,
                    "assignee": assignee or None,
                    "tags": tag_list,
                    "depends_on": deps,
                    "created": now,
                    "updated": now,
                }
                if fields["assignee"] is None:
                    del fields["assignee"]
                text = render_frontmatter(fields) + heading_of(title) + "\n"
                if body:
                    text += "\n" + body.rstrip("\n") + "\n"
                try:
                    write_file(
                        self.root,
                        self.directory / f"{card_id}.md",
                        text,
                        expected_sha256="",
                        display=card_path(card_id),
                    )
                except Conflict:
                    continue  # another writer took this id a moment ago
                found = self._remember(card_id)
                self._tell(card_id, "created")
                return found
        raise CueError(f"could not find a free card id in {_ID_ATTEMPTS} attempts")

    def update(
        self,
        card_id: str,
        changes: CardChanges,
        *,
        base: Card | None = None,
        content_hash: str | None = None,
    ) -> Updated:
        """Apply ``changes`` to card ``card_id`` and return the card as written.

        With ``base`` (the card as the caller read it), a field this update sets that
        someone else changed meanwhile is a Conflict (1005) naming the current hash.
        With ``content_hash`` (the card's sha256 as read), any change to the file since
        is a Conflict (1005): nothing newer is ever overwritten.
        """
        check_id(card_id)
        changes.check()
        touches_graph = bool(changes.add_depends_on)
        shown = card_path(card_id)
        unchanged: list[Card] = []
        written: list[tuple[str, ...]] = []

        def change(data: bytes | None) -> str | None:
            # Runs under the write path's lock of the card's file: read, check, edit and
            # write are one step for every writer (edit_file included).
            if data is None:
                raise self.not_found(card_id)
            sha = sha256_bytes(data)
            if content_hash is not None and content_hash != sha:
                raise Conflict(
                    f"{shown} changed since it was read",
                    path=shown,
                    expected_hash=content_hash,
                    current_hash=sha,
                    current_content_hash=sha,
                    help="read the card again (its sha256) and retry",
                )
            current = self._parse(card_id, data)
            if base is not None and base.sha256 != sha:
                check_overlap(card_id, changes, base, current, sha)
            edit = edited_text(card_id, data, current, changes, self.graph)
            if edit is None:
                unchanged.append(current)
                return None
            written.append(edit[1])
            return edit[0]

        with self._lock("dependencies") if touches_graph else contextlib.nullcontext():
            rewrite_file(self.root, self._path(card_id), change, display=shown)
        if unchanged:
            return Updated(unchanged[0], ())
        found = self._remember(card_id)
        self._tell(card_id, "updated", written[0])
        return Updated(found, written[0])

    def activate(self, card_id: str) -> Card:
        """Make ``card_id`` the active card (what scenes pack and memory's current task
        follows); a todo card becomes active. FileNotFound (1001) for an unknown id."""
        from cuedeck.state import set_active_card

        found = self.get(card_id)
        if found.status == "todo":
            found = self.update(found.id, CardChanges(status="active")).card
        set_active_card(self.root, found.id)
        self._tell(found.id, "activated")
        return found

    def _remember(self, card_id: str) -> Card:
        """Re-read a card just written, and tell the workspace its index is stale."""
        loaded = self._read(card_id)
        if loaded is None:
            raise self.not_found(card_id)
        self._memory[card_id] = loaded
        if self.workspace is not None:
            self.workspace.invalidate([card_path(card_id)])
        return loaded[1]

    def _tell(self, card_id: str, change: CardChange, fields: tuple[str, ...] = ()) -> None:
        """Tell the plugins a card changed (``cuedeck_card_changed``), after the write."""
        if self.workspace is None:
            return
        from cuedeck.hookspecs import CardChanged

        changed = CardChanged(card_id, change, fields)
        self.workspace.plugins.call(
            "cuedeck_card_changed", workspace=self.workspace, changed=changed
        )

    def _default_priority(self) -> str:
        if self.workspace is None:
            return "medium"
        from cuedeck_tasks.settings import TaskSettings

        return self.workspace.config.section("tasks", TaskSettings).default_priority
