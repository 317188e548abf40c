"""A node's own clones of the shared repositories (``[team] node_cache``).

What is derived stays per node: a shared repository's clone and its index are rebuilt on
this node from the repository's source and the registry's record, checked out at the
registered head (the commit ``add_golden_repo`` or the last ``refresh_golden_repo`` on any
node left). A node brings a repository up to date when it is first used after the head
moved (:func:`ensure`), and every repository when it starts (:class:`CatchUp`), so a
node that started late or was down catches up by itself. Each clone lives in a folder
named by the repository's generation, so a repository removed (or removed and made
again) on another node is never served from an old clone; :func:`prune` deletes those.

Without a node cache the shared repositories' clones live in the home (one machine, or
nodes mounting one home) and nothing here runs.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from typing import TYPE_CHECKING

from cuedeck_team import gitops
from cuedeck_team.disk import remove_tree

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from cuedeck_team.home import Team
    from cuedeck_team.registry import Shared

log = logging.getLogger("cuedeck")

#: How long a request waits for another one bringing the same repository up to date.
CATCH_UP_WAIT = 1800.0


def head_file(folder: Path) -> Path:
    """Where this node notes the head its clone at ``folder`` is checked out and indexed
    at (beside the clone, so no tool sees it)."""
    return folder.parent / f"{folder.name}.head"


def served_head(folder: Path) -> str | None:
    """The head the clone at ``folder`` was brought to and indexed at, or None."""
    try:
        return head_file(folder).read_text(encoding="utf-8").strip() or None
    except FileNotFoundError:
        return None


def note_head(folder: Path, head: str) -> None:
    """Note that the clone at ``folder`` is at ``head``, indexed (atomically)."""
    target = head_file(folder)
    temporary = target.with_suffix(".tmp")
    temporary.write_text(head + "\n", encoding="utf-8")
    os.replace(temporary, target)


def current(record: Shared, folder: Path) -> bool:
    """Whether this node's clone at ``folder`` serves ``record``'s registered head (a record
    made before heads were registered: whatever the clone holds, until its next refresh)."""
    served = served_head(folder)
    return served is not None and (served == record.head or not record.head)


def ensure(team: Team, record: Shared) -> Path:
    """The folder of this node's clone of ``record`` at its registered head, cloned or
    fetched, checked out and indexed first when it is not there yet."""
    folder = team.shared_path(record)
    if team.node_cache is None or current(record, folder):
        return folder
    with node_lock(team, record):
        return ensure_locked(team, record)


@contextlib.contextmanager
def node_lock(team: Team, record: Shared) -> Iterator[None]:
    """Hold this node's lock of its clone of ``record`` (nothing without a node cache):
    one request at a time brings it up to date or refreshes it."""
    if team.node_cache is None:
        yield
        return
    from cuedeck.writes import locked

    lock = team.node_cache / "locks" / f"{record.generation}.lock"
    with locked(lock, timeout=CATCH_UP_WAIT, display=record.alias):
        yield


def ensure_locked(team: Team, record: Shared) -> Path:
    """:func:`ensure` under :func:`node_lock`: the record read again first (another node
    may have moved the head while this one waited)."""
    fresh = team.registry.find_shared(record.alias)
    if fresh is not None and fresh.generation == record.generation:
        record = fresh
    folder = team.shared_path(record)
    if team.node_cache is not None and not current(record, folder):
        bring(team, record, folder)
    return folder


def bring(team: Team, record: Shared, folder: Path) -> None:
    """Clone (or fetch) ``record``'s source into ``folder``, check out its registered head
    (its branch's head when none is registered yet) and index it; progress is logged."""
    from cuedeck_team.home import index_workspace, prepare_workspace

    started = time.perf_counter()
    url = gitops.check_source(record.source, team.root)
    if not (folder / ".git").is_dir():
        log.info("catching up %s: cloning its source", record.alias)
        remove_tree(folder)
        head_file(folder).unlink(missing_ok=True)
        gitops.clone(url, folder, branch=record.branch or None)
    else:
        log.info("catching up %s: fetching its source", record.alias)
        gitops.git(folder, "fetch", "--quiet", "--prune", "origin", timeout=gitops.NETWORK_TIMEOUT)
    target = record.head or f"refs/remotes/origin/{record.branch}"
    gitops.git(folder, "reset", "--quiet", "--hard", target)
    prepare_workspace(folder)
    with team.open(folder) as workspace:
        indexed = index_workspace(workspace, embed=False)
    note_head(folder, gitops.head(folder))
    log.info(
        "caught up %s at %s: %s files, %s parsed, in %.1f s",
        record.alias, (record.head or gitops.head(folder))[:12], indexed["files"],
        indexed["parsed"], time.perf_counter() - started,
    )  # fmt: skip


def prune(team: Team) -> list[str]:
    """Delete this node's clones of repositories the registry no longer lists (removed,
    or removed and made again elsewhere); the generations deleted."""
    cache = team.node_cache
    if cache is None or not (cache / "shared").is_dir():
        return []
    live = {record.generation for record in team.registry.shared(ready_only=False)}
    gone = []
    for entry in sorted((cache / "shared").iterdir()):
        if entry.is_dir() and entry.name not in live:
            team.removing(entry.name)
            remove_tree(entry)
            (cache / "locks" / f"{entry.name}.lock").unlink(missing_ok=True)
            gone.append(entry.name)
    return gone


class CatchUp:
    """A node's catch-up when it starts: every shared repository brought to its registered
    head, in a thread of its own; :meth:`problems` says what is left (readiness), and
    :attr:`failed` which could not be brought (logged; tried again when used)."""

    def __init__(self, team: Team) -> None:
        self.team = team
        self.total = 0
        self.done = 0
        self.failed: list[str] = []
        self.finished = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cuedeck-team-catch-up", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            prune(self.team)
            records = self.team.registry.shared()
            self.total = len(records)
            for record in records:
                try:
                    ensure(self.team, record)
                except Exception as exc:  # the others still come up; readiness says which
                    log.error("could not catch up %s: %s", record.alias, exc)
                    self.failed.append(record.alias)
                self.done += 1
        except Exception as exc:  # the store unreachable: requests bring what they use
            log.error("could not catch up with the registry: %s", exc)
        finally:
            self.finished.set()

    def problems(self) -> list[str]:
        """What this node has not caught up with yet (named by alias, never by path)."""
        if not self.finished.is_set():
            return [f"catching up with the shared repositories ({self.done} of {self.total})"]
        # One source unreachable keeps no other repository from being served: logged, and
        # tried again when a request uses it.
        return []
