"""Core's token counters: ``estimate`` everywhere, ``o200k`` where its encoding works."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuedeck.hookspecs import hookimpl

if TYPE_CHECKING:
    from cuedeck.hookspecs import RegisterNamed


@hookimpl
def register_token_counters(register: RegisterNamed) -> None:
    from cuedeck.token_counts import EstimateCounter, O200kCounter

    register("estimate", EstimateCounter())
    register("o200k", O200kCounter.load())
