"""The process that compiles and runs a client's regular expression, under bounds.

A pattern is a client's: compiling it can take gigabytes and matching it forever. So it
never runs in the server: :class:`Worker` starts ``python -P -m
cuedeck.system.regex_worker`` (through :mod:`cuedeck.system.spawn`), which limits its own
address space to :data:`MEMORY_BYTES` before it compiles, and is killed at the caller's
deadline whatever it is doing. A worker whose search ended well is kept for the next
one (:data:`KEPT`), its compiled pattern purged: starting one and importing ``regex``
costs far more than a search of a small workspace. Texts go to it one at a time (already
masked by the caller: secrets are never searched) with how many matches to skip and how
many to take; it answers with the spans taken, so a pattern that matches everywhere
(``(?:)`` on a 4 MB file) never lists more than a page. Callers check the pattern's size
first (:func:`cuedeck.system.bounds.check_pattern`).

The protocol, one JSON line each way per message: the pattern first (answered ``ready``
or an error), then per text ``{"skip", "take", "seconds", "size"}`` followed by ``size``
bytes of UTF-8, answered ``{"skipped", "spans", "more"}`` or ``{"error"}``, and
``{"end": true}`` when the search is over (not answered)."""

from __future__ import annotations

import atexit
import json
import os
import sys
import threading
import time
from typing import IO, TYPE_CHECKING, Any, NamedTuple

from cuedeck.system.readable import readable

if TYPE_CHECKING:
    import subprocess

#: The worker's address-space bound: the interpreter and ``regex`` take about 25 MB, a
#: 4 MB text four times that as a string; a pattern the size check lets through compiles
#: to at most about 45 MB.
MEMORY_BYTES = 512 * 1024 * 1024


class Found(NamedTuple):
    """What the worker found in one text: matches skipped, spans taken, whether more."""

    skipped: int
    spans: list[tuple[int, int]]
    more: bool


class WorkerFailed(Exception):
    """The worker refused the pattern or stopped: ``kind`` is ``invalid`` (with the
    engine's message), ``out_of_memory``, ``timeout`` or ``crashed``."""

    def __init__(self, kind: str, message: str = "") -> None:
        super().__init__(message or kind)
        self.kind = kind
        self.message = message


#: Workers kept between searches (each has paid for its start and ``import regex``);
#: a search takes one, and gives it back when the search ended as it should.
KEPT = 2
_IDLE: list[subprocess.Popen[bytes]] = []
_IDLE_LOCK = threading.Lock()


def _stop_idle() -> None:
    """At exit, end the kept workers: each leaves when its input closes."""
    import subprocess

    with _IDLE_LOCK:
        kept, _IDLE[:] = list(_IDLE), []
    for process in kept:
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                stream.close()
        try:
            process.wait(timeout=1)
        except subprocess.TimeoutExpired:  # it must not outlive us, whatever it is doing
            process.kill()
            process.wait()


atexit.register(_stop_idle)


class Worker:
    """One search's worker process: taken (or started) and given the pattern by
    :meth:`start`, asked text by text with :meth:`search`, given back or killed by
    :meth:`close`; killed at the deadline whatever it is doing."""

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.process: subprocess.Popen[bytes] | None = None
        #: Whether the process may serve another search (its last answer was not a
        #: failure that leaves it in doubt: a timeout, its memory bound, a crash).
        self.reusable = False

    def start(self, pattern: str, *, ignore_case: bool) -> None:
        """Have a worker compile ``pattern`` (multi-line: ``^`` and ``$`` at every line);
        WorkerFailed if it cannot."""
        import subprocess

        from cuedeck.system.spawn import start_python

        with _IDLE_LOCK:
            self.process = _IDLE.pop() if _IDLE else None
        if self.process is None:
            self.process = start_python(
                "cuedeck.system.regex_worker",
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        self._send({"pattern": pattern, "ignore_case": ignore_case, "limit": MEMORY_BYTES})
        self._answer()

    def search(self, text: str, *, skip: int, take: int) -> Found:
        """Matches of the pattern in ``text``: the first ``skip`` counted, then at most
        ``take`` spans (character offsets); ``more`` when others follow."""
        data = text.encode("utf-8", "surrogatepass")
        seconds = max(self.deadline - time.monotonic(), 0.001)
        self._send({"skip": skip, "take": take, "seconds": seconds, "size": len(data)}, data)
        answer = self._answer()
        spans = [(int(start), int(end)) for start, end in answer["spans"]]
        return Found(int(answer["skipped"]), spans, bool(answer["more"]))

    def _send(self, header: dict[str, Any], data: bytes = b"") -> None:
        assert self.process is not None
        assert self.process.stdin is not None
        self.reusable = False
        try:
            self.process.stdin.write(json.dumps(header).encode() + b"\n" + data)
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._ended() from None

    def _answer(self) -> dict[str, Any]:
        assert self.process is not None
        assert self.process.stdout is not None
        remaining = self.deadline - time.monotonic()
        ready = remaining > 0 and readable([self.process.stdout], remaining)
        if not ready:
            raise WorkerFailed("timeout")
        line = self.process.stdout.readline()
        if not line:
            raise self._ended()
        answer: dict[str, Any] = json.loads(line)
        error = answer.get("error")
        self.reusable = error in (None, "invalid")  # an invalid pattern: it waits for one
        if error is not None:
            raise WorkerFailed(str(error), str(answer.get("message", "")))
        return answer

    def _ended(self) -> WorkerFailed:
        assert self.process is not None
        code = self.process.wait()
        # Killed by the kernel or by its own bound (an allocation it could not survive).
        return WorkerFailed("out_of_memory" if code < 0 else "crashed", f"exit status {code}")

    def close(self) -> None:
        """Give the worker back for the next search, or stop it at once (it may be deep
        in a match)."""
        process, self.process = self.process, None
        if process is None:
            return
        if self.reusable and process.poll() is None:
            try:
                assert process.stdin is not None
                process.stdin.write(b'{"end": true}\n')  # it forgets the pattern
                process.stdin.flush()
                with _IDLE_LOCK:
                    if len(_IDLE) < KEPT:
                        _IDLE.append(process)
                        return
            except OSError:
                pass
        if process.poll() is None:
            process.kill()
        process.wait()
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                stream.close()

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# -- the worker's side -----------------------------------------------------------------------


def _reply(out: IO[bytes], answer: dict[str, Any]) -> None:
    out.write(json.dumps(answer).encode() + b"\n")
    out.flush()


def serve(source: IO[bytes], out: IO[bytes]) -> None:
    """Answer searches from ``source`` until it ends: a pattern, its texts, ``end``."""
    bounded = False
    while header_line := source.readline():
        header = json.loads(header_line)
        if "pattern" not in header:
            continue  # the end of a search that never compiled
        if not bounded:
            bounded = True
            try:
                import resource

                limit = int(header["limit"])
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            except (ImportError, ValueError, OSError):  # no such limit: the deadline remains
                pass
        if not _search(header, source, out):
            return


def _search(header: dict[str, Any], source: IO[bytes], out: IO[bytes]) -> bool:
    """One search: compile, answer text after text until ``end``; whether this process
    may serve another (not after a timeout or running out of memory)."""
    import regex

    try:
        flags = regex.MULTILINE | regex.VERSION0
        flags |= regex.IGNORECASE if header["ignore_case"] else 0
        compiled = regex.compile(header["pattern"], flags)
    except MemoryError:
        _reply(out, {"error": "out_of_memory"})
        return False
    except (regex.error, ValueError, OverflowError, RecursionError) as exc:
        _reply(out, {"error": "invalid", "message": str(exc)})
        return True
    _reply(out, {"ready": True})
    try:
        while line := source.readline():
            ask = json.loads(line)
            if ask.get("end"):
                return True
            text = source.read(int(ask["size"])).decode("utf-8", "surrogatepass")
            skip, take = int(ask["skip"]), int(ask["take"])
            skipped, more = 0, False
            spans: list[tuple[int, int]] = []
            try:
                for hit in compiled.finditer(text, timeout=float(ask["seconds"])):
                    if skipped < skip:
                        skipped += 1
                    elif len(spans) < take:
                        spans.append((hit.start(), hit.end()))
                    else:
                        more = True
                        break
            except TimeoutError:
                _reply(out, {"error": "timeout"})
                return False
            except MemoryError:
                _reply(out, {"error": "out_of_memory"})
                return False
            _reply(out, {"skipped": skipped, "spans": spans, "more": more})
        return False
    finally:
        del compiled
        regex.purge()  # no compiled pattern outlives its search


if __name__ == "__main__":
    serve(sys.stdin.buffer, sys.stdout.buffer)
    os._exit(0)  # nothing to tidy: leave without running finalizers on a large heap
