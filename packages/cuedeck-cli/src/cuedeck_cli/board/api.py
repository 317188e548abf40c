"""What the board asks of the workspace: the services of cards and memory, by their
contracts (:mod:`cuedeck.plugins.services`), and the scene and search tools.

A service answers as the tool doing the same work replies (the same validation, errors
and claim checks). Every answer passes the maskers on its way to the page, and every
failure becomes a CueDeck error in JSON (``{"error": {...}}``). Calls are serialised:
the workspace and its cache are used from one thread at a time.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from cuedeck.errors import CueError, MissingExtra

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from cuedeck.plugins.services import CardService, MemoryService
    from cuedeck.plugins.tools import Tool
    from cuedeck.workspace import Workspace


#: The most cards a search marks (the engine's largest page).
CARD_HITS = 100


class BoardApi:
    """The board's view of one workspace."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self._lock = threading.Lock()

    def tools(self) -> dict[str, Tool]:

        return self.workspace.plugins.tools()

    def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> Any:
        """Serve the tool ``name`` on fresh files: its reply, masked and JSON-ready."""
        from cuedeck.serving.calls import serve

        tool = self.tools().get(name)
        if tool is None:
            raise MissingExtra.needs(
                f"the board needs the {name} tool, which no installed plugin registers"
            )
        with self._lock:
            self.workspace.invalidate()  # the files are the truth: see every edit on disk
            return serve(tool, self.workspace, arguments)

    def _cards(self) -> CardService:
        from cuedeck.plugins.services import CardService

        return self.workspace.service(CardService)  # MissingExtra (1008) without tasks

    def _memory(self) -> MemoryService:
        from cuedeck.plugins.services import MemoryService

        return self.workspace.service(MemoryService)  # MissingExtra (1008) without memory

    def _served(self, work: Callable[[], Any], inputs: Any = None) -> Any:
        """What ``work()`` answers on fresh files, masked and JSON-ready, as a tool's
        reply is (knowing the secrets of ``inputs``, what the page sent)."""
        from cuedeck.serving.calls import served

        with self._lock:
            self.workspace.invalidate()  # the files are the truth: see every edit on disk
            return served(self.workspace, work, inputs)

    def has_service(self, name: str) -> bool:
        """Whether an installed plugin provides the service ``name``."""
        from cuedeck.plugins.host import get_services

        return name in get_services(self.workspace.plugins)

    def create_card(self, fields: Mapping[str, Any]) -> Any:
        """A new card (``create_task``'s fields): what create_task replies, masked."""
        return self._served(lambda: self._cards().create_card(fields), fields)

    def update_card(
        self, card_id: str, updates: Mapping[str, Any], content_hash: str | None = None
    ) -> Any:
        """Change a card (update_task, with the hash the page read): its reply, masked."""
        given = {"id": card_id, "updates": updates, "content_hash": content_hash}
        return self._served(
            lambda: self._cards().update_card(card_id, updates, content_hash), given
        )

    def claims_version(self) -> str:
        """A stamp that changes whenever an agent's claim on a card does (core's claims
        contract; ``""`` when no plugin keeps claims)."""
        from cuedeck.plugins.claims import claims_version

        with self._lock:
            return claims_version(self.workspace)

    def failure(self, error: CueError) -> dict[str, Any]:
        """The JSON body of ``error``, masked."""
        return {"error": self.masked(error.to_dict())}

    def masked(self, value: Any) -> Any:
        """``value`` (JSON-like) with every string masked."""
        with self._lock:
            return self.workspace.mask_session().mask_json(value)

    # -- what the page shows -----------------------------------------------------------

    def cards(self) -> dict[str, Any]:
        """Every card with its content hash, the columns, and what the filters offer."""
        cards = self._served(lambda: self._cards().summaries())
        labels = self._code_labels()
        for card in cards:
            card["content_hash"] = self._card_hash(card["id"])
            card["code_refs"] = labels.get(card["id"], [])
        tags = sorted({tag for card in cards for tag in card.get("tags") or []})
        assignees = sorted({card["assignee"] for card in cards if card.get("assignee")})
        return {
            "cards": cards,
            "columns": ["todo", "active", "done", "archived"],
            "tags": tags,
            "assignees": assignees,
            "priorities": ["critical", "high", "medium", "low"],
            "search": self.has_service("search"),
            "memory": self.has_service("context"),
            "background": self.background(),
            "warnings": self.embedder_warnings(),
            "budget": self.workspace.config.scene.token_limit,  # where the slider starts
        }

    def background(self) -> list[str]:
        """What runs in the background for this workspace, a line per process (pid, age,
        how it ends: ``cue status``), masked."""
        from cuedeck.serving.background import background_processes, describe

        with self._lock:
            running = background_processes(self.workspace)
            return [self.workspace.mask(describe(process)) for process in running]

    def embedder_warnings(self) -> list[str]:
        """What ``cue doctor`` says of the detached embedder (cuedeck-search's
        ``embedder`` check: its progress, or that it stopped before the end), masked."""
        from cuedeck.plugins.host import get_checks

        check = get_checks(self.workspace.plugins).get("embedder")
        if check is None:
            return []
        with self._lock:
            found = check(self.workspace)
            return [self.workspace.mask(problem.message) for problem in found]

    def _code_labels(self) -> dict[str, list[dict[str, str]]]:
        """Each card's code references with their label (fresh, moved, drifted,
        orphaned, new), masked like everything the board sends."""
        from cuedeck.errors import CueError
        from cuedeck.layout import CARDS_DIR
        from cuedeck.refs.drift import label_references

        try:
            documents = self.workspace.documents
            cards = [p for p in documents if p.startswith(CARDS_DIR + "/")]
            found = label_references(self.workspace, cards)
        except CueError:
            return {}
        labels: dict[str, list[dict[str, str]]] = {}
        for label in found:
            card_id = label.source.rsplit("/", 1)[-1].removesuffix(".md")
            labels.setdefault(card_id, []).append(
                {"ref": f"code/{label.key}", "state": label.state, "label": label.describe()}
            )
        masked: dict[str, list[dict[str, str]]] = self.masked(labels)
        return masked

    def _card_hash(self, card_id: str) -> str | None:
        """The sha256 of a card's file as it is now: update_task's ``content_hash``."""
        from cuedeck.layout import card_path
        from cuedeck.writes import sha256_bytes

        try:
            return sha256_bytes((self.workspace.root / card_path(card_id)).read_bytes())
        except OSError:
            return None

    def graph(self) -> dict[str, Any]:
        """Nodes (with readiness) and dependency edges; the cycles the graph holds."""
        cards = self._served(lambda: self._cards().summaries())
        report = self._served(lambda: self._cards().graph_report())
        status = {card["id"]: card["status"] for card in cards}
        nodes = []
        for card in cards:
            waits = [dep for dep in card.get("depends_on") or [] if status.get(dep) != "done"]
            nodes.append(
                {
                    "id": card["id"],
                    "title": card["title"],
                    "status": card["status"],
                    "ready": card["status"] == "todo" and not waits,
                }
            )
        edges = [
            {"from": card["id"], "to": dep}
            for card in cards
            for dep in card.get("depends_on") or []
            if dep in status
        ]
        return {"nodes": nodes, "edges": edges, "cycles": report.get("cycles", [])}

    def search(self, query: str) -> Any:
        """read_context's reply (hits, which side ranked them, what is still embedding)
        and ``cards``: the ids of the cards that match, searched among cards alone (in a
        code repository the code fills the first hits)."""
        from cuedeck.layout import CARDS_DIR
        from cuedeck.models import SearchFilters
        from cuedeck.plugins.services import SearchService

        search = self.workspace.service(SearchService)  # MissingExtra (1008) without search
        reply = self._served(lambda: search.context(query, 10), {"query": query})
        folder = CARDS_DIR + "/"
        with self._lock:
            count = sum(path.startswith(folder) for path in self.workspace.documents)
            found = (
                self.workspace.search(
                    query, limit=min(count, CARD_HITS), filters=SearchFilters(kinds=("card",))
                )
                if count
                else []
            )
        # A searcher of another plugin may not know kinds: only cards are kept anyway.
        cards = [
            r.path.removeprefix(folder).removesuffix(".md")
            for r in found
            if r.path.startswith(folder)
        ]
        return {**reply, "cards": self.masked(cards)}

    def memory(self, project: str | None = None) -> dict[str, Any]:
        """Usage, health, working set and pins of a project's current task (cuedeck-memory;
        without ``project``, the workspace's)."""
        project = project or None
        usage = self._served(lambda: self._memory().usage(project), project)
        working = self._served(lambda: self._memory().working_set(project), project)
        return {"project_id": usage["project_id"], "usage": usage, "working_set": working}

    def pin(self, project: str | None, segment_id: str, pinned: bool) -> Any:
        """Pin or unpin one segment (context_gc_pin / context_gc_unpin)."""
        project = project or None
        given = {"project_id": project, "segment_ids": [segment_id]}
        return self._served(lambda: self._memory().pin([segment_id], pinned, project), given)
