"""Where resident servers register: ``mcp-resident/`` of the user cache, one entry (and
log) per server, with its clients and since when it is idle; what ``cue mcp stop`` and
``cue status`` read, and how a new server asks the others of its workspace to retire.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
from typing import TYPE_CHECKING, Any

from cuedeck.layout import user_cache_dir

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from cuedeck.models import BackgroundProcess
    from cuedeck.workspace import Workspace


#: The signal that asks a resident server to retire: no new client, exit after the last.
RETIRE: signal.Signals = getattr(signal, "SIGUSR1", signal.SIGTERM)  # residents: Linux only


def registry() -> str:
    """The folder where resident servers register (and log)."""
    return os.path.join(user_cache_dir(), "mcp-resident")


class Entry:
    """This server's entry in :func:`registry`: who it is, its clients, whether it retires."""

    def __init__(self, name: str, root: Path, seconds: int) -> None:
        self.path = os.path.join(registry(), f"{name}.json")
        now = time.time()
        self.data: dict[str, Any] = {
            "pid": os.getpid(), "root": str(root), "server": name, "argv": sys.argv,
            "started": now, "seconds": seconds, "sessions": 0, "idle_since": now,
            "retiring": False, "retires": True,  # it takes RETIRE (older servers did not)
        }  # fmt: skip
        self.write()

    def update(self, **changes: Any) -> None:
        """Change fields and write the entry again (atomically: readers see one or the other)."""
        self.data.update(changes)
        self.write()

    def write(self) -> None:
        temporary = f"{self.path}.{os.getpid()}.tmp"
        with contextlib.suppress(OSError):
            with open(temporary, "w", encoding="utf-8") as out:
                json.dump(self.data, out)
            os.replace(temporary, self.path)


@contextlib.contextmanager
def registered(name: str, root: Path, seconds: int) -> Iterator[Entry]:
    """This server's entry in :func:`registry` while it serves."""
    entry = Entry(name, root, seconds)
    try:
        yield entry
    finally:
        with contextlib.suppress(OSError):
            os.remove(entry.path)
        _drop_empty_log(name)


def _entries(root: Path) -> list[tuple[str, dict[str, Any]]]:
    """``(file name, entry)`` of every server registered for ``root``."""
    folder = registry()
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".json"))
    except OSError:
        return []
    found = []
    for file_name in names:
        try:
            with open(os.path.join(folder, file_name), encoding="utf-8") as entry_file:
                entry = json.load(entry_file)
            if isinstance(entry, dict) and str(entry["root"]) == str(root):
                int(entry["pid"])
                found.append((file_name, entry))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return found


def retire_others(name: str, root: Path) -> None:
    """Ask the other resident servers of ``root`` to retire (one per workspace)."""
    for _, entry in _entries(root):
        if entry.get("server") == name or not entry.get("retires"):
            continue
        ending = _alive(int(entry["pid"]))
        if ending is not None:
            os.close(ending)
            with contextlib.suppress(OSError):
                os.kill(int(entry["pid"]), RETIRE)


def _drop_empty_log(name: str) -> None:
    """Remove server ``name``'s log when it holds nothing."""
    log = os.path.join(registry(), f"{name}.log")
    with contextlib.suppress(OSError):
        if os.path.getsize(log) == 0:
            os.remove(log)


def _alive(pid: int) -> int | None:
    """A descriptor that becomes readable when process ``pid`` ends, or None when it has
    (or is not a resident server of ours: a pid can be reused)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            if b"cuedeck_cli" not in cmdline.read():
                return None
        return os.pidfd_open(pid)
    except OSError:
        return None


def stop_servers(root: Path, *, timeout: float = 10.0) -> list[dict[str, Any]]:
    """Stop the resident servers of ``root`` and wait for them to end; what was stopped
    (``server``: its name, ``pid``)."""
    from cuedeck.system.readable import readable

    stopped: list[dict[str, Any]] = []
    for file_name, entry in _entries(root):
        path = os.path.join(registry(), file_name)
        pid = int(entry["pid"])
        ending = _alive(pid)
        if ending is not None:
            try:
                os.kill(pid, signal.SIGTERM)
                readable([ending], timeout)  # the process's end, not a sleep
            finally:
                os.close(ending)
            stopped.append({"server": file_name.removesuffix(".json"), "pid": pid})
        with contextlib.suppress(OSError):
            os.remove(path)
        _drop_empty_log(file_name.removesuffix(".json"))
    return stopped


def listed(workspace: Workspace) -> list[BackgroundProcess]:
    """The workspace's resident servers that run (for ``cue status``)."""
    from cuedeck.models import BackgroundProcess
    from cuedeck.text import duration

    found = []
    for file_name, entry in _entries(workspace.root):
        pid = int(entry["pid"])
        ending = _alive(pid)
        if ending is None:
            continue  # gone without a word (killed): its entry is stale
        os.close(ending)
        clients = int(entry.get("sessions") or 0)
        limit = duration(float(entry.get("seconds") or 0))
        idle_since = entry.get("idle_since")
        if entry.get("retiring"):
            ends = f"when its {clients} client(s) leave (a newer server took its place)"
        elif clients:
            ends = f"{limit} after its last client leaves ({clients} connected now)"
        elif isinstance(idle_since, int | float):
            ends = f"after {limit} without a client (idle for {duration(time.time() - idle_since)})"
        else:
            ends = f"after {limit} without a client"
        log = os.path.join(registry(), file_name.removesuffix(".json") + ".log")
        detail = "keeps `cue mcp` warm for stdio clients (`cue mcp stop` ends it)"
        found.append(
            BackgroundProcess("resident MCP server", pid, entry.get("started"), ends, detail, log)
        )
    return found
