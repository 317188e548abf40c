"""Scenes: the active card and everything it references, packed into a token budget.

:func:`build_scene` resolves the active card, walks the reference graph from it (a
reference with an anchor pulls in that section only), fails on a reference cycle
(1002), orders the candidates (the card 100, direct references 50, indirect ones 25,
global docs 10; references before what they refer to within a level), masks them,
lets the configured pruner fit them to the budget and renders the scene as markdown,
XML or JSON with a header and a manifest. The rendered text never exceeds the budget
by the workspace's token counter. The CLI (``cue scene``, ``cue watch``), the
``build_scene`` tool and the MCP resource ``cuedeck://scene`` all call it.

One job per module: :mod:`.selection` (which card), :mod:`.candidates` (what and in
which order), :mod:`.fit` (the budget), :mod:`.render` (the formats), :mod:`.build`
(putting them together), :mod:`.staleness` (the written scene and its inputs) and
:mod:`.pruners` (the pruners that fit a scene). The ``build_scene`` tool is served with
core's other tools (:mod:`cuedeck.serving.scene_tool`).
"""

from __future__ import annotations

from cuedeck.scene.build import build_scene
from cuedeck.scene.selection import find_card
from cuedeck.scene.shapes import (
    FORMATS,
    HASH_CHARS,
    MANIFEST_VERSION,
    PRIORITIES,
    Candidate,
    Format,
    Scene,
    SceneManifest,
    SceneReply,
)
from cuedeck.scene.staleness import (
    Recorded,
    changed_inputs,
    check_scene,
    output_path,
    read_recorded,
    scene_problems,
    write_scene,
)

__all__ = [
    "FORMATS",
    "HASH_CHARS",
    "MANIFEST_VERSION",
    "PRIORITIES",
    "Candidate",
    "Format",
    "Recorded",
    "Scene",
    "SceneManifest",
    "SceneReply",
    "build_scene",
    "changed_inputs",
    "check_scene",
    "find_card",
    "output_path",
    "read_recorded",
    "scene_problems",
    "write_scene",
]
