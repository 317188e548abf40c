"""Where a scene is written, what it was built from, and whether that changed since."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING

import attrs

from cuedeck.errors import (
    CueError,
    StaleCache,
)
from cuedeck.layout import SCENE_RECORD

if TYPE_CHECKING:
    from pathlib import Path

    from cuedeck.models import Problem
    from cuedeck.scene.shapes import Scene
    from cuedeck.workspace import Workspace


def output_path(workspace: Workspace) -> Path:
    """Where ``cue scene`` writes: ``[scene] output`` inside the workspace."""
    return workspace.root / workspace.relative_path(
        workspace.config.scene.output, field="scene.output", write=True
    )


def write_scene(workspace: Workspace, scene: Scene) -> bool:
    """Write the scene to its output file atomically, and record what it was built from;
    False when the file already held it."""
    from cuedeck.writes import write_file

    path = output_path(workspace)
    data = scene.text.encode("utf-8")
    try:
        unchanged = path.read_bytes() == data
    except OSError:
        unchanged = False
    if not unchanged:
        write_file(workspace.root, path, data)
    record = {
        "version": 1,
        "output": workspace.config.scene.output,
        "sha256": hashlib.sha256(data).hexdigest(),
        "card": scene.manifest["card_path"],
        "inputs": scene.manifest["inputs"],
    }
    write_file(workspace.root, SCENE_RECORD, json.dumps(record, indent=1) + "\n")
    return not unchanged


@attrs.frozen
class Recorded:
    """What a written scene was built from: its card and its inputs' sha256."""

    card: str
    inputs: dict[str, str]


def read_recorded(workspace: Workspace) -> Recorded | None:
    """The record :func:`write_scene` kept for the output file as it is now, or None (no
    record, or the file was changed or written by something else since)."""
    try:
        data = output_path(workspace).read_bytes()
        record = json.loads((workspace.root / SCENE_RECORD).read_text(encoding="utf-8"))
        if record["sha256"] != hashlib.sha256(data).hexdigest():
            return None
        return Recorded(str(record["card"]), dict(record["inputs"]))
    except (OSError, ValueError, KeyError, TypeError, CueError):
        return None


def changed_inputs(workspace: Workspace, recorded: Recorded) -> list[str]:
    """Inputs whose bytes no longer have the recorded hash (or that are gone), sorted."""
    changed = []
    extras: dict[str, str] | None = None
    for path, short in sorted(recorded.inputs.items()):  # full hashes
        try:
            digest = hashlib.sha256((workspace.root / path).read_bytes()).hexdigest()
        except OSError:
            # Not a file: an item a scene source adds (a memory segment), hashed by it.
            if extras is None:
                extras = _source_hashes(workspace, recorded.card)
            if extras.get(path) != short:
                changed.append(path)
            continue
        if digest != short:
            changed.append(path)
    return changed


def _source_hashes(workspace: Workspace, card: str) -> dict[str, str]:
    """path -> sha256 of what the registered scene sources add for ``card`` now."""
    from cuedeck.plugins.host import get_scene_sources
    from cuedeck.scene.build import header_card_id

    return {
        extra.path: extra.sha256
        for source in get_scene_sources(workspace.plugins).values()
        for extra in source(workspace, header_card_id(card))
    }


def check_scene(workspace: Workspace, scene: Scene) -> None:
    """Raise StaleCache (1006) unless the output file holds exactly ``scene``'s text.

    The error names the inputs that changed since the file was written.
    """
    path = output_path(workspace)
    display = workspace.config.scene.output
    try:
        on_disk = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        raise StaleCache(
            f"{display} does not exist yet", path=display, changed=[], help="run `cue scene`"
        ) from None
    if on_disk == scene.text:
        return
    recorded = read_recorded(workspace)
    if recorded is None:
        raise StaleCache(
            f"{display} has no record of what it was built from (written by an older "
            "CueDeck or by hand, or the cache was cleaned)",
            path=display,
            changed=[],
            help="run `cue scene`",
        )
    changed = changed_inputs(workspace, recorded)
    if changed:
        more = f" (and {len(changed) - 1} more)" if len(changed) > 1 else ""
        what = "was removed" if not (workspace.root / changed[0]).exists() else "changed"
        message = f"{display} is stale: {changed[0]} {what} since it was built{more}"
    elif recorded.card != scene.manifest["card_path"]:
        message = (
            f"{display} is for {recorded.card}, the scene now is for {scene.manifest['card_path']}"
        )
    else:
        new = sorted(set(scene.manifest["inputs"]) - set(recorded.inputs))
        if new:
            changed = new
            message = f"{display} is stale: {new[0]} is a new input"
        else:
            message = f"{display} differs from a fresh build (another budget, format or pruner?)"
    raise StaleCache(message, path=display, changed=changed, help="run `cue scene` to rebuild it")


def scene_problems(workspace: Workspace) -> list[Problem]:
    """Doctor's view: a warning when the written scene's inputs changed since."""
    from cuedeck.models import Problem

    recorded = read_recorded(workspace)
    if recorded is None:
        return []
    changed = changed_inputs(workspace, recorded)
    if not changed:
        return []
    more = f" (and {len(changed) - 1} more)" if len(changed) > 1 else ""
    return [
        Problem(
            "warning",
            StaleCache.code,
            workspace.config.scene.output,
            None,
            f"the scene is stale: {changed[0]} changed since it was built{more}",
            "run `cue scene` to rebuild it",
        )
    ]


# --- the tool ----------------------------------------------------------------------------
