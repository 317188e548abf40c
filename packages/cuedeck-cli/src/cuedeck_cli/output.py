"""How the ``cue`` command talks: error reports, problem lists, JSON and progress.

Errors and diagnostics go to stderr, results to stdout. Rich colours them on a terminal
and prints plain text when piped. JSON output is ``json.dumps(..., indent=2)`` of
documented shapes (docs/cli-json.md). While a command runs, both streams pass through
:class:`MaskedStream`: the one exit point of the CLI, where every line is masked as it
is sent, whatever printed it.
"""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import TextIO

    from rich.console import Console

    from cuedeck.errors import CueError
    from cuedeck.masking.session import MaskSession
    from cuedeck.models import Problem


class MaskedStream:
    """A text stream that masks whole lines before they reach ``inner``.

    Lines are held until their newline (or a flush), so a secret is never split between
    two writes; the mask session comes from ``session()`` at the first line, which lets
    the workspace open first when the command opens one.
    """

    def __init__(self, inner: TextIO, session: Callable[[], MaskSession]) -> None:
        self.inner = inner
        self._session = session
        self._masking: MaskSession | None = None
        self._pending = ""

    def write(self, text: str) -> int:
        self._pending += text
        if "\n" in self._pending:
            complete, _, self._pending = self._pending.rpartition("\n")
            self.inner.write(self._mask(complete + "\n"))
        return len(text)

    def flush(self) -> None:
        if self._pending:
            self.inner.write(self._mask(self._pending))
            self._pending = ""
        self.inner.flush()

    def _mask(self, text: str) -> str:
        if self._masking is None:
            self._masking = self._session()
        return self._masking.mask(text)

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, encoding, buffer...
        return getattr(self.inner, name)


@contextmanager
def masked_output(session: Callable[[], MaskSession]) -> Iterator[None]:
    """Route ``sys.stdout`` and ``sys.stderr`` through :class:`MaskedStream` (one session)."""
    shared: list[MaskSession] = []

    def once() -> MaskSession:
        if not shared:
            shared.append(session())
        return shared[0]

    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = MaskedStream(out, once), MaskedStream(err, once)
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            if isinstance(stream, MaskedStream):
                stream.flush()
        sys.stdout, sys.stderr = out, err


def console(*, stderr: bool = False) -> Console:
    """A rich console on stdout or stderr, plain when not a terminal."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    return Console(file=stream, highlight=False, soft_wrap=True, emoji=False)


def emit_json(value: Any) -> None:
    """Print ``value`` as indented JSON on stdout."""
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False, default=str) + "\n")


def render_error(error: CueError) -> str:
    """The rich-markup text of an error: ``error[CODE] path:line: message`` + help."""
    from rich.markup import escape

    where = f" {escape(error.location)}:" if error.location else ""
    lines = [f"[bold red]error[{error.code}][/]{where} {escape(error.message)}"]
    suggestion = error.data.get("suggestion")
    if suggestion and suggestion != error.help:
        lines.append(f"  [cyan]help:[/] {escape(str(suggestion))}")
    if error.help:
        lines.append(f"  [cyan]help:[/] {escape(error.help)}")
    return "\n".join(lines)


def print_error(error: CueError) -> None:
    """Report ``error`` on stderr."""
    console(stderr=True).print(render_error(error))


def render_problem(problem: Problem) -> str:
    """``error[1001] path:line: message`` plus a ``help:`` line, as rich markup."""
    from rich.markup import escape

    colour = "red" if problem.severity == "error" else "yellow"
    where = ""
    if problem.path:
        where = f" {escape(problem.path)}" + (f":{problem.line}" if problem.line else "") + ":"
    text = f"[bold {colour}]{problem.severity}[{problem.code}][/]{where} {escape(problem.message)}"
    if problem.help:
        text += f"\n  [cyan]help:[/] {escape(problem.help)}"
    return text


class ProgressBars:
    """Long work reported as rich progress bars on a terminal's stderr, one per kind of
    work (the reports' message). Work that ends within ``delay`` seconds draws nothing.
    The bars are drawn from the reporting thread, at most every ``every`` seconds: rich's
    own refresh thread would keep :mod:`cuedeck.system.parallel` from forking workers."""

    def __init__(self, delay: float = 0.5, every: float = 0.1, out: Console | None = None) -> None:
        self.delay = delay
        self.every = every
        self._out = out
        self._progress: Any = None
        self._tasks: dict[str, Any] = {}
        self._started: dict[str, float] = {}
        self._drawn = 0.0

    def __call__(self, done: float, total: float | None, message: str) -> None:
        import time

        now = time.monotonic()
        started = self._started.setdefault(message, now)
        finished = total is not None and done >= total
        if finished:
            self._started.pop(message, None)
        task = self._tasks.get(message)
        if task is None:
            if finished or now - started < self.delay:
                return  # quick work, or not long enough yet
            bars = self._bars()
            task = self._tasks[message] = bars.add_task(message or "working", total=total)
        bars = self._bars()
        bars.update(task, completed=done, total=total)
        if finished or now - self._drawn >= self.every:
            bars.refresh()
            self._drawn = now
        if finished:
            bars.remove_task(task)
            del self._tasks[message]
            if not self._tasks:
                # Take the bars down now: what the command prints next (on stdout, which
                # the bars do not know of) must not land on a bar left on the screen.
                self.close()

    def _bars(self) -> Any:
        if self._progress is None:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

            self._progress = Progress(
                "[progress.description]{task.description}",
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                console=self._out or console(stderr=True),
                transient=True,
                auto_refresh=False,
            )
            self._progress.start()
        return self._progress

    def close(self) -> None:
        """Take the bars off the screen."""
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
            self._tasks.clear()


class ProgressLines:
    """Long work reported as log lines on stderr when it is not a terminal. Work that
    ends within ``delay`` seconds says nothing; slower work gets a line once it passes
    ``delay``, then at most one every ``every`` seconds, and one when it is done."""

    def __init__(self, delay: float = 1.0, every: float = 2.0) -> None:
        self.delay = delay
        self.every = every
        self._started: dict[str, float] = {}
        self._last: dict[str, float] = {}

    def __call__(self, done: float, total: float | None, message: str) -> None:
        import time

        now = time.monotonic()
        started = self._started.setdefault(message, now)
        finished = total is not None and done >= total
        last = self._last.get(message)
        if finished:
            self._started.pop(message, None)
            self._last.pop(message, None)
            if last is None and now - started < self.delay:
                return  # quick work: nothing to say
        elif now - started < self.delay or (last is not None and now - last < self.every):
            return
        else:
            self._last[message] = now
        share = f" ({done / total:.0%})" if total else ""
        amount = f"{done:g}/{total:g}" if total is not None else f"{done:g}"
        sys.stderr.write(f"{message or 'working'}: {amount}{share}\n")
        sys.stderr.flush()


@contextmanager
def progress_reporter() -> Iterator[ProgressBars | ProgressLines]:
    """The listener for this process's long work: bars on a terminal's stderr (taken
    down at the end), log lines when stderr is piped."""
    if not sys.stderr.isatty():
        yield ProgressLines()
        return
    bars = ProgressBars()
    try:
        yield bars
    finally:
        bars.close()
