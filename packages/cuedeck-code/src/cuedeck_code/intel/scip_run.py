"""Running the official SCIP indexers in the background, with progress.

Each indexer is a program the user installs (``npm install -g
@sourcegraph/scip-python``); nothing is downloaded here. :func:`start` runs every
registered indexer whose language the workspace has, one after the other, in a thread
of this process, each writing its index under ``.cuedeck/.cache/scip/``; the state
(running, done, the note of a missing indexer, the last lines of a failure) is kept in
``scip/status.json`` so ``scip_status``, ``cue index --scip`` and ``cue status`` read
it. Each index is loaded into the graph when its indexer ends (:mod:`.scip_load`).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import threading
import time
from typing import TYPE_CHECKING, Any

import attrs

from cuedeck.layout import CACHE_DIR
from cuedeck.system import spawn

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from cuedeck.hookspecs import ScipIndexer
    from cuedeck.workspace import Workspace

log = logging.getLogger("cuedeck")

FOLDER = f"{CACHE_DIR}/scip"
STATUS = f"{FOLDER}/status.json"
#: Longest an indexer may run, in seconds.
TIMEOUT = 3600.0
#: Lines of a failed indexer's output kept for its note.
TAIL = 12


@attrs.frozen
class OfficialIndexer:
    """An official SCIP indexer: its program, languages and how to install it."""

    name: str
    program: str
    languages: frozenset[str]
    install: str
    arguments: tuple[str, ...]
    label: str = "scip"

    def command(self, root: Path, output: Path) -> list[str] | None:
        """The command line, or None when the program is not installed. Only ``PATH``
        is searched: a program inside the workspace (``node_modules/.bin``) is the
        repository's content, which a client or a pushed commit may have written."""
        found = shutil.which(self.program)
        if found is None:
            return None
        values = {"output": str(output), "project": root.name or "project"}
        return [found, *(argument.format(**values) for argument in self.arguments)]


OFFICIAL = (
    OfficialIndexer(
        "scip-python",
        "scip-python",
        frozenset({"python"}),
        "npm install -g @sourcegraph/scip-python",
        (
            "index",
            ".",
            "--project-name={project}",
            "--project-version=0",
            "--output",
            "{output}",
            "--quiet",
        ),
    ),
    OfficialIndexer(
        "scip-typescript",
        "scip-typescript",
        frozenset({"typescript", "tsx", "javascript"}),
        "npm install -g @sourcegraph/scip-typescript",
        ("index", "--infer-tsconfig", "--no-progress-bar", "--output", "{output}"),
    ),
    OfficialIndexer(
        "scip-go",
        "scip-go",
        frozenset({"go"}),
        "go install github.com/sourcegraph/scip-go/cmd/scip-go@latest",
        ("--output", "{output}"),
    ),
    OfficialIndexer(
        "scip-java",
        "scip-java",
        frozenset({"java"}),
        "coursier install scip-java (see the scip-java documentation)",
        ("index", "--output", "{output}"),
    ),
)


def scip_indexers(workspace: Workspace) -> dict[str, ScipIndexer]:
    """The registered SCIP indexers, by name."""
    from cuedeck.hookspecs import ScipIndexer
    from cuedeck.plugins.host import get_code_indexers

    return {
        name: indexer
        for name, indexer in get_code_indexers(workspace.plugins).items()
        if isinstance(indexer, ScipIndexer) and indexer.label == "scip"
    }


def read_status(root: Path) -> dict[str, Any]:
    """The state of the last run (``{}`` when none ran)."""
    try:
        found = json.loads((root / STATUS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _write_status(root: Path, status: dict[str, Any]) -> None:
    from cuedeck.writes import atomic_write

    (root / FOLDER).mkdir(parents=True, exist_ok=True)
    atomic_write(root / STATUS, json.dumps(status, indent=1).encode(), display=STATUS)


_RUNS: dict[str, threading.Thread] = {}
_RUNS_LOCK = threading.Lock()


def start(
    workspace: Workspace,
    *,
    wait: bool = False,
    progress: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Run the indexers the workspace needs (in a background thread unless ``wait``);
    the status as it starts. A run already going on is not started twice."""
    root = workspace.root
    key = str(root)
    with _RUNS_LOCK:
        running = _RUNS.get(key)
        if running is not None and running.is_alive():
            if wait:
                running.join()
            return read_status(root)
        plan = _plan(workspace)
        status = {
            "state": "running",
            "started": _now(),
            "pid": os.getpid(),
            "indexers": plan,
        }
        _write_status(root, status)
        thread = threading.Thread(
            target=_run, args=(workspace, status, progress), name="cuedeck-scip", daemon=True
        )
        _RUNS[key] = thread
        thread.start()
    if wait:
        thread.join()
        return read_status(root)
    return status


def _plan(workspace: Workspace) -> list[dict[str, Any]]:
    """Each registered indexer and what it will do: ``waiting``, or ``skipped`` with a
    note (no file of its languages, or the program is missing)."""
    index = workspace.fresh_index()
    languages: dict[str, int] = {}
    for path in index.paths:
        language = index.language(path)
        if language:
            languages[language] = languages.get(language, 0) + 1
    plan = []
    for name, indexer in sorted(scip_indexers(workspace).items()):
        files = sum(languages.get(language, 0) for language in indexer.languages)
        entry: dict[str, Any] = {
            "name": name,
            "languages": sorted(indexer.languages),
            "files": files,
            "state": "waiting",
            "note": None,
        }
        output = workspace.root / FOLDER / f"{name}.scip"
        if not files:
            entry.update(state="skipped", note="no file of its languages is indexed")
        elif indexer.command(workspace.root, output) is None:
            entry.update(state="missing", note=f"{name} is not installed: {indexer.install}")
        plan.append(entry)
    return plan


def _run(
    workspace: Workspace,
    status: dict[str, Any],
    progress: Callable[[dict[str, Any]], None] | None,
) -> None:
    root = workspace.root
    indexers = scip_indexers(workspace)
    for entry in status["indexers"]:
        if entry["state"] != "waiting":
            continue
        indexer = indexers[entry["name"]]
        output = root / FOLDER / f"{entry['name']}.scip"
        partial = output.with_suffix(".partial")
        command = indexer.command(root, partial)
        entry.update(state="running", started=_now())
        _write_status(root, status)
        if progress is not None:
            progress(status)
        if command is None:
            entry.update(
                state="missing", note=f"{entry['name']} is not installed: {indexer.install}"
            )
            continue
        began = time.perf_counter()
        try:
            done = spawn.run_in(
                str(root),
                command,
                capture_output=True,
                text=True,
                timeout=TIMEOUT,
                check=False,
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            entry.update(state="failed", note=f"{entry['name']} could not run: {exc}")
            continue
        entry["seconds"] = round(time.perf_counter() - began, 1)
        if done.returncode != 0 or not partial.is_file():
            tail = (done.stderr or done.stdout or "").strip().splitlines()[-TAIL:]
            entry.update(
                state="failed", note=f"{entry['name']} exited with {done.returncode}", output=tail
            )
            partial.unlink(missing_ok=True)
            continue
        os.replace(partial, output)
        try:
            from cuedeck_code.intel.scip_load import load_index

            loaded = load_index(workspace, entry["name"], output)
        except Exception as exc:  # a malformed index is a note, never a crash
            log.warning("SCIP index %s not loaded: %s", output, exc)
            entry.update(state="failed", note=f"its index could not be read: {exc}")
            continue
        entry.update(state="done", documents=loaded["documents"], edges=loaded["edges"])
        _write_status(root, status)
        if progress is not None:
            progress(status)
    status["state"] = "done"
    status["ended"] = _now()
    _write_status(root, status)
    if progress is not None:
        progress(status)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
