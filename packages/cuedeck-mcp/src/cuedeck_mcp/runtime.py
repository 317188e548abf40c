"""Where the server touches the workspace: one thread, in order, masked on the way out.

Every tool call and resource read runs on a single worker thread. That serialises
access to the index and to whatever plugins keep open (SQLite connections may only be
used by the thread that made them), and keeps the event loop free for other requests.
Before each call the index catches up with edited files (:mod:`cuedeck_mcp.freshness`);
the call itself is core's :func:`cuedeck.serving.calls.serve` (validated, made JSON, masked).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import json
import logging
import os
import traceback
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

from fastmcp.exceptions import FastMCPError

from cuedeck.errors import CueError
from cuedeck.layout import CARDS_DIR
from cuedeck_mcp.freshness import Freshness

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterator, Mapping

    from cuedeck.masking.session import MaskSession
    from cuedeck.plugins.tools import Tool
    from cuedeck.workspace import Workspace

log = logging.getLogger("cuedeck")
T = TypeVar("T")


class CueFailure(FastMCPError):
    """A CueError on its way to the client, with its message and data already masked.

    Being a FastMCPError, FastMCP logs it at debug level and re-raises it unchanged;
    :class:`~cuedeck_mcp.middleware.CueDeckMiddleware` turns it into a JSON-RPC error.
    """

    def __init__(self, code: int, title: str, message: str, data: dict[str, Any]) -> None:
        super().__init__(message, log_level=logging.DEBUG)
        self.code = code
        self.title = title
        self.message = message
        self.data = data


def _warm_token_counter(workspace: Workspace) -> None:
    try:
        workspace.count_tokens("warm")
    except Exception:  # a counter that cannot load fails the calls that need it, clearly
        log.debug("token counter not warmed", exc_info=True)


class WorkspaceRuntime:
    """The workspace behind a server, reached from async code through one worker thread."""

    def __init__(self, workspace: Workspace, served: Collection[str] | None = None) -> None:
        self.workspace = workspace
        #: The tools this server offers (its profile); the tools about tools list these.
        self.served = frozenset(served) if served is not None else None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cuedeck-mcp")
        self._cards: frozenset[str] | None = None
        self.freshness = Freshness(workspace)
        self._warmed = False

    async def run(self, func: Callable[..., T], *args: Any) -> T:
        """``func(*args)`` on the worker thread."""
        loop = asyncio.get_running_loop()
        # The caller's context goes along: a tool such as whoami reads who is calling.
        context = contextvars.copy_context()
        try:
            return await loop.run_in_executor(
                self._executor, functools.partial(context.run, func, *args)
            )
        finally:
            if not self._warmed:
                # The exact tokenizer is built on its first count (about 0.1 s): built
                # right after the first answer, not in the first call that follows an
                # edit, and not before the first answer either (this one worker would make
                # that answer wait for it).
                self._warmed = True
                with contextlib.suppress(RuntimeError):  # shut down meanwhile: no need
                    self._executor.submit(_warm_token_counter, self.workspace)

    def close(self) -> None:
        """Stop the worker thread once queued work is done, and the file watcher."""
        self._executor.shutdown(wait=True)
        self.freshness.close()

    # -- on the worker thread --------------------------------------------------------------

    def call_tool(self, tool: Tool, arguments: Mapping[str, Any]) -> Any:
        """Refresh, then serve ``tool`` (validated, JSON-like, masked)."""
        from cuedeck.serving.calls import serve

        with self.guard(tool.name, arguments):
            self.freshness.ensure()
            return serve(tool, self.workspace, arguments, offered=self.served)

    def doc_text(self, path: str) -> str:
        """The masked text of the indexed markdown file at ``path`` (as ``read_doc`` finds it)."""
        from cuedeck.serving.read_doc import find_doc

        with self.guard("reading a doc", path):
            session = self.masking(path)
            self.freshness.ensure()
            document = find_doc(self.workspace, path)
            text = self.workspace.snapshot(document.path).text
            return session.mask(text, path=document.path)

    def card_titles(self) -> list[tuple[str, str]]:
        """``(id, masked title)`` of every card, by id: titles are published as is."""
        with self.guard("listing cards"):
            self.freshness.ensure()
            session = self.masking()
            return [
                (
                    doc.path.rsplit("/", 1)[-1].removesuffix(".md"),
                    session.mask(doc.title, path=doc.path),
                )
                for doc in self.workspace.documents.values()
                if doc.kind == "card"
            ]

    def card_text(self, card_id: str) -> str:
        """The masked text of card ``card_id``."""
        from cuedeck.errors import FileNotFound, InvalidInput, did_you_mean, suggestion_text
        from cuedeck.layout import CARD_ID

        with self.guard("reading a card", card_id):
            if not CARD_ID.match(card_id):
                raise InvalidInput(f"{card_id!r} is not a card id (6 of a-z, 0-9)", field="id")
            ids = [card for card, _ in self.card_titles()]
            if card_id not in ids:
                matches = did_you_mean(card_id, ids)
                raise FileNotFound(
                    f"no card {card_id}",
                    path=f"{CARDS_DIR}/{card_id}.md",
                    suggestion=suggestion_text(matches),
                    candidates=matches,
                )
            return self.doc_text(f"{CARDS_DIR}/{card_id}.md")

    def scene_text(self) -> str:
        """The masked text of the active card's scene, from the ``build_scene`` tool."""

        with self.guard("building the scene"):
            tool = self.workspace.plugins.tools()["build_scene"]
            value = self.call_tool(tool, {})
            if isinstance(value, dict):
                for key in ("text", "content", "scene"):
                    if isinstance(value.get(key), str):
                        return str(value[key])
            return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)

    def cards_changed(self) -> bool:
        """Whether the set of card files changed since the last look."""
        folder = os.path.join(self.workspace.root, CARDS_DIR)
        try:
            names = frozenset(
                entry.name for entry in os.scandir(folder) if entry.name.endswith(".md")
            )
        except OSError:
            names = frozenset()
        previous, self._cards = self._cards, names
        return previous is not None and previous != names

    def masked_input(self, text: str) -> str:
        """``text`` that a request sent (a resource URI), masked to be echoed back."""
        return self.masking(text).mask(text)

    def masking(self, inputs: Any = None) -> MaskSession:
        """A mask session for one reply, knowing the secrets the request itself sent."""
        from cuedeck.serving.calls import masking_for

        return masking_for(self.workspace, inputs)

    @contextlib.contextmanager
    def guard(self, what: str, inputs: Any = None) -> Iterator[None]:
        """Turn any failure inside into a masked :class:`CueFailure`.

        ``inputs`` are what the request sent: an error that echoes them, even normalised,
        is masked like the reply would be.
        """
        try:
            yield
        except CueFailure:
            raise
        except CueError as exc:
            raise self.failure(exc, inputs) from exc
        except Exception as exc:
            # The traceback goes to the server's log (stderr), masked like everything else
            # that leaves the process: exception messages often echo their input.
            trace = "".join(traceback.format_exception(exc))
            log.error("%s failed:\n%s", what, self.masking(inputs).mask(trace))
            internal = CueError(
                f"internal error in {what}: {type(exc).__name__}: {exc}",
                help="see the server's log (stderr), and report it",
            )
            raise self.failure(internal, inputs) from exc

    def failure(self, error: CueError, inputs: Any = None) -> CueFailure:
        """``error`` as it leaves the server: message and data masked."""
        session = self.masking(inputs)
        own = error.data.get("path")
        path = own if isinstance(own, str) else None
        return CueFailure(
            error.code,
            error.title,
            session.mask(error.message, path=path),
            session.mask_json(error.data, path),
        )
