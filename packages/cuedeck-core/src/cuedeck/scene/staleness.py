"""Where a scene is written, what it was built from, and whether that changed since."""

from __future__ import annotations

import hashlib
import json
import re
from typing import TYPE_CHECKING

import attrs

from cuedeck.errors import (
    CueError,
    StaleCache,
)

if TYPE_CHECKING:
    from pathlib import Path

    from cuedeck.models import Problem
    from cuedeck.scene.model import Scene
    from cuedeck.workspace import Workspace
else:
    # The tool's annotations name pydantic; ``cue --help`` imports this module without
    # ever evaluating them, so pydantic loads on first use.
    pass


def output_path(workspace: Workspace) -> Path:
    """Where ``cue scene`` writes: ``[scene] output`` inside the workspace."""
    return workspace.root / workspace.relative_path(
        workspace.config.scene.output, field="scene.output"
    )


def write_scene(workspace: Workspace, scene: Scene) -> bool:
    """Write the scene to its output file atomically; False when it was already there."""
    from cuedeck.files import atomic_write

    path = output_path(workspace)
    data = scene.text.encode("utf-8")
    try:
        if path.read_bytes() == data:
            return False
    except OSError:
        pass
    atomic_write(path, data)
    return True


@attrs.frozen
class Recorded:
    """What a written scene says about itself: its card and its inputs' short hashes."""

    card: str | None
    inputs: dict[str, str]


_MD_CARD = re.compile(r"^> card `([^`]+)` ", re.MULTILINE)
_MD_ROW = re.compile(r"^\| \d+ \| [\d/]+ \| \w+ \| (.+?) \| ([0-9a-f]+) \| ", re.MULTILINE)
_MD_CONFIG = re.compile(r"^Config: `([^`]+)` ([0-9a-f]+)$", re.MULTILINE)


def read_recorded(text: str) -> Recorded | None:
    """The card and input hashes a scene in any format records, or None if it is not one."""
    stripped = text.lstrip()
    inputs: dict[str, str] = {}
    card: str | None = None
    if stripped.startswith("{"):
        try:
            value = json.loads(text)
            card = value["scene"]["path"]
            for candidate in value["manifest"]["candidates"]:
                inputs[candidate["path"]] = candidate["sha256"]
            if config := value["manifest"].get("config"):
                inputs[config["path"]] = config["sha256"]
        except (ValueError, KeyError, TypeError):
            return None
    elif stripped.startswith("<scene"):
        import xml.etree.ElementTree as ElementTree

        try:
            root = ElementTree.fromstring(text)
        except ElementTree.ParseError:
            return None
        card = root.get("path")
        for element in root.iter():
            if element.tag in ("candidate", "config"):
                path, digest = element.get("path"), element.get("sha256")
                if path and digest:
                    inputs[path] = digest
    else:
        if found := _MD_CARD.search(text):
            card = found.group(1)
        for row in _MD_ROW.finditer(text):
            key = row.group(1).replace("\\|", "|")
            inputs[key.split("#", 1)[0]] = row.group(2)
        if config_row := _MD_CONFIG.search(text):
            inputs[config_row.group(1)] = config_row.group(2)
    if card is None or not inputs:
        return None
    return Recorded(card, inputs)


def changed_inputs(workspace: Workspace, recorded: Recorded) -> list[str]:
    """Inputs whose bytes no longer have the recorded hash (or that are gone), sorted."""
    changed = []
    for path, short in sorted(recorded.inputs.items()):
        try:
            digest = hashlib.sha256((workspace.root / path).read_bytes()).hexdigest()
        except OSError:
            changed.append(path)
            continue
        if not digest.startswith(short):
            changed.append(path)
    return changed


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
    recorded = read_recorded(on_disk)
    if recorded is None:
        raise StaleCache(
            f"{display} is not a scene CueDeck wrote",
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

    try:
        path = output_path(workspace)
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, CueError):
        return []
    recorded = read_recorded(text)
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
