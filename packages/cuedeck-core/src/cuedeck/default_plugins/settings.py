"""Core's config sections: ``[scene]``, ``[index]``, ``[tokens]``, ``[watch]``,
``[masking]``, ``[files]`` and ``[docs]``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuedeck.hookspecs import hookimpl

if TYPE_CHECKING:
    from cuedeck.hookspecs import RegisterNamed


@hookimpl
def register_settings(register: RegisterNamed) -> None:
    from cuedeck.settings import CORE_SECTIONS

    for name, settings in CORE_SECTIONS.items():
        register(name, settings)
