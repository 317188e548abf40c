"""Core's background process: the workspace's watcher (``cue status`` lists it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuedeck.hookspecs import hookimpl

if TYPE_CHECKING:
    from cuedeck.hookspecs import RegisterNamed


@hookimpl
def register_processes(register: RegisterNamed) -> None:
    from cuedeck.serving.background import watcher_processes

    register("watcher", watcher_processes)
