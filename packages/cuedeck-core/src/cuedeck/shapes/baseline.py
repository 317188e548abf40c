"""What the workspace's files were at a baseline a scene is asked about (``since``)."""

from __future__ import annotations

import attrs


@attrs.frozen
class BaselineFile:
    """A file as it was at a baseline: its text then (None when it did not exist then,
    or when ``known`` is False: it changed, but what it held is not known)."""

    text: str | None
    known: bool = True


@attrs.frozen
class Baseline:
    """What the workspace's files were at some point a scene is asked about (``since``):
    ``label`` names it (``HEAD~3 (1a2b3c4d5e6f)``, ``snapshot s8f2...``); ``files`` holds
    every file that may have changed since, by workspace-relative path (the others did
    not)."""

    label: str
    files: dict[str, BaselineFile] = attrs.field(factory=dict)
    #: The git commit the baseline is, when it is one (what a task snapshot records).
    commit: str | None = None
