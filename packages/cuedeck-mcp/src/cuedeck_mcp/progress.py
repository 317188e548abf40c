"""Core progress reports of a tool call, relayed as MCP ``notifications/progress``.

Only when the client asked for them: a request whose ``_meta`` holds a
``progressToken``. Tools run on the runtime's worker thread; each report is handed to
the event loop, and the call's reply waits until every notification of the call is
sent, so a client never sees progress after the result.
"""

from __future__ import annotations

import asyncio
import logging
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from cuedeck.progress import reporting_to

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from concurrent.futures import Future

    from fastmcp import Context

log = logging.getLogger("cuedeck")

#: A report is sent when it moved at least this share of its total since the last one
#: sent (the first and the last are always sent): 7,000 files parsed are 100 messages.
STEP = 0.01


def _caller_context() -> Context | None:
    """The FastMCP context of the call being served, if its client sent a progress token."""
    from fastmcp.server.dependencies import get_context

    try:
        context = get_context()
    except RuntimeError:  # not inside an MCP request (a direct Python call)
        return None
    request = context.request_context
    if request is None or not request.meta or request.meta.get("progressToken") is None:
        return None
    return context


class _Relay:
    """A core progress reporter that schedules notifications on the event loop."""

    def __init__(self, context: Context, loop: asyncio.AbstractEventLoop) -> None:
        self._context = context
        self._loop = loop
        self._lock = asyncio.Lock()  # FIFO: notifications leave in the order reported
        self._pending: list[Future[None]] = []
        self._sent: dict[str, float] = {}

    def __call__(self, done: float, total: float | None, message: str) -> None:
        last = self._sent.get(message)
        finished = total is not None and done >= total
        # A smaller ``done`` than the last one sent is a new run of the same work: sent.
        if last is not None and not finished and total and last <= done < last + STEP * total:
            return
        self._sent[message] = done
        coroutine = self._send(done, total, message)
        self._pending.append(asyncio.run_coroutine_threadsafe(coroutine, self._loop))

    async def _send(self, done: float, total: float | None, message: str) -> None:
        async with self._lock:
            try:
                await self._context.report_progress(done, total, message or None)
            except Exception as exc:  # a client gone away must not fail the tool call
                log.debug("progress notification not sent: %s", exc)

    async def drain(self) -> None:
        """Wait until every notification scheduled so far has been sent."""
        while self._pending:
            pending, self._pending = self._pending, []
            await asyncio.gather(*(asyncio.wrap_future(f) for f in pending))


@asynccontextmanager
async def relayed_progress() -> AsyncIterator[None]:
    """Relay the core progress reports of the work awaited in this block to the client.

    Without a progress token the work reports to nobody.
    """
    context = _caller_context()
    if context is None:
        # Not to a listener the host process set around the server (a program embedding
        # it): a call's progress is its client's or nobody's.
        with reporting_to(None):
            yield
        return
    relay = _Relay(context, asyncio.get_running_loop())
    try:
        with reporting_to(relay):
            yield
    finally:
        await relay.drain()
