"""Core's own plugin: what CueDeck registers before any installed plugin."""

from __future__ import annotations

from cuedeck.hookspecs import RegisterNamed, hookimpl
from cuedeck.tokens import EstimateCounter, O200kCounter


@hookimpl
def register_token_counters(register: RegisterNamed) -> None:
    register("estimate", EstimateCounter())
    register("o200k", O200kCounter.load())
