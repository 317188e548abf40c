"""Core's pruners: ``greedy`` and ``outline`` (the default)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuedeck.hookspecs import hookimpl

if TYPE_CHECKING:
    from cuedeck.hookspecs import RegisterNamed


@hookimpl
def register_pruners(register: RegisterNamed) -> None:
    from cuedeck.scene.pruners import GreedyPruner, OutlinePruner

    register("greedy", GreedyPruner())
    register("outline", OutlinePruner())
