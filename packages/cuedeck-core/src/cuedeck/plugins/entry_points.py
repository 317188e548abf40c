"""The ``cuedeck`` entry points, remembered while the installation does not change.

Finding them through :mod:`importlib.metadata` means importing it and reading the
``entry_points.txt`` of every installed distribution: at each start of ``cue``, about a
tenth of what ``cue search`` takes. What it found is remembered
(:mod:`cuedeck.system.remembered`), one file per interpreter and ``sys.path``, with the
modification time of every ``sys.path`` entry. Installing, upgrading or removing a
distribution adds or removes a ``.dist-info`` folder (an editable install too), which
changes its folder's time: the next start reads the entry points again. Nothing is
remembered while a folder changed in the last seconds, since a change in the same tick of
the file system's clock would leave its time as it was.
"""

from __future__ import annotations

import json
import os
import sys
import time
import zlib
from typing import Any, NamedTuple

from cuedeck.system.remembered import recall, remember

#: A folder changed this recently (seconds) may change again within the same mtime.
SETTLE_SECONDS = 2.0


def settled(newest_ns: int) -> bool:
    """Whether a change at ``newest_ns`` (nanoseconds since the epoch) is old enough that
    another edit could not keep the same stat: only then is an answer keyed by stats
    remembered."""
    return time.time() - newest_ns / 1e9 > SETTLE_SECONDS


class PluginEntry(NamedTuple):
    """One entry point of the group, and the distribution that declares it."""

    name: str
    value: str  # "package.module" or "package.module:attribute"
    distribution: str | None
    version: str | None

    def load(self) -> Any:
        """The object the entry point names, imported now."""
        import importlib

        module_name, _, attributes = self.value.partition(":")
        found: Any = importlib.import_module(module_name.strip())
        for attribute in filter(None, attributes.strip().split(".")):
            found = getattr(found, attribute)
        return found


def path_stamps() -> list[tuple[str, int | None]]:
    """Every ``sys.path`` entry with its modification time (None where it is missing)."""
    stamps: list[tuple[str, int | None]] = []
    for entry in sys.path:
        try:
            stamps.append((entry, os.stat(entry or ".").st_mtime_ns))
        except OSError:
            stamps.append((entry, None))
    return stamps


def _scan(group: str) -> list[PluginEntry]:
    """The group's entry points as :mod:`importlib.metadata` finds them."""
    import importlib.metadata

    found = []
    for ep in importlib.metadata.entry_points(group=group):
        dist = ep.dist
        name, version = (dist.name, dist.version) if dist is not None else (None, None)
        found.append(PluginEntry(ep.name, ep.value, name, version))
    return found


def entry_points(group: str) -> list[PluginEntry]:
    """The entry points of ``group``: remembered while every ``sys.path`` entry is as it
    was when they were read, else read now (and remembered)."""
    stamps = path_stamps()
    key = [sys.executable, group, stamps]
    # A short file name; the file holds the whole key, so two keys sharing a name only miss.
    name = f"entry-points/{zlib.crc32(json.dumps([*key[:2], sys.path]).encode()):08x}.json"
    known = recall(name, key)
    if isinstance(known, list):
        return [PluginEntry(*entry) for entry in known]
    found = _scan(group)
    newest = max((mtime for _, mtime in stamps if mtime is not None), default=0)
    if settled(newest):
        remember(name, key, found)
    return found
