"""Progress of long work, told to whoever called for it.

Long work (parsing files for the index, embedding sections) calls :func:`report` as it
goes; it costs nothing when nobody listens. The front end that started the work decides
who listens, for the calls made in its context: the MCP server relays reports as
``notifications/progress`` when the client sent a progress token. Tools stay plain
functions: they never see a reporter.

The listener is a :class:`contextvars.ContextVar`, so two calls served at once each
report to their own caller, and a thread started without the caller's context (a
background embedder) reports to nobody.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Iterator


class Reporter(Protocol):
    """Receives progress: ``done`` of ``total`` units (None when unknown) and a message."""

    def __call__(self, done: float, total: float | None, message: str) -> None: ...


_REPORTER: ContextVar[Reporter | None] = ContextVar("cuedeck_progress", default=None)


def report(done: float, total: float | None = None, message: str = "") -> None:
    """Tell the current listener that ``done`` of ``total`` units are done.

    ``message`` says what the units are (``"Embedding sections"``). Listeners must not
    raise: the work they watch matters more than its report.
    """
    reporter = _REPORTER.get()
    if reporter is not None:
        reporter(done, total, message)


@contextmanager
def reporting_to(reporter: Reporter | None) -> Iterator[None]:
    """Send the reports of the work done in this block (this context) to ``reporter``.

    ``None`` silences reports of the block.
    """
    token = _REPORTER.set(reporter)
    try:
        yield
    finally:
        _REPORTER.reset(token)
