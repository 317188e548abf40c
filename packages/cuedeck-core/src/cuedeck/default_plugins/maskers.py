"""Core's masker: ``builtin``, the rule set of :mod:`cuedeck.masking.secret_rules`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuedeck.hookspecs import hookimpl

if TYPE_CHECKING:
    from cuedeck.hookspecs import RegisterNamed


@hookimpl
def register_maskers(register: RegisterNamed) -> None:
    from cuedeck.masking.builtin import BuiltinMasker

    register("builtin", BuiltinMasker())
