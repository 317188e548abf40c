"""Waiting until files or sockets can be read, whatever their descriptor numbers.

``select.select`` refuses a descriptor numbered 1024 or more, and a long-lived process
(a server holding many repositories' databases) gets there; the platform's selector
(epoll, kqueue) has no such bound.
"""

from __future__ import annotations

import selectors
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from collections.abc import Sequence


class HasFileno(Protocol):
    """A file or socket: anything with a descriptor."""

    def fileno(self) -> int:
        """Its descriptor."""
        ...


Readable = TypeVar("Readable", bound="int | HasFileno")


def readable(objects: Sequence[Readable], timeout: float | None) -> list[Readable]:
    """Those of ``objects`` (files, sockets, descriptors) that can be read within
    ``timeout`` seconds (None: no limit); empty when none could."""
    with selectors.DefaultSelector() as selector:
        for index, target in enumerate(objects):
            selector.register(target, selectors.EVENT_READ, index)
        return [objects[key.data] for key, _ in selector.select(timeout)]
