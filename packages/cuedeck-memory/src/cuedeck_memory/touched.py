"""The files a task touched: their hashes in a task snapshot, and what changed since.

``context_create_task_snapshot`` records, beside the task's segments, the sha256 of each
file the task touched (the ones it names; by default the indexed files that differ from
git's ``HEAD`` and the files the task's card cites) and the commit ``HEAD`` was then.
A snapshot id is then a baseline a scene can be asked about (``cue scene --since
snap-...``, registered as ``snapshot``): the files whose hash changed since, with the
text they had then when git still holds it (the commit's blob, when its hash is the one
recorded), else known only to have changed.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from cuedeck.errors import CueError, FileNotFound, InvalidInput
from cuedeck.models import Baseline, BaselineFile

if TYPE_CHECKING:
    from collections.abc import Sequence

    from cuedeck.workspace import Workspace

#: Files a snapshot records at most.
MAX_FILES = 500


def _git(workspace: Workspace, since: str) -> Baseline | None:
    """The baseline the commit ``since`` names (cuedeck-git answers ``resolve_baseline``
    for commits), or None when no installed plugin does."""
    try:
        found: Baseline | None = workspace.plugins.first(
            "resolve_baseline", workspace=workspace, since=since
        )
        return found
    except CueError:
        return None  # not a repository, git missing: no commit to record


def touched_files(
    workspace: Workspace, task: str | None, given: Sequence[str] | None = None
) -> tuple[dict[str, str], str | None]:
    """``({path: sha256}, commit)``: the files ``given`` (workspace-relative, indexed),
    else the indexed files that differ from ``HEAD`` and those the task's card cites;
    and the commit ``HEAD`` is (None outside git)."""
    documents = workspace.documents
    head = _git(workspace, "HEAD")
    wanted: list[str] = []
    if given is not None:
        for path in given:
            rel = workspace.relative_path(path, field="files")
            if rel not in documents:
                raise FileNotFound(f"{rel} is not in the workspace index", path=rel, field="files")
            wanted.append(rel)
    else:
        if head is not None:
            wanted.extend(p for p in head.files if p in documents)
        if task is not None:
            wanted.extend(_cited(workspace, task))
    chosen = list(dict.fromkeys(wanted))
    if len(chosen) > MAX_FILES:
        raise InvalidInput(
            f"{len(chosen)} files to record; a snapshot records {MAX_FILES} at most",
            field="files",
            help="name the files the task touched with files",
        )
    hashes = {}
    for path in sorted(chosen):
        try:
            hashes[path] = hashlib.sha256(workspace.snapshot(path).data).hexdigest()
        except CueError:
            continue
    return hashes, head.commit if head is not None else None


def _cited(workspace: Workspace, task: str) -> list[str]:
    """The indexed files the card ``task`` includes (its references, at any depth)."""
    from cuedeck.layout import CARD_ID, card_path

    if not CARD_ID.match(task):
        return []
    graph = workspace.graph
    start = card_path(task)
    if start not in workspace.documents:
        return []
    return [graph.split_key(label)[0] for label in graph.depths(start) if label != start]


def snapshot_baseline(workspace: Workspace, since: str) -> Baseline | None:
    """The ``snapshot`` baseline: a task snapshot's files as they were (see the module)."""
    if not since.startswith("snap-"):
        return None
    store = workspace.service("context")
    record = store.snapshot(since)
    if record is None:
        return None
    return record_baseline(workspace, record)


def record_baseline(workspace: Workspace, record: dict[str, Any]) -> Baseline:
    """The files of a snapshot ``record`` that changed since, as a baseline."""
    files: dict[str, str] = {
        str(p): str(h) for p, h in (record.get("files") or {}).items() if isinstance(h, str)
    }
    commit = record.get("commit")
    then = _git(workspace, commit) if isinstance(commit, str) and commit else None
    documents = workspace.documents
    changed: dict[str, BaselineFile] = {}
    for path, digest in files.items():
        now = None
        if path in documents:
            try:
                now = hashlib.sha256(workspace.snapshot(path).data).hexdigest()
            except CueError:
                now = None
        if now == digest:
            continue
        old = then.files.get(path) if then is not None else None
        if old is not None and old.text is not None and _sha(old.text) == digest:
            changed[path] = old  # committed then: git still has the text
        else:
            # Uncommitted when the snapshot was made: what it held is not known.
            changed[path] = BaselineFile(None, known=False)
    name = record.get("name") or record.get("snapshot_id")
    return Baseline(
        label=f"snapshot {record.get('snapshot_id')} ({name})",
        files=changed,
        commit=commit if isinstance(commit, str) else None,
    )


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def delta_since(
    workspace: Workspace, record: dict[str, Any], max_tokens: int
) -> tuple[list[dict[str, Any]], bool]:
    """The files changed since snapshot ``record`` as hunks (``path``, ``status``,
    ``summary``, ``hunks``), masked, within ``max_tokens``; and whether some were left
    out for the budget."""
    from cuedeck.refs.delta import file_deltas

    session = workspace.mask_session()
    found: list[dict[str, Any]] = []
    used = 0
    for delta in file_deltas(workspace, record_baseline(workspace, record)):
        hunks = session.mask(delta.text, path=delta.path)
        tokens = workspace.count_tokens(hunks)
        if used + tokens > max_tokens:
            return found, True
        used += tokens
        found.append(
            {"path": delta.path, "status": delta.status, "summary": delta.summary(), "hunks": hunks}
        )
    return found, False
