"""The ``cuedeck`` entry points, remembered while the installation does not change.

Finding them through :mod:`importlib.metadata` means importing it and reading the
``entry_points.txt`` of every installed distribution: at each start of ``cue``, about a
tenth of what ``cue search`` takes. What it found is remembered
(:mod:`cuedeck.system.remembered`), one file per interpreter and ``sys.path``, keyed by the
distributions on ``sys.path``: every ``.dist-info`` and ``.egg-info`` folder with its inode
and modification time. Installing, upgrading, reinstalling or removing a distribution (an
editable one too) adds, renames or replaces such a folder: the next start reads the entry
points again. Anything else written beside them (the ``__pycache__`` folder a first run
creates in ``site-packages``) changes nothing. Nothing is remembered while a distribution
changed in the last seconds, since a change in the same tick of the file system's clock
would leave its time as it was.
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


#: How the metadata :mod:`importlib.metadata` reads a distribution from is named.
METADATA_SUFFIXES = (".dist-info", ".egg-info")


def _stamp(entry: str) -> list[tuple[str, int, int]] | int | None:
    """What changes when a distribution at ``sys.path`` entry ``entry`` is installed,
    upgraded or removed: in a folder, each metadata folder's name, inode and modification
    time, sorted; a file's (a zip's) modification time; None where it is missing."""
    found = []
    try:
        with os.scandir(entry or ".") as entries:
            for item in entries:
                if item.name.endswith(METADATA_SUFFIXES):
                    stat = item.stat()
                    found.append((item.name, stat.st_ino, stat.st_mtime_ns))
    except NotADirectoryError:
        try:
            return os.stat(entry).st_mtime_ns
        except OSError:
            return None
    except OSError:
        return None
    return sorted(found)


def path_stamps() -> list[tuple[str, Any]]:
    """Every ``sys.path`` entry with its :func:`_stamp`."""
    return [(entry, _stamp(entry)) for entry in sys.path]


def _newest(stamps: list[tuple[str, Any]]) -> int:
    """The latest modification time in ``stamps`` (nanoseconds; 0 for none)."""
    times = [0]
    for _, stamp in stamps:
        if isinstance(stamp, int):
            times.append(stamp)
        elif stamp:
            times.extend(mtime for _, _, mtime in stamp)
    return max(times)


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
    """The entry points of ``group``: remembered while the distributions on ``sys.path``
    are as they were when they were read, else read now (and remembered)."""
    stamps = path_stamps()
    key = [sys.executable, group, stamps]
    # A short file name; the file holds the whole key, so two keys sharing a name only miss.
    name = f"entry-points/{zlib.crc32(json.dumps([*key[:2], sys.path]).encode()):08x}.json"
    known = recall(name, key)
    if isinstance(known, list):
        return [PluginEntry(*entry) for entry in known]
    found = _scan(group)
    if settled(_newest(stamps)):
        remember(name, key, found)
    return found
